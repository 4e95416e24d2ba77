/**
 * How busy each core is while a command runs, read from /proc/stat (Linux):
 *
 *   bun scripts/experiments/cpu_usage.ts --out output/cpu.json -- bun scripts/experiments/learn.ts agentic async_generation_ratio=1
 *
 * Samples every second; prints and writes each core's mean busy share over the run, and the
 * per-minute means, so a run whose rollout worker and trainer share the machine shows whether both
 * cores work. The command's own output passes through; its exit code is this script's. Stopped by
 * SIGTERM or SIGINT, it stops the command and still reports.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../../src/util/atomic';

interface CoreTimes {
  busy: number;
  total: number;
}

/** Per core (cpu0, cpu1, ...): jiffies spent busy (all but idle and iowait) and in total. */
function coreTimes(): CoreTimes[] {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((line) => /^cpu\d+ /.test(line))
    .map((line) => {
      const fields = line.trim().split(/\s+/).slice(1).map(Number);
      const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
      const idle = fields[3]! + fields[4]!;
      return { busy: total - idle, total };
    });
}

const args = process.argv.slice(2);
const dash = args.indexOf('--');
const outAt = args.indexOf('--out');
const out = outAt >= 0 && outAt < dash ? args[outAt + 1]! : null;
const command = dash >= 0 ? args.slice(dash + 1) : [];
if (command.length === 0) {
  console.error('usage: bun scripts/experiments/cpu_usage.ts [--out FILE.json] -- COMMAND [ARGS...]');
  process.exit(2);
}

const started = performance.now();
const seconds: number[][] = [];
let last = coreTimes();
const timer = setInterval(() => {
  const now = coreTimes();
  seconds.push(now.map((c, i) => (c.busy - last[i]!.busy) / Math.max(1, c.total - last[i]!.total)));
  last = now;
}, 1000);

const child = Bun.spawn(command, { stdio: ['inherit', 'inherit', 'inherit'] });
// stopped from outside (`timeout`, Ctrl-C): stop the command too, and still report
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => child.kill(signal));
const code = await child.exited;
clearInterval(timer);

const cores = last.length;
const mean = (rows: number[][], core: number) => (rows.length === 0 ? 0 : rows.reduce((a, r) => a + r[core]!, 0) / rows.length);
const perMinute: number[][] = [];
for (let at = 0; at < seconds.length; at += 60) {
  const minute = seconds.slice(at, at + 60);
  perMinute.push(Array.from({ length: cores }, (_, core) => Math.round(mean(minute, core) * 1000) / 1000));
}
const summary = {
  command: command.join(' '),
  seconds: Math.round((performance.now() - started) / 1000),
  busy_mean: Array.from({ length: cores }, (_, core) => Math.round(mean(seconds, core) * 1000) / 1000),
  busy_per_minute: perMinute,
};
console.error(`cpu: ${summary.busy_mean.map((b, i) => `core ${i} ${(b * 100).toFixed(0)}% busy`).join(', ')} over ${summary.seconds} s`);
if (out) writeFileAtomic(out, `${JSON.stringify(summary, null, 2)}\n`);
process.exit(code);
