/**
 * The gap between the policy that sampled a batch (the behaviour policy: actor_infer, perhaps some
 * versions old) and the policy whose old log-probs enter the PPO ratio (actor_train before the
 * update), and ROLL's correction for it (train_infer_correction.is_weight): each token's policy
 * loss weighted by a truncated importance ratio, a constant of the loss (no gradient through it).
 *
 *   token:     w_t = min(exp(old_t - behaviour_t), upper_bound)
 *   sequence:  w_t = min(exp(sum over the row's sampled tokens of (old - behaviour)), upper_bound)
 */

export interface ImportanceOptions {
  type: 'token' | 'sequence';
  upperBound: number;
}

/** The log-ratio is clamped like the PPO ratio's, so one wild token cannot overflow. */
const MAX_LOG_RATIO = 20;

/**
 * Per-token weights (1 off the mask) and metrics: the mean weight and the fraction truncated over
 * sampled tokens (actor/train_infer_logprob_gap already measures the gap itself).
 */
export function importanceWeights(
  oldLogProbs: readonly Float32Array[],
  behaviourLogProbs: readonly Float32Array[],
  masks: readonly Uint8Array[],
  o: ImportanceOptions,
): { weights: Float32Array[]; metrics: Record<string, number> } {
  let tokens = 0;
  let weightSum = 0;
  let truncated = 0;
  const weights = masks.map((mask, i) => {
    const old = oldLogProbs[i]!;
    const behaviour = behaviourLogProbs[i]!;
    const row = new Float32Array(mask.length).fill(1);
    let rowLogRatio = 0;
    for (let t = 0; t < mask.length; t++) {
      if (!mask[t]) continue;
      rowLogRatio += old[t]! - behaviour[t]!;
      tokens++;
    }
    for (let t = 0; t < mask.length; t++) {
      if (!mask[t]) continue;
      const logRatio = o.type === 'token' ? old[t]! - behaviour[t]! : rowLogRatio;
      const ratio = Math.exp(Math.min(MAX_LOG_RATIO, Math.max(-MAX_LOG_RATIO, logRatio)));
      const w = Math.min(ratio, o.upperBound);
      if (ratio > o.upperBound) truncated++;
      weightSum += w;
      row[t] = w;
    }
    return row;
  });
  const per = (x: number) => (tokens === 0 ? 0 : x / tokens);
  return {
    weights,
    metrics: {
      'actor/is_weight_mean': tokens === 0 ? 1 : per(weightSum),
      'actor/is_weight_truncated_frac': per(truncated),
    },
  };
}
