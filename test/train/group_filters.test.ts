/**
 * The pure selections that drop whole groups from a played batch: DAPO's dynamic sampling
 * (src/train/dynamic_sampling.ts: which groups scored alike, and the step's batch from several
 * rollouts) and RAGEN's variance filter (src/train/variance_filter.ts: the groups of highest or
 * lowest score spread), over the one selection helper they share (src/train/groups.ts).
 */
import { describe, expect, test } from 'bun:test';
import type { Episode, RolloutBatch, Sample } from '../../src/rollout/types';
import { constantGroups, genBatch, sampledBatch, samplingDone } from '../../src/train/dynamic_sampling';
import { groupScores, playedWithoutGroups } from '../../src/train/groups';
import type { PlayedStep } from '../../src/train/rollout_source';
import { filterByScoreStd, keptByStd, keptGroupCount } from '../../src/train/variance_filter';

/** An episode of group `group` (episode id `round`) with `score`; only what the selections and metrics read. */
function episode(group: string, envId: number, score: number): Episode {
  return {
    tag: 'T',
    trajGroupId: group,
    trajId: `${group}_${envId}`,
    envId,
    score,
    metrics: { success: score > 0 ? 1 : 0 },
    responseTokens: 4,
  } as unknown as Episode;
}

function sampleOf(e: Episode): Sample {
  return { trajGroupId: e.trajGroupId, trajId: e.trajId, score: e.score } as unknown as Sample;
}

/** A rollout of groups given as their scores, named `<prefix><i>`. */
function rollout(prefix: string, groups: number[][], seconds = 1): RolloutBatch {
  const episodes = groups.flatMap((scores, g) => scores.map((s, m) => episode(`${prefix}${g}`, g * 10 + m, s)));
  return {
    mode: 'train',
    episodes,
    samples: episodes.map(sampleOf),
    metrics: { 'rollout/score/mean': -1, 'time/rollout': seconds, 'rollout/generated_tokens': 100 },
  };
}

const groupsOf = (batch: RolloutBatch) => [...groupScores(batch).keys()];

describe('groups', () => {
  test('groupScores lists each group once, in the order of its first episode', () => {
    const batch = rollout('g', [[1, 0], [2]]);
    batch.episodes.reverse();
    expect([...groupScores(batch)]).toEqual([
      ['g1', [2]],
      ['g0', [0, 1]],
    ]);
  });

  test("playedWithoutGroups takes a group's episodes, rows, reference log-probs and baseline together", () => {
    const batch = rollout('g', [
      [1, 0],
      [2, 2],
      [3, 1],
    ]);
    const played: PlayedStep = {
      batch,
      baselines: new Map([
        ['g0', 0.5],
        ['g1', 2],
        ['g2', 1],
      ]),
      refLogProbs: batch.samples.map((_, i) => Float32Array.of(i)),
    };
    const kept = playedWithoutGroups(played, new Set(['g1']));
    expect(groupsOf(kept.batch)).toEqual(['g0', 'g2']);
    expect(kept.batch.samples.map((s) => s.trajId)).toEqual(['g0_0', 'g0_1', 'g2_20', 'g2_21']);
    expect(kept.refLogProbs).toEqual([0, 1, 4, 5].map((i) => Float32Array.of(i)));
    expect([...kept.baselines!.keys()]).toEqual(['g0', 'g2']);
    expect(kept.batch.metrics).toBe(batch.metrics);
    expect(playedWithoutGroups(played, new Set())).toBe(played);
  });
});

