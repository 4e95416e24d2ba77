/**
 * RAGEN's variance filter (Wang et al. 2025; RAGEN's actor_rollout_ref.rollout.rollout_filter_ratio
 * and rollout_filter_type, our top-level keys of the same names). A group whose episodes scored
 * alike teaches nothing under group normalisation, and one whose scores spread teaches most, so
 * the step keeps the ceil(rollout_filter_ratio x groups) groups of highest (std) or lowest
 * (std_rev) standard deviation of episode scores, ties going to the group played first. It is a
 * pure function of the played batch, applied by the trainer after the rollout of every source.
 *
 * The standard deviation is the population one; RAGEN's torch.std is the sample one, which ranks
 * groups of one size the same. Rollout metrics stay those of every episode played.
 */
import type { AgenticConfig } from '../config/schema';
import { groupScores, playedWithoutGroups } from './groups';
import type { PlayedStep } from './rollout_source';

export type FilterType = AgenticConfig['rollout_filter_type'];

export interface FilteredStep {
  played: PlayedStep;
  /** rollout_filter/kept_groups, rollout_filter/score_std_kept and rollout_filter/score_std_dropped (means over the groups); none when the filter is off. */
  metrics: Record<string, number>;
}

function std(values: readonly number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length);
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/** How many of `groups` a ratio keeps: ceil(ratio x groups), read to 12 digits so that 0.7 x 10 is 7. */
export function keptGroupCount(ratio: number, groups: number): number {
  return Math.min(groups, Math.ceil(Number((ratio * groups).toPrecision(12))));
}

/** The trajGroupIds `type` keeps of groups with these score deviations (in play order), ties to the earlier group. */
export function keptByStd(stds: ReadonlyMap<string, number>, ratio: number, type: FilterType): Set<string> {
  const sign = type === 'std' ? -1 : 1;
  const ranked = [...stds.entries()].map(([group, s], order) => ({ group, s, order })).sort((a, b) => sign * (a.s - b.s) || a.order - b.order);
  return new Set(ranked.slice(0, keptGroupCount(ratio, stds.size)).map((g) => g.group));
}

export function filterByScoreStd(played: PlayedStep, ratio: number, type: FilterType): FilteredStep {
  if (ratio === 1) return { played, metrics: {} };
  const stds = new Map([...groupScores(played.batch)].map(([group, scores]) => [group, std(scores)]));
  const kept = keptByStd(stds, ratio, type);
  const dropped = new Set([...stds.keys()].filter((group) => !kept.has(group)));
  return {
    played: playedWithoutGroups(played, dropped),
    metrics: {
      'rollout_filter/kept_groups': kept.size,
      'rollout_filter/score_std_kept': mean([...kept].map((g) => stds.get(g)!)),
      'rollout_filter/score_std_dropped': mean([...dropped].map((g) => stds.get(g)!)),
    },
  };
}
