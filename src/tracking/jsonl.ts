/**
 * The jsonl tracker: every metric of every step, one JSON object per line, appended to
 * `<logging_dir>/metrics.jsonl` (`{"step": 3, "metrics": {...}}`); a step whose episodes failed
 * also has `"failures": {"failed": 8, "episodes": 16, "kinds": [{"kind": "env_failure", "count": 8,
 * "first": "runAgent() threw: ..."}]}`, each kind's first reason whole. Each line is written whole,
 * so a crash can lose the line being written but never leaves a torn one behind another.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgenticError } from '../errors';
import type { EpisodeFailures } from '../rollout/failures';
import type { StepReport } from '../train/types';

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
  return `${JSON.stringify({ step: report.step, metrics, ...(report.failures ? { failures: report.failures } : {}) })}\n`;
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** A record's `failures`, as jsonlLine writes them. */
function isFailures(value: unknown): value is EpisodeFailures {
  if (typeof value !== 'object' || value === null) return false;
  const { failed, episodes, kinds } = value as Record<string, unknown>;
  return (
    isCount(failed) &&
    isCount(episodes) &&
    Array.isArray(kinds) &&
    kinds.every((k) => typeof k === 'object' && k !== null && typeof k.kind === 'string' && isCount(k.count) && typeof k.first === 'string')
  );
}

/**
 * The steps of a metrics.jsonl, in file order. A last line without its newline is what a crash
 * mid-write leaves, and is skipped; any other line that is not a `{step, metrics}` record is a
 * one-line error naming the file and line. Non-finite values written as strings come back as numbers.
 */
export function readMetricsJsonl(path: string): StepReport[] {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const torn = !text.endsWith('\n') ? lines.length - 1 : -1;
  const reports: StepReport[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '' || i === torn) return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      throw new AgenticError(`${path}:${i + 1}: not a JSON line`);
    }
    const { step, metrics, failures } = (record ?? {}) as { step?: unknown; metrics?: unknown; failures?: unknown };
    if (typeof step !== 'number' || !Number.isInteger(step) || typeof metrics !== 'object' || metrics === null || Array.isArray(metrics)) {
      throw new AgenticError(`${path}:${i + 1}: not a metrics record (expected {"step": <integer>, "metrics": {...}})`);
    }
    const values: Record<string, number> = {};
    for (const [key, value] of Object.entries(metrics)) {
      // NaN and the infinities are written as strings (jsonlLine), and come back as themselves
      if (typeof value === 'number') values[key] = value;
      else if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') values[key] = Number(value);
    }
    if (failures !== undefined && !isFailures(failures)) {
      throw new AgenticError(`${path}:${i + 1}: "failures" is not {"failed": <count>, "episodes": <count>, "kinds": [{"kind", "count", "first"}]}`);
    }
    reports.push(failures === undefined ? { step, metrics: values } : { step, metrics: values, failures });
  });
  return reports;
}
