/**
 * Normalisation of response-level rewards (ROLL's agentic_reward_norm): scores are grouped by a
 * key (`traj_group_id` for GRPO, `batch` for one group) and shifted, or shifted and scaled, by
 * statistics of their group or of the whole batch.
 *
 * Pitfalls kept on purpose, because ROLL users expect its numbers: the std is unbiased (n - 1) and
 * 1e-6 is added to it, not to the variance; a group of one, or one whose std is at most 1e-6,
 * normalises to 0 under mean_std (verl's GRPO would keep a lone sample's raw score instead).
 */
import { groupIndices, mean, std } from './stats';

export const NORMALIZATION_METHODS = ['identity', 'mean', 'mean_std', 'asym_clip'] as const;
export type NormalizationMethod = (typeof NORMALIZATION_METHODS)[number];

/** Keys a batch can be grouped by; `batch` puts every row in one group. */
export const NORMALIZATION_GROUPINGS = ['traj_group_id', 'tags', 'group_ids', 'traj_id', 'batch'] as const;
export type NormalizationGrouping = (typeof NORMALIZATION_GROUPINGS)[number];

/** Where the mean subtracted and the std divided by come from; null: none (ROLL's norm_*_type). */
export const NORMALIZATION_STATISTICS = ['batch', 'group'] as const;
export type NormalizationStatistic = (typeof NORMALIZATION_STATISTICS)[number] | null;

export interface NormalizationOptions {
  method: NormalizationMethod;
  /** true when the grouping is `batch`: the mean and std are the batch's. */
  batchStatistics: boolean;
  /** ROLL's norm_mean_type / norm_std_type: given, they replace what `method` implies. */
  statistics?: { mean: NormalizationStatistic; std: NormalizationStatistic } | null;
}

const STD_FLOOR = 1e-6;

/** What a method means in ROLL's terms: identity (none, none), mean (G, none), mean_std and asym_clip (G, G). */
function methodStatistics(method: NormalizationMethod, batchStatistics: boolean): { mean: NormalizationStatistic; std: NormalizationStatistic } {
  const g = batchStatistics ? 'batch' : 'group';
  if (method === 'identity') return { mean: null, std: null };
  return { mean: g, std: method === 'mean' ? null : g };
}

/** Normalised copies of `values`; `keys[i]` is row i's group. */
export function normalizeRewards(values: readonly number[], keys: readonly string[], options: NormalizationOptions): number[] {
  const use = options.statistics ?? methodStatistics(options.method, options.batchStatistics);
  if (use.mean === null && use.std === null) return [...values];
  const batchMean = mean(values);
  const batchStd = std(values);
  const out = new Array<number>(values.length).fill(0);
  for (const members of groupIndices(keys).values()) {
    const group = members.map((i) => values[i]!);
    const center = use.mean === 'batch' ? batchMean : use.mean === 'group' ? mean(group) : 0;
    if (use.std === null) {
      for (const i of members) out[i] = values[i]! - center;
      continue;
    }
    const spread = use.std === 'batch' ? batchStd : std(group);
    const usable = members.length > 1 && Math.abs(spread) > STD_FLOOR;
    for (const i of members) out[i] = usable ? (values[i]! - center) / (spread + STD_FLOOR) : 0;
  }
  return out;
}

/** Clamps to [-clip, clip]; returns the values and the fraction that were clipped. */
export function clipValues(values: readonly number[], clip: number | null): { values: number[]; clippedFraction: number } {
  if (clip === null) return { values: [...values], clippedFraction: 0 };
  let clipped = 0;
  const out = values.map((v) => {
    if (Math.abs(v) > clip) clipped++;
    return Math.max(-clip, Math.min(clip, v));
  });
  return { values: out, clippedFraction: values.length === 0 ? 0 : clipped / values.length };
}

/** Discounted returns of step rewards within each trajectory: G_t = r_t + gamma * G_{t+1}. */
export function discountedStepReturns(rewards: readonly number[], trajIds: readonly string[], steps: readonly number[], gamma: number): number[] {
  const out = new Array<number>(rewards.length).fill(0);
  for (const members of groupIndices(trajIds).values()) {
    const ordered = [...members].sort((a, b) => steps[a]! - steps[b]!);
    let running = 0;
    for (let k = ordered.length - 1; k >= 0; k--) {
      const i = ordered[k]!;
      running = rewards[i]! + gamma * running;
      out[i] = running;
    }
  }
  return out;
}
