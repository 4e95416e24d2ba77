/**
 * 95% intervals for evaluation results: Wilson's score interval for a success rate (right at 0
 * and n, where the normal approximation gives an empty interval) and the percentile bootstrap for
 * a mean score (no assumption on the scores' distribution), seeded so a report is reproducible.
 */
import { Rng } from '../engine/rng';

export interface Interval {
  low: number;
  high: number;
}

/** The normal quantile of a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

/** Wilson's score interval for `successes` of `n` (n > 0) at normal quantile `z`. */
export function wilsonInterval(successes: number, n: number, z = Z95): Interval {
  if (!(n > 0) || successes < 0 || successes > n) throw new Error(`wilsonInterval: need 0 <= successes <= n and n > 0, got ${successes} of ${n}`);
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // at 0 and n the exact bounds are 0 and 1; clamp the float noise around them
  return { low: successes === 0 ? 0 : Math.max(0, centre - half), high: successes === n ? 1 : Math.min(1, centre + half) };
}

/**
 * The percentile bootstrap interval of the mean of `values`: `resamples` means of resamples with
 * replacement, drawn from Rng.fromSeed(seed), cut at 2.5% and 97.5% (nearest rank).
 */
export function bootstrapMeanInterval(values: readonly number[], seed: number, resamples = 10_000): Interval {
  if (values.length === 0) throw new Error('bootstrapMeanInterval: no values');
  const rng = Rng.fromSeed(seed, 'bootstrap');
  const n = values.length;
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[rng.int(n)]!;
    means[r] = sum / n;
  }
  means.sort();
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.ceil(q * resamples) - 1))]!;
  return { low: at(0.025), high: at(0.975) };
}
