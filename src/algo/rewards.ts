/**
 * From episode outcomes to token rewards, in ROLL's two stages:
 *
 *   response rewards  one number per row, by the estimator's own function (./estimators.ts):
 *                     the normalised score (normalizedScores), the raw score for estimators with
 *                     their own baseline (rawScores), the normalised discounted step return
 *                     (normalizedStepReturns), or GiGPO's (./gigpo.ts); then reward_clip
 *   tokenRewards      that number on the row's last sampled token, minus beta x KL on every sampled
 *                     token when add_token_level_kl, optionally whitened (whiten_rewards)
 */
import { klPenalty, type KlPenalty } from './kl';
import { discountedStepReturns, normalizeRewards, type NormalizationGrouping, type NormalizationMethod, type NormalizationOptions } from './reward_norm';
import { lastMasked, maskedCount, maskedWhiten, type Masks, type Rows } from './stats';

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
  /** A seated env's row: its seat's name (creditGroup); absent or null for one agent facing an env. */
  seat?: string | null;
}

/** reward_normalization and the step-reward settings, as the response-reward functions read them. */
export interface ResponseRewardSettings {
  grouping: NormalizationGrouping;
  method: NormalizationMethod;
  /** ROLL's norm_mean_type / norm_std_type, when given. */
  statistics?: NormalizationOptions['statistics'];
  stepRewardGamma: number;
  episodeRewardWeight: number;
  stepRewardWeight: number;
  /** rae: each role's running baseline before this step (./role_baselines.ts), by roleKey. */
  roleBaselines?: Readonly<Record<string, number>>;
}

export interface ResponseRewards {
  rewards: number[];
  /** Metrics of the stage (critic/reward_clip_frac, GiGPO's parts and anchor-group sizes). */
  metrics: Record<string, number>;
}

/** One estimator's response-level reward of each row, before reward_clip. */
export type ResponseRewardFunction = (rows: readonly RewardRow[], o: ResponseRewardSettings) => ResponseRewards;

/**
 * The group a row is compared within: its trajectory group, and for a seated env's row its seat
 * too (`#O`), so GRPO, GiGPO and RLOO never compare one seat's play with another's (in a zero-sum
 * game self-play's two seats would cancel out). One agent facing an env: the group itself.
 */
export function creditGroup(row: Pick<RewardRow, 'trajGroupId' | 'seat'>): string {
  return row.seat ? `${row.trajGroupId}#${row.seat}` : row.trajGroupId;
}

/** A seated row's key with its seat (creditGroup's rule), one agent's unchanged. */
const seated = (key: string, row: RewardRow) => (row.seat ? `${key}#${row.seat}` : key);

export function groupKey(row: RewardRow, grouping: NormalizationGrouping): string {
  switch (grouping) {
    case 'traj_group_id':
      return creditGroup(row);
    case 'tags':
      return seated(row.tag, row);
    case 'group_ids':
      return seated(`${row.tag}/${row.groupId}`, row);
    case 'traj_id':
      return row.trajId;
    case 'batch':
      return '';
  }
}

/** Normalises values by reward_normalization's method; `keys` are the groups, `batchStatistics` the batch's. */
export function normalizeBy(o: ResponseRewardSettings, values: readonly number[], keys: readonly string[], batchStatistics: boolean): number[] {
  return normalizeRewards(values, keys, { method: o.method, batchStatistics, statistics: o.statistics });
}

/** Each row's outcome: a step row carries its episode's, like verl-agent's episode reward manager. */
export const outcomeOf = (r: RewardRow) => (r.step === null ? r.score : r.episodeScore);
export const outcomes = (rows: readonly RewardRow[]) => rows.map(outcomeOf);

/** The outcome, normalised within its reward_normalization group (gae, reinforce, grpo, agentic_reinforce). */
export const normalizedScores: ResponseRewardFunction = (rows, o) => ({
  rewards: normalizeBy(
    o,
    outcomes(rows),
    rows.map((row) => groupKey(row, o.grouping)),
    o.grouping === 'batch',
  ),
  metrics: {},
});

/** The raw outcome: estimators with a baseline of their own (reinforce_plus_plus, rloo, remax). */
export const rawScores: ResponseRewardFunction = (rows) => ({ rewards: outcomes(rows), metrics: {} });

/** Each step's discounted return within its trajectory (step_reward_gamma). */
export function stepReturns(rows: readonly RewardRow[], o: ResponseRewardSettings): number[] {
  return discountedStepReturns(
    rows.map((r) => r.score),
    rows.map((r) => r.trajId),
    rows.map((r) => r.step ?? 0),
    o.stepRewardGamma,
  );
}

/** step_reinforce: the discounted step return, normalised within its group. */
export const normalizedStepReturns: ResponseRewardFunction = (rows, o) => ({
  rewards: normalizeBy(
    o,
    stepReturns(rows, o),
    rows.map((row) => groupKey(row, o.grouping)),
    o.grouping === 'batch',
  ),
  metrics: {},
});

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
  /** Mean over the rows with a sampled token of each row's mean KL: what the adaptive controller tracks (critic/kl). */
  meanKl: number;
  /** The rows that mean is over: those with a sampled token, the rows the controller counts. */
  klRows: number;
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
  return { tokenRewards: token, kl, meanKl: meanRowKl(kl, masks), klRows: masks.filter((mask) => mask.includes(1)).length };
}

/** The KL penalty of the sampling policy against the reference on each sampled token (0 elsewhere, and without a reference). */
export function tokenKl(masks: Masks, oldLogProbs: Rows, refLogProbs: Rows | null, penalty: KlPenalty): Float32Array[] {
  return masks.map((mask, i) => Float32Array.from(mask, (m, t) => (m && refLogProbs ? klPenalty(oldLogProbs[i]![t]!, refLogProbs[i]![t]!, penalty) : 0)));
}

/**
 * Mean over rows of each row's mean KL on its sampled tokens (critic/kl). A row without one (an
 * episode that never got to answer) has no KL, rather than a KL of 0, and is left out.
 */
export function meanRowKl(kl: Rows, masks: Masks): number {
  const rowMeans = kl.flatMap((row, i) => {
    const n = masks[i]!.reduce((a, b) => a + b, 0);
    return n === 0 ? [] : [row.reduce((a, b) => a + b, 0) / n];
  });
  return rowMeans.length === 0 ? 0 : rowMeans.reduce((a, b) => a + b, 0) / rowMeans.length;
}
