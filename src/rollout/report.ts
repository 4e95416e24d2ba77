/**
 * An evaluation's summary per tag, as `agentic eval` prints it and writes it (JSON): a table, and
 * under it the failed episodes of each tag, by kind with the first reason of each.
 */
import { type EpisodeFailures, episodeFailures, type FailingEpisode, failuresLine } from './failures';
import type { Episode } from './types';

export interface TagSummary {
  episodes: number;
  /** Share of episodes whose env reported success (null if the env has no success metric). */
  success: number | null;
  score: { mean: number; min: number; max: number };
  /** Share of valid actions (null if the env has no action_is_valid metric). */
  action_is_valid: number | null;
  /** Actions per episode. */
  num_actions: number;
  /** Generated tokens per episode. */
  response_length: number;
  timed_out: number;
  env_failure: number;
  /** Share of episodes an inference server failed (present only where one answered). */
  infer_failure?: number;
  /** Share of episodes that failed, of any kind (./failures.ts). */
  failed: number;
  /** The failed episodes, and by kind (most first) each kind's count and the first one's reason. */
  failures: EpisodeFailures;
}

/**
 * What the summary reads of an episode (a rollout's Episode, or a replayed one). A replayed
 * episode saved without its token count has responseTokens NaN, and its tag's response_length
 * is NaN ("-" in the table): unknown, not zero.
 */
export type SummarizedEpisode = Pick<Episode, 'tag' | 'metrics' | 'score' | 'responseTokens'> & FailingEpisode;

const mean = (values: readonly number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);

function metricMean(episodes: readonly SummarizedEpisode[], name: string): number | null {
  if (!episodes.some((e) => name in e.metrics)) return null;
  return mean(episodes.map((e) => e.metrics[name] ?? 0));
}

export function summarizeByTag(batch: { readonly episodes: readonly SummarizedEpisode[] }): Record<string, TagSummary> {
  const summary: Record<string, TagSummary> = {};
  for (const tag of [...new Set(batch.episodes.map((e) => e.tag))]) {
    const episodes = batch.episodes.filter((e) => e.tag === tag);
    const scores = episodes.map((e) => e.score);
    const failures = episodeFailures(episodes);
    summary[tag] = {
      episodes: episodes.length,
      success: metricMean(episodes, 'success'),
      score: { mean: mean(scores), min: Math.min(...scores), max: Math.max(...scores) },
      action_is_valid: metricMean(episodes, 'action_is_valid'),
      num_actions: mean(episodes.map((e) => e.metrics.num_actions ?? 0)),
      response_length: mean(episodes.map((e) => e.responseTokens)),
      timed_out: metricMean(episodes, 'timed_out') ?? 0,
      env_failure: metricMean(episodes, 'env_failure') ?? 0,
      failed: failures.failed / episodes.length,
      failures,
    };
    const inferFailure = metricMean(episodes, 'infer_failure');
    if (inferFailure !== null) summary[tag].infer_failure = inferFailure;
  }
  return summary;
}

/** The columns of a summary table; the plain-text one shows all but the last two. */
export const SUMMARY_COLUMNS = [
  'tag',
  'episodes',
  'success',
  'score mean',
  'min',
  'max',
  'valid actions',
  'actions',
  'response tokens',
  'failed',
  'timed out',
  'env failures',
];
const TEXT_COLUMNS = SUMMARY_COLUMNS.length - 2;

/** The cells of a summary table, one row per tag, as text (the HTML report escapes them). */
export function summaryRows(summary: Record<string, TagSummary>): string[][] {
  const pct = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(1)}%`);
  const num = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(3));
  return Object.entries(summary).map(([tag, s]) => [
    tag,
    String(s.episodes),
    pct(s.success),
    num(s.score.mean),
    num(s.score.min),
    num(s.score.max),
    pct(s.action_is_valid),
    s.num_actions.toFixed(2),
    Number.isFinite(s.response_length) ? s.response_length.toFixed(1) : '-',
    pct(s.failed),
    pct(s.timed_out),
    pct(s.env_failure),
  ]);
}

/** Under a summary table: per tag whose episodes failed, `<tag>: failed 3/8: env_failure 3 (...)`. */
export function failureLines(summary: Record<string, TagSummary>): string[] {
  return Object.entries(summary).flatMap(([tag, s]) => {
    const line = failuresLine(s.failures);
    return line ? [`${tag}: ${line}`] : [];
  });
}

/** A plain-text table, one row per tag, and the failed episodes' reasons under it. */
export function formatSummaryTable(summary: Record<string, TagSummary>): string {
  const columns = SUMMARY_COLUMNS.slice(0, TEXT_COLUMNS);
  const rows = summaryRows(summary).map((row) => row.slice(0, TEXT_COLUMNS));
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(columns), ...rows.map(line), ...failureLines(summary)].join('\n');
}
