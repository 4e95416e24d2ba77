/**
 * Advantage functions, one pure function per estimator (./estimators.ts maps `adv_estimator` names
 * to them, with each one's response reward and needs). Each takes token-level rewards
 * (the response-level reward on the row's last sampled token, minus any KL penalty) and returns
 * advantages and returns per token. Rows are host arrays aligned with the token ids, so index t is
 * token t: there is no shift to get wrong here (the trainer shifts once, when it scores tokens).
 *
 * ROLL's agentic estimators (gae, reinforce, grpo, gigpo, step_reinforce, agentic_reinforce) take
 * rewards already normalised by `reward_normalization`; in ROLL, grpo and reinforce differ only by
 * that config, and so they do here. verl's estimators (reinforce_plus_plus, rloo, remax) bring
 * their own baselines and take raw scores.
 */
import { groupIndices, maskedCount, maskedWhiten, type Masks, type Rows } from './stats';

export interface AdvantageInput {
  masks: Masks;
  tokenRewards: Rows;
  /** The critic's value of each token's state (gae). */
  values: Rows | null;
  /** The group of each row (traj_group_id), for estimators with a group baseline. */
  groups: readonly string[];
  /** The score of a greedy rollout of each row's group (remax). */
  baselines: readonly number[] | null;
}

export interface AdvantageOptions {
  gamma: number;
  lambd: number;
}

export interface AdvantageResult {
  advantages: Float32Array[];
  returns: Float32Array[];
}

export type AdvantageEstimator = (input: AdvantageInput, options: AdvantageOptions) => AdvantageResult;

const zerosLike = (rows: Rows) => rows.map((row) => new Float32Array(row.length));

/**
 * GAE over the sampled tokens. Observation tokens between turns are not decisions: they carry the
 * next value and the running advantage through unchanged (verl's multi-turn form), so a long tool
 * output does not decay the credit of earlier turns.
 */
export const gae: AdvantageEstimator = ({ masks, tokenRewards, values }, { gamma, lambd }) => {
  if (!values) throw new Error('gae needs the critic values');
  const advantages = zerosLike(tokenRewards);
  const returns = zerosLike(tokenRewards);
  tokenRewards.forEach((rewards, i) => {
    const mask = masks[i]!;
    const value = values[i]!;
    let nextValue = 0;
    let running = 0;
    for (let t = rewards.length - 1; t >= 0; t--) {
      if (!mask[t]) {
        advantages[i]![t] = running;
        continue;
      }
      const delta = rewards[t]! + gamma * nextValue - value[t]!;
      running = delta + gamma * lambd * running;
      nextValue = value[t]!;
      advantages[i]![t] = running;
      returns[i]![t] = running + value[t]!;
    }
  });
  return { advantages, returns };
};

/** A_t = G_t = sum over k >= t of gamma^(k-t) r_k, over the whole row (ROLL's reinforce and grpo). */
export const returnsToGo: AdvantageEstimator = ({ tokenRewards }, { gamma }) => {
  const returns = tokenRewards.map((rewards) => {
    const out = new Float32Array(rewards.length);
    let running = 0;
    for (let t = rewards.length - 1; t >= 0; t--) out[t] = running = rewards[t]! + gamma * running;
    return out;
  });
  return { advantages: returns.map((r) => r.slice()), returns };
};

/**
 * ROLL's agentic_reinforce: each turn's response (a run of sampled tokens) gets one value, the
 * reward on its last token plus gamma times the next turn's value, so gamma discounts per turn.
 */
export const agenticReinforce: AdvantageEstimator = ({ masks, tokenRewards }, { gamma }) => {
  const advantages = tokenRewards.map((rewards, i) => {
    const mask = masks[i]!;
    const out = new Float32Array(rewards.length);
    let next = 0;
    let t = rewards.length - 1;
    while (t >= 0) {
      if (!mask[t]) {
        t--;
        continue;
      }
      const end = t;
      while (t >= 0 && mask[t]) t--;
      next = rewards[end]! + gamma * next;
      out.fill(next, t + 1, end + 1);
    }
    return out;
  });
  return { advantages, returns: advantages.map((a) => a.slice()) };
};

