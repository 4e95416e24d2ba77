/**
 * The held-out result of an evaluation: success with its 95% Wilson interval (an episode counts
 * as a success when its env's success metric is 1) and the mean score with its 95% percentile
 * bootstrap interval, seeded by the run's seed so the same episodes always give the same line.
 * Where every episode has its optimum (the best policy's success probability, optima.ts), the
 * result also gives their mean and the share of it the success reached: a slippery lake's best
 * policy fails some episodes, so 1 is not what a perfect policy scores.
 */
import { bootstrapMeanInterval, wilsonInterval } from '../algo/intervals';
import type { SummarizedEpisode } from './report';
import type { Episode } from './types';

export interface HeldOut {
  episodes: number;
  /** null when the env reports no success metric. */
  success: { rate: number; successes: number; low: number; high: number } | null;
  score: { mean: number; low: number; high: number };
  /** The mean optimum of the episodes (Episode.optimum); absent unless every episode has one. */
  optimum?: number;
  /** success.rate / optimum, the share of the best achievable success reached; absent without both, or at optimum 0. */
  of_optimum?: number;
}

export function heldOut(episodes: readonly (Pick<SummarizedEpisode, 'metrics' | 'score'> & Pick<Episode, 'optimum'>)[], seed: number): HeldOut {
  if (episodes.length === 0) throw new Error('heldOut: no episodes');
  const n = episodes.length;
  const hasSuccess = episodes.some((e) => 'success' in e.metrics);
  const successes = episodes.filter((e) => e.metrics.success === 1).length;
  const scores = episodes.map((e) => e.score);
  const result: HeldOut = {
    episodes: n,
    success: hasSuccess ? { rate: successes / n, successes, ...wilsonInterval(successes, n) } : null,
    score: { mean: scores.reduce((a, b) => a + b, 0) / n, ...bootstrapMeanInterval(scores, seed) },
  };
  if (!episodes.every((e) => e.optimum !== undefined)) return result;
  const optimum = episodes.reduce((sum, e) => sum + e.optimum!, 0) / n;
  const ofOptimum = result.success && optimum > 0 ? { of_optimum: result.success.rate / optimum } : {};
  return { ...result, optimum, ...ofOptimum };
}

/** `label: success 0.900 [0.786, 0.957] (45/50), score 0.870 [0.800, 0.930]`, then `, optimum 0.950, of optimum 0.947` where there is one. */
export function heldOutLine(label: string, result: HeldOut): string {
  const f = (x: number) => x.toFixed(3);
  const success = result.success
    ? `success ${f(result.success.rate)} [${f(result.success.low)}, ${f(result.success.high)}] (${result.success.successes}/${result.episodes})`
    : `no success metric (${result.episodes} episodes)`;
  const optimum =
    result.optimum === undefined ? '' : `, optimum ${f(result.optimum)}${result.of_optimum === undefined ? '' : `, of optimum ${f(result.of_optimum)}`}`;
  return `${label}: ${success}, score ${f(result.score.mean)} [${f(result.score.low)}, ${f(result.score.high)}]${optimum} (95% intervals: Wilson, bootstrap)`;
}
