/**
 * The actor's and the critic's losses on a micro-batch, as tfjs scalars with gradients.
 *
 * All inputs are [rows, positions] and already shifted so that position j scores the token the
 * model predicts there. A mini-batch is split into micro-batches whose losses are summed, so each
 * micro-batch divides by the whole mini-batch's counts (`LossNorms`): the sum of the micro-batch
 * losses is then exactly the mini-batch loss, however the rows were split (ROLL's global
 * normalisation).
 *
 * The actor's policy loss is one of PG_VARIANTS, keyed by actor_train.pg_variant (ROLL's names);
 * the KL and entropy terms are added to whichever it is.
 */
import { tf } from '../engine/tf';
import { klPenaltyTensor } from './kl';
import type { KlPenalty, LossAggMode, PgVariantName } from './names';

export { LOSS_AGG_MODES, type LossAggMode, type PgVariantName } from './names';

export interface LossNorms {
  /** Sampled tokens in the mini-batch. */
  tokens: number;
  /** Rows of the mini-batch with at least one sampled token. */
  sequences: number;
  /**
   * The constant seq-mean-token-sum-norm divides by (Dr. GRPO's): sequence_length times the
   * micro-batches per optimizer step, pinned so it never depends on how rows were padded.
   */
  sumNormScale: number;
}

/**
 * token-mean               sum of token losses / tokens
 * seq-mean-token-sum       sum over rows of (sum of the row's token losses) / sequences
 * seq-mean-token-mean      sum over rows of (mean of the row's token losses) / sequences
 * seq-mean-token-sum-norm  sum of token losses / sumNormScale
 */
export function aggLoss(loss: tf.Tensor, mask: tf.Tensor, mode: LossAggMode, norms: LossNorms): tf.Scalar {
  return tf.tidy(() => {
    const masked = tf.mul(loss, mask);
    switch (mode) {
      case 'token-mean':
        return tf.div(tf.sum(masked), Math.max(norms.tokens, 1));
      case 'seq-mean-token-sum':
        return tf.div(tf.sum(masked), Math.max(norms.sequences, 1));
      case 'seq-mean-token-mean': {
        const perRow = tf.div(tf.sum(masked, -1), tf.add(tf.sum(mask, -1), 1e-8));
        return tf.div(tf.sum(perRow), Math.max(norms.sequences, 1));
      }
      case 'seq-mean-token-sum-norm':
        return tf.div(tf.sum(masked), norms.sumNormScale);
    }
  }) as tf.Scalar;
}

export interface PolicyLossOptions {
  clipLow: number;
  clipHigh: number;
  /** ROLL's dual clip bounds the loss of a negative advantage by c x |A|, c = 1 + 2 x pg_clip; null turns it off. */
  dualClip: number | null;
  aggMode: LossAggMode;
  /** topr: the weights of the positive and the negative rows' terms (topr_positive_weight, topr_negative_weight). */
  topr: { positiveWeight: number; negativeWeight: number };
}

/** One micro-batch's inputs, [rows, positions] (scores [rows, 1]). */
export interface PolicyLossInput {
  logProbs: tf.Tensor;
  oldLogProbs: tf.Tensor;
  advantages: tf.Tensor;
  mask: tf.Tensor;
  /** Importance weights (constants) that scale each token's term before aggregation; null: none. */
  weights: tf.Tensor | null;
  /** Each row's episode score, for the variants that read it (`scores: true`); else null. */
  scores: tf.Tensor | null;
}

export interface PolicyLoss {
  loss: tf.Scalar;
  stats: PolicyStats;
}

export type PolicyLossFn = (input: PolicyLossInput, o: PolicyLossOptions, norms: LossNorms) => PolicyLoss;

/**
 * The statistics every variant reports, over the sampled tokens: the sums of ratio, approxkl
 * (d^2 / 2) and policykl (d), d the log-ratio, and the ratio's max and min.
 */
export const COMMON_POLICY_STAT_NAMES = ['ratio', 'approxkl', 'policykl', 'ratio_max', 'ratio_min'] as const;
type CommonPolicyStat = (typeof COMMON_POLICY_STAT_NAMES)[number];

