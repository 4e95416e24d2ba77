/**
 * The html tracker: learning curves as one self-contained page, `<logging_dir>/curves.html`,
 * rewritten (atomically) after every logged step so it can be opened while the run goes on.
 * Charts are inline SVG: no scripts, no network, any browser. Below them, the steps whose episodes
 * failed, each kind with its count and first reason.
 *
 * `curvesPage` also draws several runs on the same axes (the GiGPO vs GRPO comparison).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type StepReport, stepName } from '../train/types';
import { writeFileAtomic } from '../util/atomic';
import { tagMean } from './console';

/** One run's points: x (step or wall seconds) and the metrics of that step. */
export interface CurveRun {
  label: string;
  reports: readonly StepReport[];
}

export interface ChartSpec {
  title: string;
  /** The metric on the y axis; the first key a report has is used. */
  keys: readonly string[];
  x: 'step' | 'time';
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const WIDTH = 560;
const HEIGHT = 260;
const PAD = { left: 52, right: 16, top: 28, bottom: 40 };

/** The charts of a training run: validation first, then the training signal. */
export const DEFAULT_CHARTS: readonly ChartSpec[] = [
  { title: 'validation success', keys: ['val/success'], x: 'step' },
  { title: 'validation success vs wall time (s)', keys: ['val/success'], x: 'time' },
  { title: 'validation score', keys: ['val/score/mean'], x: 'step' },
  { title: 'training score', keys: ['rollout/score/mean'], x: 'step' },
  { title: 'training success', keys: ['rollout/success'], x: 'step' },
  { title: 'actor entropy', keys: ['actor/entropy'], x: 'step' },
  { title: 'valid actions (training)', keys: ['rollout/action_is_valid'], x: 'step' },
];

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function pointsOf(run: CurveRun, spec: ChartSpec): Array<[number, number]> {
  const points: Array<[number, number]> = [];
  for (const report of run.reports) {
    const key = spec.keys.find((k) => Number.isFinite(report.metrics[k]));
    const x = spec.x === 'step' ? report.step : report.metrics['time/elapsed'];
    if (key !== undefined && x !== undefined && Number.isFinite(x)) points.push([x, report.metrics[key]!]);
  }
  return points;
}

const tick = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(1) : v.toFixed(2));

