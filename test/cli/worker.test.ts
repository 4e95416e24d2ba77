/**
 * `agentic train` with distributed rollouts and `agentic worker`, all as child processes against a
 * real redis-server: the trainer killed between ingesting a step and its checkpoint, Redis killed
 * and restarted mid-run, and a worker that lags behind the weights.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { agentic, MAIN, scratch } from '../helpers';
import { missing } from '../system_tools';
import { otherMachine, RedisServer, WAITS_PLUGIN, WorkerProcess } from '../rollout_sources/distributed/helpers';

const started: Array<{ stop(): unknown }> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** bwrap shows a worker another machine's folders. */
const noBwrap = missing('bwrap');

/** Metrics that do not measure time or say which worker played what. */
function comparable(file: string): Array<{ step: number; metrics: Record<string, number> }> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .map(({ step, metrics }) => ({
      step,
      metrics: Object.fromEntries(
        Object.entries(metrics as Record<string, number>).filter(([k]) => !/^time\/|tokens_per_second|^system\/tps|^distributed\//.test(k)),
      ),
    }));
}

interface Ledger {
  final_jobs: number;
  jobs: Array<{ id: string; step: number; version: number; history: string; worker: string; attempts_started: number }>;
}

function ledgerOf(dir: string, exp: string, step: number): Ledger {
  return JSON.parse(readFileSync(join(dir, 'output', exp, 'checkpoints', `checkpoint-${step}`, 'distributed_ledger.json'), 'utf8'));
}

/** The lineage a checkpoint's trainer_state.json records. */
function historyOf(dir: string, exp: string, step: number): Array<{ id: string; from: number }> {
  return JSON.parse(readFileSync(join(dir, 'output', exp, 'checkpoints', `checkpoint-${step}`, 'trainer_state.json'), 'utf8')).history;
}

const YAML = (redis: string, latencyMs: number) => `
pretrain: agentic:nano
warm_start: {enabled: false}
plugins: [${WAITS_PLUGIN}]
max_steps: 4
save_steps: 2
eval_steps: 2
track_with: [jsonl]
sequence_length: 256
custom_envs:
  W: {env_type: waits, max_steps: 3, max_tokens_per_step: 8, env_config: {turns: 3, latency_ms: ${latencyMs}}}
train_env_manager: {num_env_groups: 3, group_size: 2, tags: [W], llm_proxy: {proxy_type: random}, max_env_num_per_worker: 2}
val_env_manager: {num_env_groups: 2, group_size: 1, tags: [W], llm_proxy: {proxy_type: random}}
rollout_batch_size: 6
val_batch_size: 2
actor_train: {training_args: {per_device_train_batch_size: 6}}
distributed: {redis_url: '${redis}', lock_duration_s: 1, stalled_interval_s: 0.5}
`;

let redis: RedisServer;
let dir: string;
let reference: ReturnType<typeof comparable>;

function workers(exp: string, names: string[], extra: string[] = [], wrap?: string[]): WorkerProcess[] {
  return names.map((name) => {
    const w = WorkerProcess.start(name, ['-c', 'exp.yaml', `exp_name=${exp}`, ...extra], { cwd: dir, wrap });
    started.push({ stop: () => (w.kill(9), w.done) });
    return w;
  });
}

function trainer(args: string[]): Subprocess {
  const child = Bun.spawn([process.execPath, MAIN, 'train', '-c', 'exp.yaml', ...args], {
    cwd: dir,
    stdout: 'ignore',
    stderr: 'pipe',
    env: { ...process.env, NO_COLOR: '1' },
  });
  started.push({ stop: () => (child.kill(9), child.exited) });
  return child;
}

/** Waits until the run's metrics.jsonl holds the report of `step`. */
async function reported(exp: string, step: number): Promise<void> {
  const file = join(dir, 'output', exp, 'logs', 'metrics.jsonl');
  for (let i = 0; i < 1200; i++) {
    if (existsSync(file) && readFileSync(file, 'utf8').includes(`"step":${step},`)) return;
    await sleep(25);
  }
  throw new Error(`no report of step ${step} in ${file}`);
}