describe("DAPO's dynamic sampling", () => {
  test('a group is constant when every episode has the same score', () => {
    expect(
      constantGroups(
        rollout('g', [
          [1, 1],
          [1, 0],
          [0, 0, 0],
          [0.5, 0.5000001],
        ]),
        'score',
      ),
    ).toEqual(new Set(['g0', 'g2']));
  });

  test("a rollout's part keeps its groups that did not score alike, and counts those that did", () => {
    const gen = genBatch(
      rollout('a', [
        [1, 1],
        [1, 0],
        [0, 0],
      ]),
      'score',
    );
    expect(groupsOf(gen.kept)).toEqual(['a1']);
    expect(gen.kept.samples.map((s) => s.trajGroupId)).toEqual(['a1', 'a1']);
    expect({ groups: gen.groups, dropped: gen.dropped }).toEqual({ groups: 1, dropped: 2 });
  });

  test('the step takes the first wanted groups in play order, trimming the last rollout', () => {
    const gens = [
      genBatch(
        rollout(
          'a',
          [
            [1, 1],
            [1, 0],
            [0, 0],
          ],
          2,
        ),
        'score',
      ),
      genBatch(
        rollout(
          'b',
          [
            [0, 1],
            [1, 1],
            [0, 1],
            [1, 0],
          ],
          3,
        ),
        'score',
      ),
    ];
    expect(samplingDone(gens.slice(0, 1), 3, 10)).toBe(false);
    expect(samplingDone(gens, 3, 10)).toBe(true);
    const batch = sampledBatch(gens, 3);
    expect(groupsOf(batch)).toEqual(['a1', 'b0', 'b2']);
    expect(batch.samples.map((s) => s.trajGroupId)).toEqual(['a1', 'a1', 'b0', 'b0', 'b2', 'b2']);
    expect(batch.metrics['dynamic_sampling/gen_batches']).toBe(2);
    expect(batch.metrics['train/num_gen_batches']).toBe(2);
    expect(batch.metrics['dynamic_sampling/kept_groups']).toBe(3);
    expect(batch.metrics['dynamic_sampling/dropped_groups']).toBe(3);
    // the rollout metrics are those of the kept episodes, over the time of every rollout
    expect(batch.metrics['rollout/score/mean']).toBe(0.5);
    expect(batch.metrics['env/T/success']).toBe(0.5);
    expect(batch.metrics['time/rollout']).toBe(5);
    expect(batch.metrics['rollout/generated_tokens']).toBe(200);
    // the first rollout's own score metrics, as played
    expect(batch.metrics['dynamic_sampling/first/rollout/score/mean']).toBe(-1);
    expect(batch.metrics['dynamic_sampling/first/time/rollout']).toBeUndefined();
  });

  test('at the cap the step keeps what it has, possibly nothing', () => {
    const gens = [
      genBatch(
        rollout('a', [
          [1, 1],
          [0, 0],
        ]),
        'score',
      ),
      genBatch(
        rollout('b', [
          [1, 0],
          [0, 0],
        ]),
        'score',
      ),
    ];
    expect(samplingDone(gens.slice(0, 1), 2, 1)).toBe(true);
    expect(samplingDone(gens, 2, 0)).toBe(false); // 0: no cap
    expect(groupsOf(sampledBatch(gens, 2))).toEqual(['b0']);
    const none = sampledBatch(gens.slice(0, 1), 2);
    expect(none.samples).toEqual([]);
    expect(none.metrics['dynamic_sampling/kept_groups']).toBe(0);
  });
});

describe("RAGEN's variance filter", () => {
  test('keeps ceil(ratio x groups), at least one', () => {
    expect([0.7, 0.5, 0.25, 0.01, 1].map((r) => keptGroupCount(r, 10))).toEqual([7, 5, 3, 1, 10]);
    expect(keptGroupCount(0.5, 3)).toBe(2);
  });

  test('std keeps the highest spreads, std_rev the lowest; ties go to the group played first', () => {
    const stds = new Map([
      ['g0', 0],
      ['g1', 0.5],
      ['g2', 0.5],
      ['g3', 0.2],
      ['g4', 0],
    ]);
    expect([...keptByStd(stds, 0.4, 'std')]).toEqual(['g1', 'g2']);
    expect([...keptByStd(stds, 0.6, 'std')]).toEqual(['g1', 'g2', 'g3']);
    expect([...keptByStd(stds, 0.4, 'std_rev')]).toEqual(['g0', 'g4']);
    expect([...keptByStd(stds, 0.2, 'std_rev')]).toEqual(['g0']);
  });

  test('the kept groups stay in play order, with their rows, and the metrics say what was kept', () => {
    const batch = rollout('g', [
      [0, 0],
      [0, 1],
      [1, 1],
      [0, 0.5],
    ]);
    const { played, metrics } = filterByScoreStd({ batch, baselines: null, refLogProbs: null }, 0.5, 'std');
    expect(groupsOf(played.batch)).toEqual(['g1', 'g3']);
    expect(played.batch.samples.map((s) => s.trajGroupId)).toEqual(['g1', 'g1', 'g3', 'g3']);
    expect(metrics).toEqual({ 'rollout_filter/kept_groups': 2, 'rollout_filter/score_std_kept': 0.375, 'rollout_filter/score_std_dropped': 0 });
  });

  test('ratio 1 is off: the batch as played, no metrics', () => {
    const played: PlayedStep = {
      batch: rollout('g', [
        [0, 0],
        [0, 1],
      ]),
      baselines: null,
      refLogProbs: null,
    };
    expect(filterByScoreStd(played, 1, 'std')).toEqual({ played, metrics: {} });
  });
});
