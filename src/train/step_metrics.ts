/** Metrics of a step's data, with verl's and ROLL's names. */
import { summaryStats } from '../algo/stats';
import type { Sample } from '../rollout/types';

/** `recomputed`: actor_train's old log-probs, when the step recomputed them. */
export function stepDataMetrics(samples: readonly Sample[], recomputed: readonly Float32Array[] | null): Record<string, number> {
  const responseLengths = samples.map((s) => s.responseMask.reduce((a, b) => a + b, 0));
  const promptLengths = samples.map((s, i) => s.inputIds.length - responseLengths[i]!);
  // How far actor_train's recomputed log-probs are from the ones sampled by actor_infer: about 0
  // when both hold the same weights, which checks that tokens and their scores line up.
  let gap = 0;
  let tokens = 0;
  if (recomputed) {
    samples.forEach((s, i) =>
      s.responseMask.forEach((m, t) => {
        if (!m) return;
        gap += Math.abs(recomputed[i]![t]! - s.logProbs[t]!);
        tokens++;
      }),
    );
  }
  return {
    ...summaryStats(
      'critic/score',
      samples.map((s) => s.score),
    ),
    ...summaryStats('tokens/response_length', responseLengths),
    ...summaryStats('tokens/prompt_length', promptLengths),
    ...(recomputed ? { 'actor/train_infer_logprob_gap': tokens ? gap / tokens : 0 } : {}),
  };
}