/**
 * REINFORCE++: discounted returns, whitened over every sampled token of the batch. The running
 * return is not reset at observation tokens (AgentFly's fork): verl's reset, meant for one
 * response per row, would cut the earlier turns of a multi-turn row off from the final reward.
 */
export const reinforcePlusPlus: AdvantageEstimator = (input, options) => {
  const { returns } = returnsToGo(input, options);
  // a batch with at most one sampled token has no spread to whiten by (verl would fail here)
  const advantages = maskedCount(input.masks) > 1 ? maskedWhiten(returns, input.masks) : returns.map((r) => r.slice());
  advantages.forEach((row, i) => row.forEach((_, t) => !input.masks[i]![t] && (row[t] = 0)));
  return { advantages, returns };
};

const rowScore = (rewards: Float32Array) => rewards.reduce((a, b) => a + b, 0);
const broadcast = (masks: Masks, values: readonly number[]) => masks.map((mask, i) => Float32Array.from(mask, (m) => m * values[i]!));

/** RLOO: a row's score minus the mean of the other rows of its group; a lone row keeps its score. */
export const rloo: AdvantageEstimator = ({ masks, tokenRewards, groups }) => {
  const scores = tokenRewards.map(rowScore);
  const out = new Array<number>(scores.length).fill(0);
  for (const members of groupIndices(groups).values()) {
    const n = members.length;
    const groupMean = members.reduce((a, i) => a + scores[i]!, 0) / n;
    for (const i of members) out[i] = n > 1 ? (scores[i]! * n) / (n - 1) - (groupMean * n) / (n - 1) : scores[i]!;
  }
  const advantages = broadcast(masks, out);
  return { advantages, returns: advantages.map((a) => a.slice()) };
};

/** ReMax: reward-to-go minus the score of a greedy rollout of the same group. */
export const remax: AdvantageEstimator = ({ masks, tokenRewards, baselines }) => {
  if (!baselines) throw new Error('remax needs the greedy baselines');
  const returns = tokenRewards.map((rewards, i) => {
    const mask = masks[i]!;
    const out = new Float32Array(rewards.length);
    let running = 0;
    for (let t = rewards.length - 1; t >= 0; t--) out[t] = running += rewards[t]! * mask[t]!;
    return out;
  });
  const advantages = returns.map((row, i) => row.map((g, t) => g - baselines[i]! * masks[i]![t]!));
  return { advantages, returns };
};

export interface FinishOptions {
  whitenAdvantages: boolean;
  advantageClip: number | null;
}

/**
 * ROLL's last touches: whiten over all sampled tokens of the batch (skipped when there is at most
 * one), zero everything off the mask, clip to ±advantage_clip. Returns new rows and the fraction
 * of sampled tokens that were clipped.
 */
export function finishAdvantages(advantages: Rows, masks: Masks, o: FinishOptions): { advantages: Float32Array[]; clippedFraction: number } {
  let total = 0;
  for (const mask of masks) for (const m of mask) total += m;
  const whitened = o.whitenAdvantages && total > 1 ? maskedWhiten(advantages, masks) : advantages.map((a) => a.slice());
  let clipped = 0;
  const out = whitened.map((row, i) =>
    row.map((a, t) => {
      if (!masks[i]![t]) return 0;
      if (o.advantageClip === null) return a;
      if (Math.abs(a) > o.advantageClip) clipped++;
      return Math.max(-o.advantageClip, Math.min(o.advantageClip, a));
    }),
  );
  return { advantages: out, clippedFraction: total === 0 ? 0 : clipped / total };
}

/**
 * Whether each row has no advantage on any sampled token: a row the policy gradient learns
 * nothing from (every member of its group, or of its anchor state, scored alike).
 */
export function zeroAdvantageRows(advantages: Rows, masks: Masks): boolean[] {
  return advantages.map((row, i) => row.every((a, t) => a === 0 || !masks[i]![t]));
}

/** The share of rows with no advantage on any sampled token (zeroAdvantageRows). */
export function zeroAdvantageFraction(advantages: Rows, masks: Masks): number {
  if (advantages.length === 0) return 0;
  return zeroAdvantageRows(advantages, masks).filter(Boolean).length / advantages.length;
}
