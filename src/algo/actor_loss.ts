/**
 * actor_train's loss on one micro-batch, the way TRL's compute_loss gives it: the scalar the
 * gradient is taken of, and its parts by name (the trainer logs them as actor/<name>).
 *
 *   loss = pg_loss + kl_loss_coef x kl_loss - entropy_loss_coef x entropy bonus
 *
 * pg_loss is the pg_variant's policy loss (./loss.ts PG_VARIANTS), kl_loss the KL against the
 * reference (use_kl_loss), the bonus the entropy over entropy_loss_tokens. Every term is
 * aggregated with the mini-batch's norms, so the parts of a mini-batch's micro-batches sum to
 * the mini-batch's.
 */
import { tf } from '../engine/tf';
import type { KlPenalty } from './kl';
import { entropyLoss, klLoss, type LossNorms, PG_VARIANTS, type PgVariantName, type PolicyLossInput, type PolicyLossOptions, type PolicyStats } from './loss';

export interface ActorLossOptions {
  /** actor_train.pg_variant: which policy loss (PG_VARIANTS). */
  pgVariant: PgVariantName;
  policy: PolicyLossOptions;
  /** use_kl_loss: coefficient and estimator; null when off. */
  klLoss: { coef: number; type: KlPenalty } | null;
  entropyCoef: number;
}

/** One micro-batch's tensors, [rows, positions], shifted as ./loss.ts says: the policy loss's inputs, and what the KL loss and the entropy bonus read. */
export interface ActorLossInput extends PolicyLossInput {
  /** The policy's entropy at the sampled tokens. */
  entropy: tf.Tensor;
  /** The reference's log-probs; null: no KL loss. */
  refLogProbs: tf.Tensor | null;
  /** The tokens the KL loss and the entropy bonus cover (sub-masks of `mask`); null: all of `mask`. */
  klScope: tf.Tensor | null;
  entropyScope: tf.Tensor | null;
}

/** The loss's parts and statistics by name, each a scalar over the micro-batch. */
export type ActorLossParts = PolicyStats & {
  /** The policy loss, the KL loss (0 without one) and the whole response's entropy, each aggregated like the loss. */
  pg_loss: tf.Scalar;
  kl_loss: tf.Scalar;
  entropy: tf.Scalar;
  /** |log p - log p_old| summed over the sampled tokens, and how many tokens that is. */
  logprob_gap: tf.Scalar;
  tokens: tf.Scalar;
};

export interface ActorLoss {
  loss: tf.Scalar;
  parts: ActorLossParts;
}

export function actorLoss(input: ActorLossInput, o: ActorLossOptions, norms: LossNorms): ActorLoss {
  return tf.tidy(() => {
    const { logProbs, entropy, oldLogProbs, mask } = input;
    const { aggMode } = o.policy;
    const pg = PG_VARIANTS[o.pgVariant].loss(
      { logProbs, oldLogProbs, advantages: input.advantages, mask, weights: input.weights, scores: input.scores },
      o.policy,
      norms,
    );
    let loss: tf.Scalar = pg.loss;
    // A scope zeroes the terms of the tokens outside it; the aggregate still divides by the
    // whole response, so a scoped term is the full term with those tokens' parts removed.
    const scoped = (scope: tf.Tensor | null) => (scope ? tf.mul(mask, scope) : mask);
    const kl = input.refLogProbs && o.klLoss ? klLoss(logProbs, input.refLogProbs, mask, o.klLoss.type, aggMode, norms, scoped(input.klScope)) : null;
    if (kl && o.klLoss) loss = tf.add(loss, tf.mul(kl, o.klLoss.coef)) as tf.Scalar;
    // the reported entropy stays the whole response's, whatever the bonus covers
    const whole = entropyLoss(entropy, mask, aggMode, norms);
    const bonus = input.entropyScope ? entropyLoss(entropy, mask, aggMode, norms, scoped(input.entropyScope)) : whole;
    if (o.entropyCoef > 0) loss = tf.sub(loss, tf.mul(bonus, o.entropyCoef)) as tf.Scalar;
    const parts: ActorLossParts = {
      ...pg.stats,
      pg_loss: pg.loss,
      kl_loss: kl ?? tf.scalar(0),
      entropy: whole,
      logprob_gap: tf.sum(tf.mul(tf.abs(tf.sub(logProbs, oldLogProbs)), mask)),
      tokens: tf.sum(mask),
    };
    return { loss, parts };
  });
}
