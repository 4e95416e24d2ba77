/**
 * A rollout's metrics, with ROLL's names. Per-episode metrics are averaged over the episodes of
 * each tag (an episode that lacks a metric, say one cut before its first step, counts 0):
 *
 *   env/<tag>/<metric>       success, action_is_valid, action_is_effective, format_penalty,
 *                            num_actions, timed_out, env_failure, ... and score/{mean,max,min}
 *   env/response_length      tokens the policy generated per episode
 *   rollout/score/{mean,max,min}, rollout/tokens_per_second, time/rollout
 *   gateway/prefix_mismatch  outside agents' session splits, summed over the batch (only when
 *                            outside agents played)
 *
 * Validation gets the same under `val/` (val/env/<tag>/success, val/score/mean, ...).
 */
import type { Episode, RolloutMode } from './types';

export interface RolloutTiming {
  seconds: number;
  generatedTokens: number;
}

function stats(values: readonly number[]): { mean: number; max: number; min: number } {
  if (values.length === 0) return { mean: 0, max: 0, min: 0 };
  return { mean: values.reduce((a, b) => a + b, 0) / values.length, max: Math.max(...values), min: Math.min(...values) };
}

function mean(values: readonly number[]): number {
  return stats(values).mean;
}

export function rolloutMetrics(mode: RolloutMode, episodes: readonly Episode[], timing: RolloutTiming): Record<string, number> {
  const prefix = mode === 'val' ? 'val/' : '';
  const metrics: Record<string, number> = {};
  const tags = [...new Set(episodes.map((e) => e.tag))];
  for (const tag of tags) {
    const mine = episodes.filter((e) => e.tag === tag);
    const names = [...new Set(mine.flatMap((e) => Object.keys(e.metrics)))].sort();
    for (const name of names) metrics[`${prefix}env/${tag}/${name}`] = mean(mine.map((e) => e.metrics[name] ?? 0));
    const score = stats(mine.map((e) => e.score));
    metrics[`${prefix}env/${tag}/score/mean`] = score.mean;
    metrics[`${prefix}env/${tag}/score/max`] = score.max;
    metrics[`${prefix}env/${tag}/score/min`] = score.min;
  }
  metrics[`${prefix}env/response_length`] = mean(episodes.map((e) => e.responseTokens));
  if (episodes.some((e) => 'prefix_mismatch' in e.metrics)) {
    metrics[`${prefix}gateway/prefix_mismatch`] = episodes.reduce((sum, e) => sum + (e.metrics.prefix_mismatch ?? 0), 0);
  }
  const score = stats(episodes.map((e) => e.score));
  const scoreKey = mode === 'val' ? 'val/score' : 'rollout/score';
  metrics[`${scoreKey}/mean`] = score.mean;
  metrics[`${scoreKey}/max`] = score.max;
  metrics[`${scoreKey}/min`] = score.min;
  metrics[`${prefix}rollout/tokens_per_second`] = timing.seconds > 0 ? timing.generatedTokens / timing.seconds : 0;
  metrics[`${prefix}rollout/generated_tokens`] = timing.generatedTokens;
  metrics[mode === 'val' ? 'time/step_val' : 'time/rollout'] = timing.seconds;
  return metrics;
}
