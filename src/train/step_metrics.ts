/** Metrics of a step's data, with verl's and ROLL's names. */
import { summaryStats } from '../algo/stats';
import type { RolloutColumns } from './batch';

/** `recomputed`: actor_train's old log-probs, when the step recomputed them. */
export function stepDataMetrics(
  batch: Pick<RolloutColumns, 'ids' | 'masks' | 'samplingLogProbs' | 'scores'>,
  recomputed: readonly Float32Array[] | null,
): Record<string, number> {
  const responseLengths = batch.masks.map((mask) => mask.reduce((a, b) => a + b, 0));
  const promptLengths = batch.ids.map((ids, i) => ids.length - responseLengths[i]!);
  // How far actor_train's recomputed log-probs are from the ones sampled by actor_infer: about 0
  // when both hold the same weights, which checks that tokens and their scores line up.
  let gap = 0;
  let tokens = 0;
  if (recomputed) {
    batch.masks.forEach((mask, i) =>
      mask.forEach((m, t) => {
        if (!m) return;
        gap += Math.abs(recomputed[i]![t]! - batch.samplingLogProbs[i]![t]!);
        tokens++;
      }),
    );
  }
  return {
    ...summaryStats('critic/score', batch.scores),
    ...summaryStats('tokens/response_length', responseLengths),
    ...summaryStats('tokens/prompt_length', promptLengths),
    ...(recomputed ? { 'actor/train_infer_logprob_gap': tokens ? gap / tokens : 0 } : {}),
  };
}