/** One chart as inline SVG, or null when no run has a point for it. */
export function chartSvg(runs: readonly CurveRun[], spec: ChartSpec): string | null {
  const series = runs.map((run) => pointsOf(run, spec));
  const all = series.flat();
  if (all.length === 0) return null;
  let [xMin, xMax] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  let [yMin, yMax] = [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
  if (xMax === xMin) xMax = xMin + 1;
  if (yMax === yMin) [yMin, yMax] = [yMin - 0.5, yMax + 0.5];
  // a 0..1 metric keeps its natural frame, so runs and pages compare at a glance
  if (yMin >= 0 && yMax <= 1) [yMin, yMax] = [0, 1];
  const w = WIDTH - PAD.left - PAD.right;
  const h = HEIGHT - PAD.top - PAD.bottom;
  const sx = (x: number) => PAD.left + ((x - xMin) / (xMax - xMin)) * w;
  const sy = (y: number) => PAD.top + h - ((y - yMin) / (yMax - yMin)) * h;
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="11">`];
  parts.push(`<text x="${PAD.left}" y="16" font-size="13" font-weight="bold">${escape(spec.title)}</text>`);
  parts.push(`<rect x="${PAD.left}" y="${PAD.top}" width="${w}" height="${h}" fill="none" stroke="#999"/>`);
  for (let i = 0; i <= 4; i++) {
    const y = yMin + ((yMax - yMin) * i) / 4;
    const x = xMin + ((xMax - xMin) * i) / 4;
    parts.push(`<line x1="${PAD.left}" x2="${PAD.left + w}" y1="${sy(y)}" y2="${sy(y)}" stroke="#eee"/>`);
    parts.push(`<text x="${PAD.left - 6}" y="${sy(y) + 4}" text-anchor="end">${tick(y)}</text>`);
    parts.push(`<text x="${sx(x)}" y="${PAD.top + h + 16}" text-anchor="middle">${tick(x)}</text>`);
  }
  parts.push(`<text x="${PAD.left + w / 2}" y="${HEIGHT - 6}" text-anchor="middle">${spec.x === 'step' ? 'step' : 'wall time (s)'}</text>`);
  series.forEach((points, i) => {
    if (points.length === 0) return;
    const colour = COLOURS[i % COLOURS.length]!;
    const path = points.map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="1.8"/>`);
    if (points.length <= 60) for (const [x, y] of points) parts.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="2.2" fill="${colour}"/>`);
    if (runs.length > 1) parts.push(`<text x="${PAD.left + 8}" y="${PAD.top + 14 + 13 * i}" fill="${colour}">${escape(runs[i]!.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

/** Steps with failed episodes a page lists, the latest; metrics.jsonl has every one. */
const LISTED_FAILING_STEPS = 50;

/**
 * The steps of `reports` whose episodes failed, as an HTML list (steps counted as the console
 * counts them), each kind with its count and first reason; '' when none failed.
 */
export function failedStepsList(reports: readonly StepReport[]): string {
  const failing = reports.filter((r) => r.failures && r.failures.failed > 0);
  if (failing.length === 0) return '';
  const listed = failing.slice(-LISTED_FAILING_STEPS);
  const items = listed.map(({ step, failures }) => {
    const kinds = failures!.kinds.map((k) => `<li>${escape(`${k.kind} ${k.count}: ${k.first}`)}</li>`).join('');
    return `<li>${escape(`${stepName(step)}: failed ${failures!.failed}/${failures!.episodes}`)}<ul>${kinds}</ul></li>`;
  });
  const earlier = failing.length - listed.length;
  const note = earlier > 0 ? `<p>${earlier} earlier step(s) with failed episodes are not listed; metrics.jsonl has them.</p>` : '';
  return `<h3>Failed episodes</h3>${note}<ul>${items.join('\n')}</ul>`;
}

/** A page of charts for one or several runs (charts no run has data for are left out), then the failed episodes of each. */
export function curvesPage(title: string, runs: readonly CurveRun[], charts: readonly ChartSpec[] = DEFAULT_CHARTS, notes: readonly string[] = []): string {
  const drawn = charts.map((spec) => chartSvg(runs, spec)).filter((svg): svg is string => svg !== null);
  const failed = runs.map((run) => {
    const list = failedStepsList(run.reports);
    return list && runs.length > 1 ? `<h3>${escape(run.label)}</h3>${list}` : list;
  });
  return [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escape(title)}</title></head>`,
    '<body style="font-family:sans-serif;margin:24px">',
    `<h2>${escape(title)}</h2>`,
    ...notes.map((note) => `<p>${escape(note)}</p>`),
    `<div style="display:flex;flex-wrap:wrap;gap:12px">${drawn.join('\n')}</div>`,
    ...failed.filter((list) => list !== ''),
    '</body></html>',
    '',
  ].join('\n');
}

/** A report (its metrics and failures) with the charts' cross-tag keys added: val/success, rollout/success, rollout/action_is_valid. */
export function withTagMeans(report: StepReport): StepReport {
  const derived: Record<string, number> = {};
  for (const [key, prefix, name] of [
    ['val/success', 'val/', 'success'],
    ['rollout/success', '', 'success'],
    ['rollout/action_is_valid', '', 'action_is_valid'],
  ] as const) {
    const value = tagMean(report.metrics, prefix, name);
    if (value !== undefined) derived[key] = value;
  }
  const metrics = { ...report.metrics, ...derived };
  return report.failures ? { step: report.step, metrics, failures: report.failures } : { step: report.step, metrics };
}

export class CurvesTracker {
  readonly path: string;
  private readonly reports: StepReport[] = [];

  /** `earlier`: the reports of the steps before this process (a resumed run draws them too). */
  constructor(
    loggingDir: string,
    private readonly title: string,
    earlier: readonly StepReport[] = [],
  ) {
    mkdirSync(loggingDir, { recursive: true });
    this.path = join(loggingDir, 'curves.html');
    this.reports.push(...earlier.map(withTagMeans));
  }

  log(report: StepReport): void {
    this.reports.push(withTagMeans(report));
    writeFileAtomic(this.path, curvesPage(this.title, [{ label: this.title, reports: this.reports }]));
  }
}
