/**
 * The held-out result of an evaluation: success with its 95% Wilson interval (an episode counts
 * as a success when its env's success metric is 1) and the mean score with its 95% percentile
 * bootstrap interval, seeded by the run's seed so the same episodes always give the same line.
 */
import { bootstrapMeanInterval, wilsonInterval } from '../algo/intervals';
import type { SummarizedEpisode } from './report';

export interface HeldOut {
  episodes: number;
  /** null when the env reports no success metric. */
  success: { rate: number; successes: number; low: number; high: number } | null;
  score: { mean: number; low: number; high: number };
}

export function heldOut(episodes: readonly Pick<SummarizedEpisode, 'metrics' | 'score'>[], seed: number): HeldOut {
  if (episodes.length === 0) throw new Error('heldOut: no episodes');
  const n = episodes.length;
  const hasSuccess = episodes.some((e) => 'success' in e.metrics);
  const successes = episodes.filter((e) => e.metrics.success === 1).length;
  const scores = episodes.map((e) => e.score);
  return {
    episodes: n,
    success: hasSuccess ? { rate: successes / n, successes, ...wilsonInterval(successes, n) } : null,
    score: { mean: scores.reduce((a, b) => a + b, 0) / n, ...bootstrapMeanInterval(scores, seed) },
  };
}

/** `label: success 0.900 [0.786, 0.957] (45/50), score 0.870 [0.800, 0.930]`. */
export function heldOutLine(label: string, result: HeldOut): string {
  const f = (x: number) => x.toFixed(3);
  const success = result.success
    ? `success ${f(result.success.rate)} [${f(result.success.low)}, ${f(result.success.high)}] (${result.success.successes}/${result.episodes})`
    : `no success metric (${result.episodes} episodes)`;
  return `${label}: ${success}, score ${f(result.score.mean)} [${f(result.score.low)}, ${f(result.score.high)}] (95% intervals: Wilson, bootstrap)`;
}
