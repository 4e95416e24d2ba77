/**
 * KL between the policy and the reference, estimated per sampled token from log-probabilities,
 * and the controllers of the coefficient that weighs it in the reward.
 *
 * With d = log p - log p_ref:
 *   kl            d                         (k1)
 *   abs           |d|
 *   mse           d^2 / 2                   (k2)
 *   k3/low_var_kl exp(-d) + d - 1, with -d clamped to [-20, 20] and the result to [-10, 10]
 *   full          p * d: the sampled token's term of the vocabulary sum KL(p || p_ref). The whole sum
 *                 needs the reference's logits at every position; like ROLL we score the sampled token.
 */
import { tf } from '../engine/tf';
import type { KlPenalty } from './names';

export { KL_PENALTIES, type KlPenalty } from './names';

const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));

/** The estimator on host numbers. */
export function klPenalty(logProb: number, refLogProb: number, type: KlPenalty): number {
  const d = logProb - refLogProb;
  switch (type) {
    case 'kl':
      return d;
    case 'abs':
      return Math.abs(d);
    case 'mse':
      return 0.5 * d * d;
    case 'k3':
    case 'low_var_kl': {
      const k = clamp(-d, -20, 20);
      return clamp(Math.exp(k) - k - 1, -10, 10);
    }
    case 'full':
      return Math.exp(logProb) * d;
  }
}

/** The same estimator on tensors (for the KL loss, with gradients through `logProb`). */
export function klPenaltyTensor(logProb: tf.Tensor, refLogProb: tf.Tensor, type: KlPenalty): tf.Tensor {
  return tf.tidy(() => {
    const d = tf.sub(logProb, refLogProb);
    switch (type) {
      case 'kl':
        return d;
      case 'abs':
        return tf.abs(d);
      case 'mse':
        return tf.mul(tf.square(d), 0.5);
      case 'k3':
      case 'low_var_kl': {
        const k = tf.clipByValue(tf.neg(d), -20, 20);
        return tf.clipByValue(tf.sub(tf.sub(tf.exp(k), k), 1), -10, 10);
      }
      case 'full':
        return tf.mul(tf.exp(logProb), d);
    }
  });
}

/** The KL coefficient of the reward: fixed, or adapted towards a target KL. */
export interface KlController {
  readonly value: number;
  /** Called once per step with the batch's mean KL and its number of rows. */
  update(currentKl: number, rows: number): void;
}

export class FixedKlController implements KlController {
  constructor(public value: number) {}
  update(): void {}
}

/** Ziegler et al.'s proportional controller: value *= 1 + clip(kl/target - 1, ±0.2) * rows / horizon. */
export class AdaptiveKlController implements KlController {
  constructor(
    public value: number,
    readonly target: number,
    readonly horizon: number,
  ) {}

  update(currentKl: number, rows: number): void {
    const error = clamp(currentKl / this.target - 1, -0.2, 0.2);
    this.value *= 1 + (error * rows) / this.horizon;
  }
}

export function klController(options: { initKlCoef: number; targetKl: number | null; klHorizon: number }): KlController {
  return options.targetKl === null
    ? new FixedKlController(options.initKlCoef)
    : new AdaptiveKlController(options.initKlCoef, options.targetKl, options.klHorizon);
}
