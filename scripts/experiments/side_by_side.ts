/**
 * Two agentic processes on one machine: each workload alone, then both side by side, and what
 * share of its alone speed each keeps (docs/engine.md, "Sharing the cores"):
 *
 *   bun scripts/experiments/side_by_side.ts [--spin N] [--pairs train+train,train+eval,bench+bench] [--out output/side_by_side.json]
 *
 * --spin sets AGENTIC_WASM_SPIN for every process (1000000 is XNNPACK's own spin-wait, the
 * behaviour before the bound). Workloads: `train` is 6 steps of configs/calculator.yaml from the
 * nano preset (speed: steps 1-5 per second, from metrics.jsonl); `eval` is 64 FrozenLake episodes
 * of the tiny preset, repeated for as long as the train runs (episodes per second); `bench` is
 * `agentic bench` (training tokens per second). Run it on an otherwise quiet machine.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeFileAtomic } from '../../src/util/atomic';

const MAIN = resolve(import.meta.dir, '../../src/cli/main.ts');
const { values } = parseArgs({
  options: {
    spin: { type: 'string' },
    pairs: { type: 'string', default: 'train+train,train+eval,bench+bench' },
    out: { type: 'string', default: 'output/side_by_side.json' },
  },
});

type Workload = 'train' | 'eval' | 'bench';

/** Runs one workload to its end; resolves to its speed (its unit depends on the workload). */
async function run(workload: Workload, stopWhen?: Promise<unknown>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'agentic-sbs-'));
  const env = { ...process.env, ...(values.spin ? { AGENTIC_WASM_SPIN: values.spin } : {}) };
  const agentic = async (args: string[]) => {
    const child = Bun.spawn([process.execPath, MAIN, ...args], { env, stdout: 'ignore', stderr: 'pipe' });
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    if (code !== 0) throw new Error(`agentic ${args.join(' ')} exited ${code}: ${stderr.trim().split('\n').at(-1)}`);
  };
  try {
    if (workload === 'train') {
      await agentic([
        'train',
        '--config-name',
        'calculator',
        'pretrain=agentic:nano',
        'warm_start.enabled=false',
        'max_steps=6',
        'eval_steps=0',
        'save_steps=0',
        'track_with=[jsonl]',
        `output_dir=${dir}`,
      ]);
      const steps = readFileSync(join(dir, 'logs', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { step: number; metrics: Record<string, number> });
      const timed = steps.filter((s) => s.step >= 1 && s.step <= 5).map((s) => s.metrics['time/step_total']!);
      return timed.length / timed.reduce((a, b) => a + b, 0);
    }
    if (workload === 'bench') {
      await agentic(['bench', `--out=${join(dir, 'bench.json')}`]);
      return (JSON.parse(readFileSync(join(dir, 'bench.json'), 'utf8')) as { train_tok_s: number }).train_tok_s;
    }
    // eval: rounds of 64 episodes until the other process ends (at least one round)
    let stopped = false;
    void stopWhen?.then(() => (stopped = true));
    const started = performance.now();
    let episodes = 0;
    do {
      await agentic([
        'eval',
        '--config-name',
        'frozen_lake',
        'pretrain=agentic:tiny',
        'val_batch_size=64',
        'val_env_manager.num_env_groups=64',
        `--out=${join(dir, 'eval.json')}`,
      ]);
      episodes += 64;
    } while (stopWhen && !stopped);
    return episodes / ((performance.now() - started) / 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const UNIT: Record<Workload, string> = { train: 'steps/s', eval: 'episodes/s', bench: 'train tok/s' };
const rows: Array<Record<string, string | number>> = [];
const alone = new Map<Workload, number>();
for (const pair of values.pairs!.split(',')) {
  const [a, b] = pair.split('+') as [Workload, Workload];
  for (const w of [a, b]) if (!alone.has(w)) alone.set(w, await run(w));
  // the first runs to its end; an eval beside it repeats until then
  const first = run(a);
  const second = b === 'eval' ? run(b, first) : run(b);
  const [sa, sb] = await Promise.all([first, second]);
  for (const [w, speed, role] of [
    [a, sa, 'first'],
    [b, sb, 'second'],
  ] as const) {
    const row = {
      pair,
      process: role,
      workload: w,
      unit: UNIT[w],
      alone: +alone.get(w)!.toFixed(3),
      side_by_side: +speed.toFixed(3),
      share: +(speed / alone.get(w)!).toFixed(2),
    };
    rows.push(row);
    console.log(`${pair.padEnd(12)} ${role.padEnd(6)} ${w.padEnd(5)} alone ${row.alone} ${UNIT[w]}, side by side ${row.side_by_side} (${row.share}x)`);
  }
}
writeFileAtomic(values.out!, `${JSON.stringify({ spin: values.spin ?? 'default', cores: navigator.hardwareConcurrency, rows }, null, 2)}\n`);
console.log(`wrote ${values.out}`);