describe.skipIf(missing('redis'))('agentic train with agentic worker processes', () => {
  beforeAll(async () => {
    redis = await RedisServer.start();
    dir = scratch({ 'exp.yaml': YAML(redis.url, 30) });
    const ws = workers('a', ['a1', 'a2']);
    await Promise.all(ws.map((w) => w.ready()));
    const run = await agentic(['train', '-c', 'exp.yaml', 'exp_name=a'], { cwd: dir });
    if (run.code !== 0) throw new Error(run.stderr);
    reference = comparable(join(dir, 'output/a/logs/metrics.jsonl'));
    for (const s of started.splice(0).reverse()) await s.stop();
  }, 120_000);

  afterAll(() => redis.stop());

  test('the uninterrupted run: every job of every step ingested once, none left in Redis; a checkpoint lists the jobs since the one before', () => {
    const first = ledgerOf(dir, 'a', 2);
    const last = ledgerOf(dir, 'a', 4);
    expect(first.jobs.map((j) => j.step)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(last.jobs.map((j) => j.step)).toEqual([2, 2, 2, 3, 3, 3]);
    expect([first.final_jobs, last.final_jobs]).toEqual([0, 6]);
    const jobs = [...first.jobs, ...last.jobs];
    expect(new Set(jobs.map((j) => j.id)).size).toBe(12);
    expect(jobs.every((j) => j.version === j.step)).toBe(true);
    expect(redis.cli('zcard', 'bull:a-train:completed').trim()).toBe('0');
    expect(reference.map((r) => r.step)).toEqual([0, 1, 2, 3, 4]);
  });

  test('the trainer killed between ingesting a step and its checkpoint, then resumed: the same ledger, no duplicate, the same run', async () => {
    const ws = workers('b', ['b1', 'b2']);
    await Promise.all(ws.map((w) => w.ready()));
    const first = trainer(['exp_name=b']);
    // step 2 is ingested and trained; its checkpoint comes after step 3
    await reported('b', 2);
    first.kill(9);
    await first.exited;
    expect(existsSync(join(dir, 'output/b/checkpoints/checkpoint-4'))).toBe(false);
    const before = ledgerOf(dir, 'b', 2).jobs;
    const resumed = await agentic(['train', '-c', 'exp.yaml', 'exp_name=b', 'resume_from_checkpoint=auto'], { cwd: dir });
    expect(resumed.code).toBe(0);
    const after = ledgerOf(dir, 'b', 4);
    expect(before.map((j) => j.step)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(after.final_jobs).toBe(6);
    expect(after.jobs.map((j) => j.step)).toEqual([2, 2, 2, 3, 3, 3]);
    expect(new Set([...before, ...after.jobs].map((j) => j.id)).size).toBe(12);
    expect(comparable(join(dir, 'output/b/logs/metrics.jsonl'))).toEqual(reference);
    expect(redis.cli('zcard', 'bull:b-train:completed').trim()).toBe('0');
  }, 120_000);

  test('resumed from an earlier checkpoint with another learning rate, after a kill left finished jobs of later steps: those are played again, never trained on', async () => {
    const ws = workers('e', ['e1', 'e2']);
    await Promise.all(ws.map((w) => w.ready()));
    const first = trainer(['exp_name=e']);
    await reported('e', 2);
    first.kill(9);
    await first.exited;
    // the workers finish the jobs of step 3 with the weights of the first history
    const step3 = () =>
      redis
        .cli('zrange', 'bull:e-train:completed', '0', '-1')
        .split('\n')
        .filter((id) => id.includes('.s3.')).length;
    for (let i = 0; i < 400 && step3() < 3; i++) await sleep(25);
    expect(step3()).toBe(3);
    const checkpoint = join(dir, 'output/e/checkpoints/checkpoint-2');
    const resumed = await agentic(
      ['train', '-c', 'exp.yaml', 'exp_name=e', 'actor_train.training_args.learning_rate=0.001', `resume_from_checkpoint=${checkpoint}`],
      {
        cwd: dir,
      },
    );
    expect(resumed.code).toBe(0);
    const lineage = historyOf(dir, 'e', 4);
    expect(lineage.map((h) => h.from)).toEqual([0, 2]);
    const { jobs } = ledgerOf(dir, 'e', 4);
    expect(jobs.map((j) => j.step)).toEqual([2, 2, 2, 3, 3, 3]);
    // step 2's finished jobs were played by the weights the resume started from (the first history's
    // version 2, its own) and are taken; step 3's by weights the resumed run never had, so played again
    expect(jobs.every((j) => j.version === j.step)).toBe(true);
    expect(jobs.filter((j) => j.step === 3).map((j) => j.history)).toEqual([1, 2, 3].map(() => lineage[1]!.id));
    const metrics = readFileSync(join(dir, 'output/e/logs/metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { step: number; metrics: Record<string, number> });
    expect(metrics.find((r) => r.step === 3)!.metrics['distributed/abandoned_jobs']).toBe(3);
  }, 120_000);

  test('a long-lived worker with its own copy of the actor, and a resume from step 2 of the finished run with another learning rate: it drops the abandoned weights, and no row of them is trained on', async () => {
    const overrides = ['exp_name=f', 'eval_steps=0', 'train_env_manager.llm_proxy.proxy_type=policy'];
    const [long] = workers('f', ['f1'], overrides.slice(1));
    await long!.ready();
    const first = await agentic(['train', '-c', 'exp.yaml', ...overrides], { cwd: dir });
    expect(first.code).toBe(0);
    const abandoned = historyOf(dir, 'f', 4);
    const checkpoint = join(dir, 'output/f/checkpoints/checkpoint-2');
    const resumed = await agentic(
      ['train', '-c', 'exp.yaml', ...overrides, 'actor_train.training_args.learning_rate=0.001', `resume_from_checkpoint=${checkpoint}`],
      {
        cwd: dir,
      },
    );
    expect(resumed.code).toBe(0);
    const { jobs } = ledgerOf(dir, 'f', 4);
    // each step played by the version the schedule gives it, none by the worker's later weights of the abandoned history
    expect(jobs.filter((j) => j.step >= 2).map((j) => [j.step, j.version])).toEqual([2, 2, 2, 3, 3, 3].map((step) => [step, step]));
    const lineage = historyOf(dir, 'f', 4);
    expect(lineage.map((h) => h.from)).toEqual([0, 2]);
    expect(lineage[0]).toEqual(abandoned[0]!);
    expect(jobs.map((j) => [j.step, j.version, j.history])).toEqual([2, 2, 2, 3, 3, 3].map((step) => [step, step, lineage[1]!.id]));
    expect(long!.stderr).toContain(`dropping weights-3-${abandoned[0]!.id}: the job asks for weights of history ${lineage[1]!.id}`);
  }, 180_000);

  test('Redis killed and restarted mid-run: nothing lost, nothing trained twice, the same run', async () => {
    const ws = workers('c', ['c1', 'c2']);
    await Promise.all(ws.map((w) => w.ready()));
    const run = trainer(['exp_name=c']);
    await reported('c', 1);
    await redis.kill();
    await sleep(1000);
    await redis.restart();
    expect(await run.exited).toBe(0);
    const jobs = [...ledgerOf(dir, 'c', 2).jobs, ...ledgerOf(dir, 'c', 4).jobs];
    expect(jobs.map((j) => j.step)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(12);
    expect(comparable(join(dir, 'output/c/logs/metrics.jsonl'))).toEqual(reference);
  }, 120_000);

  test.skipIf(noBwrap)(
    'a worker that lags behind the weights: its rows past the staleness bound are dropped, counted and played again',
    async () => {
      const overrides = [
        'exp_name=d',
        'async_generation_ratio=1',
        'max_steps=6',
        'save_steps=0',
        'eval_steps=0',
        'train_env_manager.llm_proxy.proxy_type=policy',
        'custom_envs.W.env_config.latency_ms=100',
      ];
      const [normal] = workers('d', ['normal'], overrides.slice(1));
      await normal!.ready();
      const run = trainer(overrides);
      // the lagging worker's machine shows the trainer's weights folder as one that holds only version 0
      const folder = join(dir, 'output/d/weights');
      const first = () => (existsSync(folder) ? readdirSync(folder).find((name) => name.startsWith('weights-0-')) : undefined);
      for (let i = 0; i < 1200 && !first(); i++) await sleep(25);
      const lagDir = join(dir, 'lagging');
      cpSync(join(folder, first()!), join(lagDir, first()!), { recursive: true });
      const onLag = otherMachine([[lagDir, join(dir, 'output/d/weights')]]);
      const [lagging] = workers('d', ['lagging'], [...overrides.slice(1), 'distributed.weights_timeout_s=0'], onLag);
      await lagging!.ready();
      // its folder never catches up, so every job it takes is played again: once the trainer has
      // dropped one of its results it stops (SIGTERM finishes the job in hand), as a worker whose
      // share lags only for a while would, and the normal worker plays the rest
      let said = '';
      const reading = (async () => {
        for await (const chunk of run.stderr as ReadableStream<Uint8Array>) said += new TextDecoder().decode(chunk);
      })();
      for (let i = 0; i < 2400 && !said.includes('distributed: worker lagging played job '); i++) await sleep(25);
      lagging!.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      const reports = comparable(join(dir, 'output/d/logs/metrics.jsonl'));
      const metrics = readFileSync(join(dir, 'output/d/logs/metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).metrics as Record<string, number>);
      expect(reports).toHaveLength(6);
      expect(Math.max(...metrics.map((m) => m['async/staleness_max']!))).toBeLessThanOrEqual(1);
      expect(metrics.reduce((n, m) => n + m['distributed/dropped_stale_samples']!, 0)).toBeGreaterThan(0);
      const jobs = ledgerOf(dir, 'd', 6).jobs;
      expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
      expect(jobs.every((j) => j.step - j.version <= 1)).toBe(true);
      expect(lagging!.stderr).toContain('did not appear within 0 s; playing with version 0');
      await reading;
      expect(said).toContain('dropped and played again');
    },
    180_000,
  );

  test.skipIf(noBwrap)(
    'a worker that never gets the weights, alone: after distributed.max_stale_replays drops of one job the run stops with one line naming it',
    async () => {
      const overrides = [
        'exp_name=never',
        'async_generation_ratio=1',
        'max_steps=6',
        'save_steps=0',
        'eval_steps=0',
        'train_env_manager.llm_proxy.proxy_type=policy',
        'distributed.max_stale_replays=2',
      ];
      const run = trainer(overrides);
      const folder = join(dir, 'output/never/weights');
      const first = () => (existsSync(folder) ? readdirSync(folder).find((name) => name.startsWith('weights-0-')) : undefined);
      for (let i = 0; i < 1200 && !first(); i++) await sleep(25);
      const lagDir = join(dir, 'lagging-never');
      cpSync(join(folder, first()!), join(lagDir, first()!), { recursive: true });
      const onLag = otherMachine([[lagDir, folder]]);
      workers('never', ['lagging'], [...overrides.slice(1), 'distributed.weights_timeout_s=0'], onLag);
      expect(await run.exited).toBe(1);
      const lines = (await new Response(run.stderr as ReadableStream).text()).trim().split('\n');
      expect(lines.filter((line) => line.startsWith('warning: distributed: worker lagging played job '))).toHaveLength(1);
      expect(lines.at(-1)).toMatch(
        /^error: distributed: job \S+ was played 2 times with weights too old for step \d+ \(distributed.max_stale_replays 2\), by lagging: /,
      );
    },
    180_000,
  );
});