/** A policy loss's statistics by name: the common ones, then the sums of the variant's own (PgVariant.stats), in its order. */
export type PolicyStats = Record<CommonPolicyStat, tf.Scalar> & Record<string, tf.Scalar>;

/** The log-ratio log p - log p_old, clamped to ±20 so that one wild token cannot overflow its exp. */
const clampedLogRatio = (logProbs: tf.Tensor, oldLogProbs: tf.Tensor) => tf.clipByValue(tf.sub(logProbs, oldLogProbs), -20, 20);

/** The common statistics, then the masked sums of `own`, by name. */
function policyStats(logRatio: tf.Tensor, ratio: tf.Tensor, mask: tf.Tensor, own: Record<string, tf.Tensor>): PolicyStats {
  const sum = (x: tf.Tensor) => tf.sum(tf.mul(x, mask)) as tf.Scalar;
  const visible = tf.greater(mask, 0);
  return {
    ratio: sum(ratio),
    approxkl: sum(tf.mul(tf.square(logRatio), 0.5)),
    policykl: sum(logRatio),
    ratio_max: tf.max(tf.where(visible, ratio, tf.fill(ratio.shape, -Infinity))),
    ratio_min: tf.min(tf.where(visible, ratio, tf.fill(ratio.shape, Infinity))),
    ...Object.fromEntries(Object.entries(own).map(([name, x]) => [name, sum(x)])),
  };
}

/** x's value as a constant: no gradient flows back through it (torch's detach). */
const stopGradient = (x: tf.Tensor): tf.Tensor =>
  tf.customGrad((input) => ({ value: tf.clone(input as tf.Tensor), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) }))(x);

/**
 * ppo: PPO's clipped surrogate, -min(r A, clip(r, 1 - low, 1 + high) A) with r = exp(log p -
 * log p_old) (clampedLogRatio), and ROLL's dual clip. Own stats: clipfrac, dual_clipfrac.
 */
export const ppo: PolicyLossFn = ({ logProbs, oldLogProbs, advantages, mask, weights }, o, norms) =>
  tf.tidy(() => {
    const logRatio = clampedLogRatio(logProbs, oldLogProbs);
    const ratio = tf.exp(logRatio);
    const surrogate = tf.mul(ratio, advantages);
    const clippedSurrogate = tf.mul(tf.clipByValue(ratio, 1 - o.clipLow, 1 + o.clipHigh), advantages);
    let losses = tf.neg(tf.minimum(surrogate, clippedSurrogate));
    const clipped = tf.cast(tf.less(clippedSurrogate, surrogate), 'float32');
    let dualClipped = tf.zerosLike(losses);
    if (o.dualClip !== null) {
      const bound = tf.mul(tf.neg(advantages), o.dualClip);
      const negative = tf.less(advantages, 0);
      dualClipped = tf.cast(tf.logicalAnd(negative, tf.greater(losses, bound)), 'float32');
      losses = tf.where(negative, tf.minimum(losses, bound), losses);
    }
    if (weights) losses = tf.mul(losses, weights);
    return { loss: aggLoss(losses, mask, o.aggMode, norms), stats: policyStats(logRatio, ratio, mask, { clipfrac: clipped, dual_clipfrac: dualClipped }) };
  });

/**
 * topr, Tapered Off-Policy REINFORCE (Le Roux et al. 2025, eq. 8), as ROLL's agentic ActorWorker
 * computes it. Rows split by the sign of their episode score (not of the advantage): a row that
 * scored above 0 gets the plain REINFORCE term -A log p, weighted by topr_positive_weight; a row
 * that scored 0 or less gets -sg(clip(r, 0, 1)) A log p, weighted by topr_negative_weight, r =
 * exp(log p - log p_old) unclamped and sg a constant. So a negative row whose tokens the policy
 * has already made likelier than the sampler did (r > 1) is not pushed down harder, and one it
 * has left behind (r < 1) is pushed less. The loss's value is -A log p, not PPO's -r A. Own stat:
 * topr_negative_total_clipfrac (tokens of negative rows with r > 1: truncated).
 */
