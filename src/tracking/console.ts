/**
 * The console tracker: one compact line per logged step on stderr, and on a terminal a progress
 * bar with the ETA beneath it (redrawn in place; plain lines only when stderr is not a terminal,
 * as in CI). A step whose episodes failed ends its line with them, by kind with the first reason
 * of each, and is printed whatever logging_steps says.
 */
import { failuresLine } from '../rollout/failures';
import type { StepReport } from '../train/types';

const fixed = (x: number | undefined, digits: number) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits));

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Mean of `<prefix>env/<tag>/<name>` over tags (`success`, `action_is_valid`), if the envs report it. */
export function tagMean(metrics: Record<string, number>, prefix: '' | 'val/', name: string): number | undefined {
  const values = Object.entries(metrics)
    .filter(([key]) => key.startsWith(`${prefix}env/`) && key.endsWith(`/${name}`) && key.split('/').length === (prefix ? 4 : 3))
    .map(([, v]) => v);
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined;
}

const success = (metrics: Record<string, number>, prefix: '' | 'val/') => tagMean(metrics, prefix, 'success');

/** The one line of a step. */
export function stepLine(report: StepReport, maxSteps: number): string {
  const m = report.metrics;
  const parts: string[] = [report.step >= maxSteps ? `final   ` : `step ${String(report.step + 1).padStart(String(maxSteps).length)}/${maxSteps}`];
  if (m['rollout/score/mean'] !== undefined) parts.push(`score ${fixed(m['rollout/score/mean'], 3)}`);
  const trainSuccess = success(m, '');
  if (trainSuccess !== undefined) parts.push(`success ${fixed(trainSuccess, 2)}`);
  if (m['val/score/mean'] !== undefined) {
    const valSuccess = success(m, 'val/');
    parts.push(valSuccess !== undefined ? `val_success ${fixed(valSuccess, 2)}` : `val_score ${fixed(m['val/score/mean'], 3)}`);
  }
  if (m['actor/pg_loss'] !== undefined) parts.push(`pg_loss ${fixed(m['actor/pg_loss'], 4)}`);
  if (m['critic/vf_loss'] !== undefined) parts.push(`vf_loss ${fixed(m['critic/vf_loss'], 4)}`);
  if (m['actor/entropy'] !== undefined) parts.push(`entropy ${fixed(m['actor/entropy'], 3)}`);
  if (m['critic/kl'] !== undefined) parts.push(`kl ${fixed(m['critic/kl'], 4)}`);
  if (m['actor/grad_norm'] !== undefined) parts.push(`grad_norm ${fixed(m['actor/grad_norm'], 3)}`);
  if (m['tokens/response_length/mean'] !== undefined) parts.push(`resp_len ${fixed(m['tokens/response_length/mean'], 1)}`);
  parts.push(`${fixed(m['time/step_total'], 1)}s`);
  const failed = report.failures ? failuresLine(report.failures) : null;
  if (failed) parts.push(failed);
  return parts.join('  ');
}

export class ConsoleTracker {
  private readonly started = performance.now();
  private readonly tty: boolean;
  private barShown = false;

  constructor(
    private readonly maxSteps: number,
    private readonly loggingSteps: number,
    private readonly firstStep = 0,
    private readonly write: (text: string) => void = (text) => process.stderr.write(text),
    tty = Boolean(process.stderr.isTTY),
  ) {
    this.tty = tty;
  }

  log(report: StepReport): void {
    const last = report.step >= this.maxSteps - 1;
    if (report.step % this.loggingSteps === 0 || last || report.failures) {
      this.clearBar();
      this.write(`${stepLine(report, this.maxSteps)}\n`);
    }
    if (this.tty && report.step < this.maxSteps) this.drawBar(report.step + 1);
  }

  /** Clears the bar (before other output, and at the end). */
  clearBar(): void {
    if (this.barShown) this.write('\r\u001B[2K');
    this.barShown = false;
  }

  private drawBar(done: number): void {
    const width = 30;
    const fraction = done / this.maxSteps;
    const filled = Math.round(fraction * width);
    const elapsed = (performance.now() - this.started) / 1000;
    const perStep = elapsed / Math.max(1, done - this.firstStep);
    const eta = perStep * (this.maxSteps - done);
    this.write(
      `\r\u001B[2K[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.maxSteps}  elapsed ${formatDuration(elapsed)}  eta ${formatDuration(eta)}`,
    );
    this.barShown = true;
  }
}
