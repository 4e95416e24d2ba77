/**
 * The actor's and the critic's losses on a micro-batch, as tfjs scalars with gradients.
 *
 * All inputs are [rows, positions] and already shifted so that position j scores the token the
 * model predicts there. A mini-batch is split into micro-batches whose losses are summed, so each
 * micro-batch divides by the whole mini-batch's counts (`LossNorms`): the sum of the micro-batch
 * losses is then exactly the mini-batch loss, however the rows were split (ROLL's global
 * normalisation).
 */
import { tf } from '../engine/tf';
import { klPenaltyTensor } from './kl';
import type { KlPenalty, LossAggMode } from './names';

export { LOSS_AGG_MODES, type LossAggMode } from './names';

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
}

/** Sums over the micro-batch's sampled tokens, for metrics; divide by the token count. */
export const POLICY_STAT_NAMES = ['clipfrac', 'ratio_mean', 'approxkl', 'policykl', 'dual_clipfrac'] as const;

export interface PolicyLoss {
  loss: tf.Scalar;
  /** [clipped, ratio, approxkl, policykl, dual-clipped] summed over sampled tokens, then ratio max and min. */
  stats: tf.Tensor1D;
}

/**
 * PPO's clipped surrogate: -min(r A, clip(r, 1 - low, 1 + high) A) with r = exp(logp - old)
 * (the log-ratio clamped to ±20 so one wild token cannot overflow), and ROLL's dual clip.
 * `weights` (importance weights, constants) scale each token's term before aggregation.
 */
export function policyLoss(
  logProbs: tf.Tensor,
  oldLogProbs: tf.Tensor,
  advantages: tf.Tensor,
  mask: tf.Tensor,
  o: PolicyLossOptions,
  norms: LossNorms,
  weights?: tf.Tensor,
): PolicyLoss {
  return tf.tidy(() => {
    const logRatio = tf.clipByValue(tf.sub(logProbs, oldLogProbs), -20, 20);
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
    const loss = aggLoss(losses, mask, o.aggMode, norms);
    const sum = (x: tf.Tensor) => tf.sum(tf.mul(x, mask));
    const visible = tf.greater(mask, 0);
    const stats = tf.stack([
      sum(clipped),
      sum(ratio),
      sum(tf.mul(tf.square(logRatio), 0.5)),
      sum(logRatio),
      sum(dualClipped),
      tf.max(tf.where(visible, ratio, tf.fill(ratio.shape, -Infinity))),
      tf.min(tf.where(visible, ratio, tf.fill(ratio.shape, Infinity))),
    ]) as tf.Tensor1D;
    return { loss, stats };
  });
}

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
  /** [clipped, prediction] summed over sampled tokens. */
  stats: tf.Tensor1D;
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
    const stats = tf.stack([tf.sum(tf.mul(clipped, mask)), tf.sum(tf.mul(values, mask))]) as tf.Tensor1D;
    return { loss, stats };
  });
}
