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
    const metrics = Object.fromEntries(Object.entries(report.metrics).map(([k, v]) => [k, Number.isFinite(v) ? v : String(v)]));
    appendFileSync(this.path, `${JSON.stringify({ step: report.step, metrics })}\n`);
  }
}
