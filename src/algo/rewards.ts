/**
 * From episode outcomes to token rewards, in ROLL's two stages:
 *
 *   responseRewards  one number per row: the normalised score (gae, reinforce, grpo,
 *                    agentic_reinforce), the normalised discounted step return (step_reinforce),
 *                    or GiGPO's episode advantage plus its step advantage over anchor states;
 *                    then reward_clip
 *   tokenRewards     that number on the row's last sampled token, minus beta x KL on every sampled
 *                    token when add_token_level_kl, optionally whitened (whiten_rewards)
 */
import type { AdvantageEstimatorName } from './advantage';
import { OWN_BASELINE_ESTIMATORS } from './advantage';
import { klPenalty, type KlPenalty } from './kl';
import {
  clipValues,
  discountedStepReturns,
  normalizeRewards,
  type NormalizationGrouping,
  type NormalizationMethod,
  type NormalizationOptions,
} from './reward_norm';
import { lastMasked, maskedCount, maskedWhiten, summaryStats, type Masks, type Rows } from './stats';

/** What the reward stages read from a training row. */
export interface RewardRow {
  trajGroupId: string;
  trajId: string;
  tag: string;
  groupId: number;
  /** Step-wise rows: the step index; trajectory rows: null. */
  step: number | null;
  /** Trajectory rows: the episode score; step rows: the step's reward. */
  score: number;
  episodeScore: number;
  /** Step rows: the anchor state (hash of the observation answered). */
  stateHash: string | null;
}

export interface ResponseRewardOptions {
  estimator: AdvantageEstimatorName;
  grouping: NormalizationGrouping;
  method: NormalizationMethod;
  /** ROLL's norm_mean_type / norm_std_type, when given. */
  statistics?: NormalizationOptions['statistics'];
  stepRewardGamma: number;
  episodeRewardWeight: number;
  stepRewardWeight: number;
  rewardClip: number | null;
}

export interface ResponseRewards {
  rewards: number[];
  /** Metrics of the stage (critic/reward_clip_frac, GiGPO's parts and anchor-group sizes). */
  metrics: Record<string, number>;
}

function groupKey(row: RewardRow, grouping: NormalizationGrouping): string {
  switch (grouping) {
    case 'traj_group_id':
      return row.trajGroupId;
    case 'tags':
      return row.tag;
    case 'group_ids':
      return `${row.tag}/${row.groupId}`;
    case 'traj_id':
      return row.trajId;
    case 'batch':
      return '';
  }
}

export function responseRewards(rows: readonly RewardRow[], o: ResponseRewardOptions): ResponseRewards {
  const norm = (values: readonly number[], keys: readonly string[], batchStatistics: boolean) =>
    normalizeRewards(values, keys, { method: o.method, batchStatistics, statistics: o.statistics });
  const keys = rows.map((row) => groupKey(row, o.grouping));
  const byBatch = o.grouping === 'batch';
  const metrics: Record<string, number> = {};
  let rewards: number[];

  if (o.estimator === 'gigpo' || o.estimator === 'step_reinforce') {
    const stepReturns = discountedStepReturns(
      rows.map((r) => r.score),
      rows.map((r) => r.trajId),
      rows.map((r) => r.step ?? 0),
      o.stepRewardGamma,
    );
    if (o.estimator === 'step_reinforce') {
      rewards = norm(stepReturns, keys, byBatch);
    } else {
      // Episode part over step rows (so a longer trajectory weighs more, as in ROLL); step part
      // over anchor states. Anchors are grouped within their trajectory group: ROLL keys them by
      // the observation hash alone, which merges equal observations of different seeds.
      const episodePart = norm(
        rows.map((r) => r.episodeScore),
        keys,
        byBatch,
      );
      const anchors = rows.map((r) => `${r.trajGroupId}\u0000${r.stateHash ?? r.trajId}`);
      const stepPart = norm(stepReturns, anchors, false);
      rewards = episodePart.map((e, i) => o.episodeRewardWeight * e + o.stepRewardWeight * stepPart[i]!);
      Object.assign(metrics, summaryStats('critic/episode_rewards_norm', episodePart), summaryStats('critic/step_rewards_norm', stepPart));
      const sizes = [...countBy(anchors).values()];
      Object.assign(metrics, summaryStats('system/state_batch_size', sizes));
    }
  } else {
    // a step row carries its episode's outcome, like verl-agent's episode reward manager
    const scores = rows.map((r) => (r.step === null ? r.score : r.episodeScore));
    rewards = OWN_BASELINE_ESTIMATORS.includes(o.estimator) ? scores : norm(scores, keys, byBatch);
  }
  const clipped = clipValues(rewards, o.rewardClip);
  if (o.rewardClip !== null) metrics['critic/reward_clip_frac'] = clipped.clippedFraction;
  return { rewards: clipped.values, metrics };
}

function countBy(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

export interface TokenRewardOptions {
  /** Subtract beta x KL(old || ref) on every sampled token. */
  addTokenLevelKl: boolean;
  klCoef: number;
  klPenalty: KlPenalty;
  whitenRewards: boolean;
}

export interface TokenRewards {
  tokenRewards: Float32Array[];
  /** Per-token KL of the sampling policy against the reference, on the sampled tokens. */
  kl: Float32Array[];
  /** Mean over rows of each row's mean KL: what the adaptive controller tracks (critic/kl). */
  meanKl: number;
}

/**
 * Token rewards: each row's response reward on its last sampled token, minus the KL penalty when
 * asked. `refLogProbs` null means there is no reference; the KL is then 0.
 */
export function tokenRewards(rewards: readonly number[], masks: Masks, oldLogProbs: Rows, refLogProbs: Rows | null, o: TokenRewardOptions): TokenRewards {
  const kl = tokenKl(masks, oldLogProbs, refLogProbs, o.klPenalty);
  let token = masks.map((mask, i) => {
    const out = new Float32Array(mask.length);
    const last = lastMasked(mask);
    if (last >= 0) out[last] = rewards[i]!;
    if (o.addTokenLevelKl) for (let t = 0; t < mask.length; t++) if (mask[t]) out[t]! -= o.klCoef * kl[i]![t]!;
    return out;
  });
  if (o.whitenRewards && maskedCount(masks) > 1) {
    token = maskedWhiten(token, masks).map((row, i) => row.map((x, t) => x * masks[i]![t]!));
  }
  return { tokenRewards: token, kl, meanKl: meanRowKl(kl, masks) };
}

/** The KL penalty of the sampling policy against the reference on each sampled token (0 elsewhere, and without a reference). */
export function tokenKl(masks: Masks, oldLogProbs: Rows, refLogProbs: Rows | null, penalty: KlPenalty): Float32Array[] {
  return masks.map((mask, i) => Float32Array.from(mask, (m, t) => (m && refLogProbs ? klPenalty(oldLogProbs[i]![t]!, refLogProbs[i]![t]!, penalty) : 0)));
}

/** Mean over rows of each row's mean KL on its sampled tokens (critic/kl). */
export function meanRowKl(kl: Rows, masks: Masks): number {
  const rowMeans = kl.map((row, i) => {
    const n = masks[i]!.reduce((a, b) => a + b, 0);
    return n === 0 ? 0 : row.reduce((a, b) => a + b, 0) / n;
  });
  return rowMeans.length === 0 ? 0 : rowMeans.reduce((a, b) => a + b, 0) / rowMeans.length;
}
