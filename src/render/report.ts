/**
 * The render's report.html: one self-contained page (inline CSS, SVG curves, GIFs as data: URIs,
 * no scripts, nothing fetched) with the run's learning curves, a table of the rendered episodes'
 * metrics per tag, and the episodes themselves, animation and transcript.
 */
import { chartSvg, DEFAULT_CHARTS, failedStepsList, withTagMeans } from '../tracking/curves';
import { SUMMARY_COLUMNS, summaryRows, type TagSummary } from '../rollout/report';
import type { EndReason } from '../rollout/types';
import type { StepReport } from '../train/types';

export interface ReportEpisode {
  /** File stem of its GIF and transcript, e.g. `003_FrozenLake_seed123`. */
  name: string;
  tag: string;
  seed: number;
  turns: number;
  score: number;
  /** The env's success metric over the episode, undefined if the env has none. */
  success: number | undefined;
  endReason: EndReason;
  /** Why the episode failed, in one line, else null. */
  failure: string | null;
  gif: { bytes: Uint8Array; width: number; height: number } | null;
  transcript: string;
}

export interface ReportInput {
  title: string;
  /** One sentence on where the episodes came from. */
  source: string;
  /** The run's metrics.jsonl and its steps, null when there is no such file. */
  curves: { path: string; reports: readonly StepReport[] | null };
  summary: Record<string, TagSummary>;
  episodes: readonly ReportEpisode[];
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (value: number, digits = 3) => (!Number.isFinite(value) ? '-' : Number.isInteger(value) ? String(value) : value.toFixed(digits));

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 24px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 10px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.source, .none { color: #555; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
table { border-collapse: collapse; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.episodes { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.episode { border: 1px solid #ddd; border-radius: 6px; padding: 10px; max-width: 520px; }
.episode h3 { font-size: 15px; margin: 0 0 4px; }
.episode .facts { font-size: 13px; color: #444; margin: 0 0 8px; }
.episode img { display: block; image-rendering: pixelated; border: 1px solid #ccc; }
.transcript { font-size: 12px; background: #f6f6f6; padding: 8px; max-height: 360px; overflow: auto; white-space: pre-wrap; }
`;

function curvesSection(curves: ReportInput['curves']): string {
  if (curves.reports === null) {
    return `<p class="none">No learning curves: ${escape(curves.path)} does not exist (a training run with jsonl in track_with writes it).</p>`;
  }
  const runs = [{ label: 'run', reports: curves.reports.map(withTagMeans) }];
  const charts = DEFAULT_CHARTS.map((spec) => chartSvg(runs, spec)).filter((svg): svg is string => svg !== null);
  if (charts.length === 0) {
    return `<p class="none">No learning curves: ${escape(curves.path)} holds ${curves.reports.length} step(s) but none of the charted metrics.</p>`;
  }
  return `<p class="source">From ${escape(curves.path)} (${curves.reports.length} steps).</p>\n<div class="charts">${charts.join('\n')}</div>${failedStepsList(curves.reports)}`;
}

function metricsTable(summary: Record<string, TagSummary>): string {
  const cells = (row: readonly string[], tag: 'td' | 'th') => row.map((cell) => `<${tag}>${escape(cell)}</${tag}>`).join('');
  const rows = summaryRows(summary).map((row) => `<tr>${cells(row, 'td')}</tr>`);
  return `<table><thead><tr>${cells(SUMMARY_COLUMNS, 'th')}</tr></thead><tbody>${rows.join('\n')}</tbody></table>`;
}

function episodeCard(episode: ReportEpisode): string {
  const facts = [
    `seed ${episode.seed}`,
    `${episode.turns} turn${episode.turns === 1 ? '' : 's'}`,
    `score ${num(episode.score)}`,
    ...(episode.success === undefined ? [] : [episode.success >= 1 ? 'success' : 'no success']),
    `ended: ${episode.endReason}${episode.failure ? ` (${episode.failure})` : ''}`,
  ];
  const picture = episode.gif
    ? `<img class="frames" src="data:image/gif;base64,${Buffer.from(episode.gif.bytes).toString('base64')}" width="${episode.gif.width}" height="${episode.gif.height}" alt="${escape(`${episode.tag} seed ${episode.seed}, animated`)}">`
    : '<p class="none">No picture: this env draws none.</p>';
  return [
    `<article class="episode" id="${escape(episode.name)}">`,
    `<h3>${escape(episode.name)}</h3>`,
    `<p class="facts">${escape(facts.join(' · '))}</p>`,
    picture,
    `<details${episode.gif ? '' : ' open'}><summary>transcript</summary><pre class="transcript">${escape(episode.transcript)}</pre></details>`,
    '</article>',
  ].join('\n');
}

export function reportPage(input: ReportInput): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escape(input.title)}: rendered episodes</title>`,
    `<style>${STYLE}</style>`,
    '</head><body>',
    `<h1>${escape(input.title)}</h1>`,
    `<p class="source">${escape(input.source)}</p>`,
    '<section id="curves"><h2>Learning curves</h2>',
    curvesSection(input.curves),
    '</section>',
    '<section id="metrics"><h2>Metrics of the rendered episodes</h2>',
    metricsTable(input.summary),
    '</section>',
    `<section id="episodes"><h2>Episodes (${input.episodes.length})</h2>`,
    `<div class="episodes">${input.episodes.map(episodeCard).join('\n')}</div>`,
    '</section>',
    '</body></html>',
    '',
  ].join('\n');
}
