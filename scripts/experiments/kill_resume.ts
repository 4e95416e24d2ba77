/**
 * Kill-and-resume exactness, with real processes: `bun scripts/experiments/kill_resume.ts [overrides...]`.
 *
 * Trains a small config once without interruption, then again several times, each time killing
 * `agentic train` with SIGKILL at another point: before the first checkpoint, right after one, while
 * a checkpoint is being written, in the middle of a step, and after the last checkpoint (final
 * validation, saving the policy). Each killed run is continued with
 * `agentic train ... resume_from_checkpoint=auto` (the warm start's base deleted first, so the
 * resumed run cannot lean on it) and compared with the uninterrupted one: the final policy's
 * model.safetensors byte for byte, and every metric of every step except wall-clock timings.
 * Prints one row per kill point; exits 1 if any row differs.
 *
 * The default config is bandit_grpo on the nano preset with a small warm start and cosine LR
 * schedule; overrides go on top (leave max_steps and save_steps: the kill points count on them).
 * Runs go to ./output/kill_resume/.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { join, resolve } from 'node:path';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import type { StepReport } from '../../src/train/types';

const MAIN = resolve(import.meta.dir, '../../src/cli/main.ts');
const WORK = resolve('output', 'kill_resume');

const OVERRIDES = process.argv.slice(2);
const MAX_STEPS = 6;
const SAVE_STEPS = 2;

function runArgs(out: string, extra: readonly string[]): string[] {
  return [
    '--config-name',
    'bandit_grpo',
    'pretrain=agentic:nano',
    `max_steps=${MAX_STEPS}`,
    `save_steps=${SAVE_STEPS}`,
    'eval_steps=3',
    'rollout_batch_size=8',
    'train_env_manager.num_env_groups=2',
    'train_env_manager.group_size=4',
    'val_batch_size=2',
    'val_env_manager.num_env_groups=2',
    'custom_envs.Bandit.max_tokens_per_step=6',
    'actor_train.training_args.learning_rate=1e-3',
    'actor_train.training_args.lr_scheduler_type=cosine',
    'warm_start.enabled=true',
    'warm_start.episodes=16',
    'warm_start.epochs=1',
    `warm_start.output_dir=${out}/base`,
    'checkpoint_config.max_ckpt_to_keep=2',
    'track_with=[jsonl]',
    `output_dir=${out}`,
    ...OVERRIDES,
    ...extra,
  ];
}

const TIMING = /^time\/|tokens_per_second|^system\/tps$/;
const comparable = (reports: readonly StepReport[]) =>
  reports.map((r) => ({ step: r.step, metrics: Object.fromEntries(Object.entries(r.metrics).filter(([k]) => !TIMING.test(k))) }));

async function train(out: string, extra: readonly string[] = []): Promise<void> {
  const child = Bun.spawn([process.execPath, MAIN, 'train', ...runArgs(out, extra)], { stdout: 'ignore', stderr: 'pipe' });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`agentic train in ${out} exited ${code}:\n${stderr}`);
}

const checkpointsDir = (out: string) => join(out, 'checkpoints');
const entries = (out: string) => (existsSync(checkpointsDir(out)) ? readdirSync(checkpointsDir(out)).sort() : []);

/** When to kill: a promise that resolves at the moment, given the run's output folder. */
interface KillPoint {
  name: string;
  moment: (out: string, timing: ReferenceTiming) => Promise<void>;
}

interface ReferenceTiming {
  /** Seconds from start until each checkpoint-N appeared in the uninterrupted run. */
  appeared: Map<number, number>;
  total: number;
}

const sleep = (seconds: number) => Bun.sleep(Math.max(0, seconds * 1000));

/** Resolves as soon as an entry matching `pattern` exists in the checkpoint folder (inotify, then a poll as backstop). */
function entryAppears(out: string, pattern: RegExp): Promise<void> {
  return new Promise((done) => {
    let watcher: FSWatcher | null = null;
    const check = () => {
      if (!entries(out).some((name) => pattern.test(name))) return false;
      watcher?.close();
      clearInterval(poll);
      done();
      return true;
    };
    const poll = setInterval(() => {
      if (check() || watcher || !existsSync(checkpointsDir(out))) return;
      watcher = watch(checkpointsDir(out), (_, name) => {
        if (name && pattern.test(name)) check();
      });
    }, 2);
  });
}

