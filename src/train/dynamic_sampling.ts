/**
 * DAPO's dynamic sampling (Yu et al. 2025; verl's algorithm.filter_groups, our `filter_groups`).
 * A group whose episodes all scored alike has no advantage anywhere under group normalisation, so
 * it carries no policy gradient. The source (src/rollout_sources/local.ts) plays rollouts of the
 * train manager until the step holds enough groups that did not, each rollout a new draw of
 * groups (the episode counters advance), or until filter_groups.max_num_gen_batches rollouts were
 * played; these pure functions say which groups each rollout keeps and build the step's batch
 * from them.
 *
 * The batch's rollout metrics (env/*, rollout/score/*) then describe what the step trains on; the
 * first rollout alone is the draw a run without the filter would have played, so its env/* and
 * rollout/score/* metrics stay in the log under dynamic_sampling/first/ as the policy's unbiased
 * score. time/rollout and the token counts cover every rollout played.
 */
import type { AgenticConfig } from '../config/schema';
import { rolloutMetrics } from '../rollout/metrics';
import type { Episode, RolloutBatch } from '../rollout/types';
import { groupScores, withoutGroups } from './groups';

export type FilterMetric = AgenticConfig['filter_groups']['metric'];

/** What each filter_groups.metric reads of an episode (verl's `score` is the sequence's summed score, as ours). */
const FILTER_METRICS: Record<FilterMetric, (e: Episode) => number> = {
  score: (e) => e.score,
};

/** The groups (trajGroupIds) whose episodes all have the same `metric`. */
export function constantGroups(batch: Pick<RolloutBatch, 'episodes'>, metric: FilterMetric): Set<string> {
  const constant = new Set<string>();
  for (const [group, values] of groupScores(batch, FILTER_METRICS[metric])) if (values.every((v) => v === values[0])) constant.add(group);
  return constant;
}

/** What one rollout adds to the step: its groups that did not score alike (its metrics those of the whole rollout), and how many did. */
export interface GenBatch {
  kept: RolloutBatch;
  groups: number;
  dropped: number;
}

export function genBatch(played: RolloutBatch, metric: FilterMetric): GenBatch {
  const constant = constantGroups(played, metric);
  const kept = withoutGroups(played, constant).batch;
  return { kept, groups: groupScores(kept).size, dropped: constant.size };
}

/** The metrics of the played rollout that say how the policy scores: the env's and the episode scores. */
const SCORE_METRIC = /^(env\/.+|rollout\/score\/.+)$/;

/**
 * The step's batch from the rollouts played for it, in play order: the first `wanted` kept groups
 * (fewer when the rollouts ran out), with the metrics of the header and dynamic_sampling/*.
 */
export function sampledBatch(gens: readonly GenBatch[], wanted: number): RolloutBatch {
  const episodes: RolloutBatch['episodes'] = [];
  const samples: RolloutBatch['samples'] = [];
  let taken = 0;
  for (const gen of gens) {
    const surplus = new Set([...groupScores(gen.kept).keys()].slice(Math.max(0, wanted - taken)));
    const part = withoutGroups(gen.kept, surplus).batch;
    taken += gen.groups - surplus.size;
    episodes.push(...part.episodes);
    samples.push(...part.samples);
  }
  const sum = (key: string) => gens.reduce((total, gen) => total + (gen.kept.metrics[key] ?? 0), 0);
  const first = Object.entries(gens[0]?.kept.metrics ?? {}).filter(([key]) => SCORE_METRIC.test(key));
  const metrics = {
    ...rolloutMetrics('train', episodes, { seconds: sum('time/rollout'), generatedTokens: sum('rollout/generated_tokens') }),
    ...Object.fromEntries(first.map(([key, value]) => [`dynamic_sampling/first/${key}`, value])),
    'dynamic_sampling/gen_batches': gens.length,
    'train/num_gen_batches': gens.length,
    'dynamic_sampling/kept_groups': taken,
    'dynamic_sampling/dropped_groups': gens.reduce((total, gen) => total + gen.dropped, 0),
  };
  return { mode: 'train', episodes, samples, metrics };
}

/** Whether the rollouts played so far end the step's sampling: enough kept groups, or max_num_gen_batches played (0: no cap). */
export function samplingDone(gens: readonly GenBatch[], wanted: number, maxGenBatches: number): boolean {
  const kept = gens.reduce((total, gen) => total + gen.groups, 0);
  return kept >= wanted || (maxGenBatches > 0 && gens.length >= maxGenBatches);
}