export const topr: PolicyLossFn = ({ logProbs, oldLogProbs, advantages, mask, weights, scores }, o, norms) => {
  if (!scores) throw new Error("topr needs each row's episode score");
  return tf.tidy(() => {
    const positive = tf.cast(tf.greater(scores, 0), 'float32');
    const negative = tf.sub(1, positive);
    const reinforce = tf.neg(tf.mul(advantages, logProbs));
    const taper = stopGradient(tf.clipByValue(tf.exp(tf.sub(logProbs, oldLogProbs)), 0, 1));
    const positiveLoss = tf.mul(reinforce, positive);
    const negativeLoss = tf.mul(tf.mul(taper, reinforce), negative);
    let losses = tf.add(tf.mul(positiveLoss, o.topr.positiveWeight), tf.mul(negativeLoss, o.topr.negativeWeight));
    if (weights) losses = tf.mul(losses, weights);
    const logRatio = clampedLogRatio(logProbs, oldLogProbs);
    const ratio = tf.exp(logRatio);
    const truncated = tf.mul(tf.cast(tf.greater(ratio, 1), 'float32'), negative);
    return { loss: aggLoss(losses, mask, o.aggMode, norms), stats: policyStats(logRatio, ratio, mask, { topr_negative_total_clipfrac: truncated }) };
  });
};

/** vanilla: the plain policy gradient -A log p, every token alike (ROLL's vanilla). */
export const vanilla: PolicyLossFn = ({ logProbs, oldLogProbs, advantages, mask, weights }, o, norms) =>
  tf.tidy(() => {
    let losses = tf.neg(tf.mul(advantages, logProbs));
    if (weights) losses = tf.mul(losses, weights);
    const logRatio = clampedLogRatio(logProbs, oldLogProbs);
    return { loss: aggLoss(losses, mask, o.aggMode, norms), stats: policyStats(logRatio, tf.exp(logRatio), mask, {}) };
  });

/**
 * ROLL reads tis's bounds, cispo's epsilons and kimi15's tau with getattr defaults, and its
 * WorkerConfig declares no such keys (dacite drops them from a config), so they are constants.
 */
export const ROLL_PG_CONSTANTS = { tisLowerBound: 0, tisUpperBound: 1, cispoEpsilonLow: 0.1, cispoEpsilonHigh: 0.1, kimi15Tau: 0.1 } as const;

/**
 * -sg(clip(r, lower, upper)) A log p on every token, r = exp(log p - log p_old) unclamped: a
 * REINFORCE term weighted by a truncated importance ratio held constant. Own stat: the tokens
 * whose ratio was truncated, as `statName`.
 */
const truncatedReinforce =
  (lower: number, upper: number, statName: string): PolicyLossFn =>
  ({ logProbs, oldLogProbs, advantages, mask, weights }, o, norms) =>
    tf.tidy(() => {
      const rawRatio = tf.exp(tf.sub(logProbs, oldLogProbs));
      const taper = stopGradient(tf.clipByValue(rawRatio, lower, upper));
      let losses = tf.neg(tf.mul(tf.mul(taper, advantages), logProbs));
      if (weights) losses = tf.mul(losses, weights);
      const outside = tf.cast(tf.logicalOr(tf.less(rawRatio, lower), tf.greater(rawRatio, upper)), 'float32');
      const logRatio = clampedLogRatio(logProbs, oldLogProbs);
      return { loss: aggLoss(losses, mask, o.aggMode, norms), stats: policyStats(logRatio, tf.exp(logRatio), mask, { [statName]: outside }) };
    });

/** tis, truncated importance sampling: -sg(clip(r, 0, 1)) A log p on every token (ROLL's tis). */
export const tis = truncatedReinforce(ROLL_PG_CONSTANTS.tisLowerBound, ROLL_PG_CONSTANTS.tisUpperBound, 'tis_total_clipfrac');

/** cispo (MiniMax-M1): -sg(clip(r, 1 - 0.1, 1 + 0.1)) A log p on every token (ROLL's cispo without its unified mask). */
export const cispo = truncatedReinforce(1 - ROLL_PG_CONSTANTS.cispoEpsilonLow, 1 + ROLL_PG_CONSTANTS.cispoEpsilonHigh, 'cispo_total_clipfrac');