const KILL_POINTS: KillPoint[] = [
  { name: 'before the first checkpoint', moment: async (_, t) => sleep(t.appeared.get(SAVE_STEPS)! * 0.6) },
  { name: `right after checkpoint-${SAVE_STEPS}`, moment: (out) => entryAppears(out, new RegExp(`^checkpoint-${SAVE_STEPS}$`)) },
  { name: `while writing checkpoint-${2 * SAVE_STEPS}`, moment: (out) => entryAppears(out, new RegExp(`^\\.checkpoint-${2 * SAVE_STEPS}\\.tmp-`)) },
  {
    name: `while writing checkpoint-${2 * SAVE_STEPS}, its actor written`,
    moment: async (out) => {
      await entryAppears(out, new RegExp(`^\\.checkpoint-${2 * SAVE_STEPS}\\.tmp-`));
      const temporary = entries(out).find((name) => name.startsWith(`.checkpoint-${2 * SAVE_STEPS}.tmp-`));
      if (!temporary) return;
      const folder = join(checkpointsDir(out), temporary);
      // until the actor is in, or the folder was renamed into place first (the row then says so)
      while (existsSync(folder) && !existsSync(join(folder, 'actor'))) await Bun.sleep(1);
    },
  },
  {
    name: `mid-step after checkpoint-${2 * SAVE_STEPS}`,
    moment: async (out, t) => {
      await entryAppears(out, new RegExp(`^checkpoint-${2 * SAVE_STEPS}$`));
      await sleep((t.appeared.get(3 * SAVE_STEPS)! - t.appeared.get(2 * SAVE_STEPS)!) / SAVE_STEPS / 2);
    },
  },
  { name: `after the last checkpoint (${MAX_STEPS})`, moment: (out) => entryAppears(out, new RegExp(`^checkpoint-${MAX_STEPS}$`)) },
];

interface Row {
  point: string;
  killedAt: number;
  onDisk: string;
  resumedFrom: string;
  weights: boolean;
  metrics: boolean;
  steps: string;
}

async function killAndResume(point: KillPoint, timing: ReferenceTiming, reference: string): Promise<Row> {
  const out = join(WORK, point.name.replace(/[^a-z0-9]+/gi, '_'));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const started = performance.now();
  const child = Bun.spawn([process.execPath, MAIN, 'train', ...runArgs(out, [])], { stdout: 'ignore', stderr: 'ignore' });
  const finished = child.exited.then(() => 'finished' as const);
  const outcome = await Promise.race([point.moment(out, timing).then(() => 'moment' as const), finished]);
  if (outcome === 'moment') child.kill('SIGKILL');
  await child.exited;
  const killedAt = (performance.now() - started) / 1000;
  const onDisk = entries(out).map((name) =>
    name.startsWith('.') ? `${name.replace(/\.tmp-.*/, '')}.tmp [${readdirSync(join(checkpointsDir(out), name)).join(' ') || 'empty'}]` : name,
  );
  // the base must not be needed: a resumed run loads every role from its checkpoint
  rmSync(join(out, 'base'), { recursive: true, force: true });
  const resume = Bun.spawn([process.execPath, MAIN, 'train', ...runArgs(out, ['resume_from_checkpoint=auto'])], { stdout: 'ignore', stderr: 'pipe' });
  const [stderr, code] = await Promise.all([new Response(resume.stderr).text(), resume.exited]);
  if (code !== 0) throw new Error(`resuming ${point.name} exited ${code}:\n${stderr}`);
  const resumedFrom = /resuming from \S*?(checkpoint-\d+)/.exec(stderr)?.[1] ?? 'none (step 0)';
  const weights = readFileSync(join(out, 'model', 'model.safetensors')).equals(readFileSync(join(reference, 'model', 'model.safetensors')));
  const [a, b] = [readMetricsJsonl(join(reference, 'logs', 'metrics.jsonl')), readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'))];
  const metrics = Bun.deepEquals(comparable(a), comparable(b));
  return {
    point: outcome === 'moment' ? point.name : `${point.name} (the run finished first)`,
    killedAt,
    onDisk: onDisk.join(', ') || 'nothing',
    resumedFrom,
    weights,
    metrics,
    steps: b.map((r) => r.step).join(','),
  };
}

async function main(): Promise<void> {
  const reference = join(WORK, 'uninterrupted');
  rmSync(reference, { recursive: true, force: true });
  mkdirSync(reference, { recursive: true });
  const appeared = new Map<number, number>();
  const started = performance.now();
  const watching = (async () => {
    for (let step = SAVE_STEPS; step <= MAX_STEPS; step += SAVE_STEPS) {
      await entryAppears(reference, new RegExp(`^checkpoint-${step}$`));
      appeared.set(step, (performance.now() - started) / 1000);
    }
  })();
  await train(reference);
  await watching;
  const timing: ReferenceTiming = { appeared, total: (performance.now() - started) / 1000 };
  console.log(
    `uninterrupted: ${MAX_STEPS} steps in ${timing.total.toFixed(1)} s; checkpoints at ${[...appeared].map(([s, t]) => `${s}@${t.toFixed(1)}s`).join(' ')}`,
  );

  const rows: Row[] = [];
  for (const point of KILL_POINTS) {
    const row = await killAndResume(point, timing, reference);
    rows.push(row);
    console.log(
      `  ${row.point}: killed at ${row.killedAt.toFixed(1)} s, resumed from ${row.resumedFrom}, weights ${row.weights ? 'identical' : 'DIFFER'}, metrics ${row.metrics ? 'identical' : 'DIFFER'}`,
    );
  }
  console.log('\n| kill point | killed at (s) | on disk at the kill | resumed from | weights | metrics | steps logged |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.point} | ${r.killedAt.toFixed(1)} | ${r.onDisk} | ${r.resumedFrom} | ${r.weights ? 'identical' : 'DIFFER'} | ${r.metrics ? 'identical' : 'DIFFER'} | ${r.steps} |`,
    );
  }
  if (rows.some((r) => !r.weights || !r.metrics)) process.exit(1);
}

await main();
