/**
 * The groups of a played batch (episodes sharing a trajGroupId: group_size episodes from one env
 * seed) and taking some of them out of it. Every rule that drops whole groups from a step's
 * rollout selects through here (./failed_groups.ts, ./dynamic_sampling.ts, ./variance_filter.ts),
 * so the episodes, the rows and the columns that ride along with the rows leave together.
 */
import type { Episode, RolloutBatch } from '../rollout/types';
import type { PlayedStep } from './rollout_source';

/** Each group's episode scores (or another `value` of its episodes), the groups in play order (the order of their first episode). */
export function groupScores(batch: Pick<RolloutBatch, 'episodes'>, value: (e: Episode) => number = (e) => e.score): Map<string, number[]> {
  const scores = new Map<string, number[]>();
  for (const e of batch.episodes) {
    const group = scores.get(e.trajGroupId);
    if (group) group.push(value(e));
    else scores.set(e.trajGroupId, [value(e)]);
  }
  return scores;
}

/** `batch` without the episodes and rows of `groups` (trajGroupIds), and the indices of the rows kept; its metrics are left as they are. */
export function withoutGroups(batch: RolloutBatch, groups: ReadonlySet<string>): { batch: RolloutBatch; keptRows: number[] } {
  const keptRows = batch.samples.flatMap((s, i) => (groups.has(s.trajGroupId) ? [] : [i]));
  return {
    batch: { ...batch, episodes: batch.episodes.filter((e) => !groups.has(e.trajGroupId)), samples: keptRows.map((i) => batch.samples[i]!) },
    keptRows,
  };
}

/** `played` without `groups`: their episodes and rows, the rows' reference log-probs and the groups' greedy baselines. */
export function playedWithoutGroups(played: PlayedStep, groups: ReadonlySet<string>): PlayedStep {
  if (groups.size === 0) return played;
  const { batch, keptRows } = withoutGroups(played.batch, groups);
  const { refLogProbs, baselines } = played;
  return {
    batch,
    baselines: baselines ? new Map([...baselines].filter(([group]) => !groups.has(group))) : null,
    refLogProbs: refLogProbs ? keptRows.map((i) => refLogProbs[i]!) : null,
  };
}