/** kimi15 (Kimi k1.5): -A log p + tau / 2 (log p - log p_old)^2, tau 0.1 (ROLL's kimi15). */
export const kimi15: PolicyLossFn = ({ logProbs, oldLogProbs, advantages, mask, weights }, o, norms) =>
  tf.tidy(() => {
    const penalty = tf.mul(tf.square(tf.sub(logProbs, oldLogProbs)), ROLL_PG_CONSTANTS.kimi15Tau * 0.5);
    let losses = tf.add(tf.neg(tf.mul(advantages, logProbs)), penalty);
    if (weights) losses = tf.mul(losses, weights);
    const logRatio = clampedLogRatio(logProbs, oldLogProbs);
    return { loss: aggLoss(losses, mask, o.aggMode, norms), stats: policyStats(logRatio, tf.exp(logRatio), mask, {}) };
  });

export interface PgVariant {
  loss: PolicyLossFn;
  /** The names of its own statistics (PolicyLoss.stats after the common ones): sums over sampled tokens, logged as actor/<name> per token. */
  stats: readonly string[];
  /** Whether it reads each row's episode score. */
  scores: boolean;
}

/** The policy losses by actor_train.pg_variant. */
export const PG_VARIANTS = {
  ppo: { loss: ppo, stats: ['clipfrac', 'dual_clipfrac'], scores: false },
  topr: { loss: topr, stats: ['topr_negative_total_clipfrac'], scores: true },
  vanilla: { loss: vanilla, stats: [], scores: false },
  tis: { loss: tis, stats: ['tis_total_clipfrac'], scores: false },
  cispo: { loss: cispo, stats: ['cispo_total_clipfrac'], scores: false },
  kimi15: { loss: kimi15, stats: [], scores: false },
} as const satisfies Record<PgVariantName, PgVariant>;

/**
 * The KL loss term against the reference (use_kl_loss), aggregated like the policy loss. `scope`
 * (a sub-mask of `mask`) keeps only its tokens' terms; the aggregate still divides by `mask`'s.
 */
export function klLoss(
  logProbs: tf.Tensor,
  refLogProbs: tf.Tensor,
  mask: tf.Tensor,
  type: KlPenalty,
  aggMode: LossAggMode,
  norms: LossNorms,
  scope: tf.Tensor = mask,
): tf.Scalar {
  return tf.tidy(() => aggLoss(tf.mul(klPenaltyTensor(logProbs, refLogProbs, type), scope), mask, aggMode, norms));
}

/** The entropy bonus's aggregate (subtracted from the loss times entropy_loss_coef); `scope` as in klLoss. */
export function entropyLoss(entropy: tf.Tensor, mask: tf.Tensor, aggMode: LossAggMode, norms: LossNorms, scope: tf.Tensor = mask): tf.Scalar {
  return tf.tidy(() => aggLoss(tf.mul(entropy, scope), mask, aggMode, norms));
}

export interface ValueLoss {
  loss: tf.Scalar;
  /** Over the sampled tokens: how many had their value clipped, and the sum of the predicted values. */
  stats: { clipped: tf.Scalar; prediction: tf.Scalar };
}

/**
 * The critic's loss, 0.5 x agg(max((V - R)^2, (clip(V, V_old ± c) - R)^2)); without value_clip
 * it is 0.5 x agg((V - R)^2).
 */
export function valueLoss(
  values: tf.Tensor,
  oldValues: tf.Tensor,
  returns: tf.Tensor,
  mask: tf.Tensor,
  clip: number | null,
  aggMode: LossAggMode,
  norms: LossNorms,
): ValueLoss {
  return tf.tidy(() => {
    const plain = tf.square(tf.sub(values, returns));
    let losses = plain;
    let clipped = tf.zerosLike(plain);
    if (clip !== null) {
      const bounded = tf.add(oldValues, tf.clipByValue(tf.sub(values, oldValues), -clip, clip));
      const clippedLoss = tf.square(tf.sub(bounded, returns));
      clipped = tf.cast(tf.greater(clippedLoss, plain), 'float32');
      losses = tf.maximum(plain, clippedLoss);
    }
    const loss = tf.mul(aggLoss(losses, mask, aggMode, norms), 0.5) as tf.Scalar;
    return { loss, stats: { clipped: tf.sum(tf.mul(clipped, mask)) as tf.Scalar, prediction: tf.sum(tf.mul(values, mask)) as tf.Scalar } };
  });
}
