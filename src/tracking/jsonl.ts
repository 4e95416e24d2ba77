/**
 * The jsonl tracker: every metric of every step, one JSON object per line, appended to
 * `<logging_dir>/metrics.jsonl` (`{"step": 3, "metrics": {...}}`). Each line is written whole, so
 * a crash can lose the line being written but never leaves a torn one behind another.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StepReport } from '../train/trainer';

export class JsonlTracker {
  readonly path: string;

  /** A new run starts the file afresh (`append` keeps it, for a continued run). */
  constructor(loggingDir: string, options: { append?: boolean } = {}) {
    mkdirSync(loggingDir, { recursive: true });
    this.path = join(loggingDir, 'metrics.jsonl');
    if (!options.append) writeFileSync(this.path, '');
  }

  log(report: StepReport): void {
    appendFileSync(this.path, jsonlLine(report));
  }
}

/** One report as a line of metrics.jsonl; JSON has no NaN or Infinity, so those are written as strings. */
export function jsonlLine(report: StepReport): string {
  const metrics = Object.fromEntries(Object.entries(report.metrics).map(([k, v]) => [k, Number.isFinite(v) ? v : String(v)]));
  return `${JSON.stringify({ step: report.step, metrics })}\n`;
}

/** The reports of a metrics.jsonl text, non-finite values restored; throws on a malformed line. */
export function parseJsonl(text: string): StepReport[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const parsed = JSON.parse(line) as { step?: unknown; metrics?: unknown };
      if (typeof parsed.step !== 'number' || typeof parsed.metrics !== 'object' || parsed.metrics === null) throw new Error(`not a metrics line: ${line.slice(0, 80)}`);
      const metrics = Object.fromEntries(Object.entries(parsed.metrics).map(([k, v]) => [k, Number(v)]));
      return { step: parsed.step, metrics };
    });
}
