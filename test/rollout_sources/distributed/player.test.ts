/**
 * Distributed rollouts as the trainer's player sees them (src/rollout_sources/distributed/): a real
 * redis-server, real `agentic worker` processes, real BullMQ; a worker killed or stalled with jobs
 * in hand, and what the trainer ingests.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Worker } from 'bullmq';
import IORedis from 'ioredis';
import { loadConfig } from '../../../src/config/load';
import type { AgenticConfig } from '../../../src/config/schema';
import { startBackend } from '../../../src/engine/backend';
import { loadModel, loadTokenizer } from '../../../src/model/load';
import type { Qwen2Model } from '../../../src/model/qwen2';
import { PluginHost } from '../../../src/host/plugin_host';
import { ChatFormat } from '../../../src/rollout/chat';
import { EnvManager } from '../../../src/rollout/env_manager';
import type { Episode } from '../../../src/rollout/types';
import { DistributedPlayer } from '../../../src/rollout_sources/distributed/player';
import { agentic, lines, scratch } from '../../helpers';
import { missing } from '../../system_tools';
import { RedisServer, WAITS_PLUGIN, WorkerProcess } from './helpers';

let model: Qwen2Model;
let chat: ChatFormat;

beforeAll(async () => {
  await startBackend('wasm');
  model = (await loadModel('agentic:nano', { seed: 1, trainable: false })).model;
  chat = new ChatFormat(await loadTokenizer('agentic:nano'));
});

const started: Array<{ stop(): unknown }> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
});

function yaml(o: { groups: number; size: number; latencyMs: number; perWorker: number; redis: string }): string {
  return `
pretrain: agentic:nano
plugins: [${WAITS_PLUGIN}]
eval_steps: 0
sequence_length: 256
custom_envs:
  W: {env_type: waits, max_steps: 3, max_tokens_per_step: 8, env_config: {turns: 3, latency_ms: ${o.latencyMs}}}
train_env_manager: {num_env_groups: ${o.groups}, group_size: ${o.size}, tags: [W], llm_proxy: {proxy_type: random}, max_env_num_per_worker: ${o.perWorker}}
rollout_batch_size: ${o.groups * o.size}
distributed: {redis_url: '${o.redis}', queue: test, lock_duration_s: 1, stalled_interval_s: 0.5}
`;
}

async function setUp(text: string): Promise<{ dir: string; config: AgenticConfig; host: PluginHost }> {
  const dir = scratch({ 'exp.yaml': text });
  const host = new PluginHost();
  const { config } = await loadConfig({ configFile: join(dir, 'exp.yaml'), overrides: [] }, host);
  return { dir, config, host };
}

/** An episode without what timing decides. */
function played(e: Episode): Omit<Episode, 'seconds'> {
  const { seconds: _, ...rest } = e;
  return rest;
}

function worker(name: string, dir: string, env: Record<string, string> = {}, overrides: string[] = []): WorkerProcess {
  const w = WorkerProcess.start(name, ['-c', 'exp.yaml', ...overrides], { cwd: dir, env });
  started.push({ stop: () => (w.kill(9), w.done) });
  return w;
}

async function openPlayer(config: AgenticConfig, host: PluginHost): Promise<DistributedPlayer> {
  const player = DistributedPlayer.open(config, await EnvManager.build('train', config, host), null, null, chat.tokenizer);
  started.push({ stop: () => player.close() });
  await player.prepare(0);
  await player.pushWeights(0, model);
  return player;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `promise`, or a rejection saying it hung once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`hung for ${ms} ms`)))]);
}

describe.skipIf(missing('redis'))('distributed rollouts through Redis and BullMQ', () => {
  test('3 workers, 64 episodes, one killed with jobs in hand: every job ingested once, the replayed ones marked, the episodes of an in-process run', async () => {
    const redis = await RedisServer.start();
    started.push(redis);
    const { dir, config, host } = await setUp(yaml({ groups: 32, size: 2, latencyMs: 60, perWorker: 4, redis: redis.url }));
    const workers = ['w1', 'w2', 'w3'].map((name) => worker(name, dir));
    await Promise.all(workers.map((w) => w.ready()));
    const player = await openPlayer(config, host);
    const rollout = player.rollout(64, 0);
    // once w1 holds jobs it is killed: their locks lapse, and w2 and w3 play them again from their seeds
    const heldByW1 = () =>
      redis
        .cli('lrange', 'bull:test-train:active', '0', '-1')
        .split('\n')
        .filter((id) => id && redis.cli('hget', `bull:test-train:${id}`, 'pb').trim() === 'w1');
    let held: string[] = [];
    for (let i = 0; i < 400 && held.length === 0; i++) {
      await sleep(10);
      held = heldByW1();
    }
    expect(held.length).toBeGreaterThan(0);
    workers[0]!.kill(9);
    const { batch, version } = await rollout;
    player.ledger.count(0, true);
    const ledger = player.ledger.entries();

    expect(version).toBe(0);
    expect(ledger).toHaveLength(32);
    expect(new Set(ledger.map((e) => e.id)).size).toBe(32);
    const replayed = ledger.filter((e) => e.attempts_started > 1);
    expect(replayed.length).toBeGreaterThan(0);
    // each job w1 held was played again, unless w1 returned it in the moment before the kill
    for (const id of held) expect(ledger.find((e) => e.id === id)).toSatisfy((e) => e!.attempts_started > 1 || e!.worker === 'w1');
    for (const entry of replayed) {
      expect(entry.stalled_counter).toBeGreaterThan(0);
      expect(entry.worker).not.toBe('w1');
    }
    expect(batch.metrics['distributed/replayed_jobs']).toBe(replayed.length);

    const inProcess = await (await EnvManager.build('train', config, host)).play(64, null, chat);
    expect(batch.episodes.map(played)).toEqual(inProcess.episodes.map(played));
    expect(batch.samples.map((s) => [s.trajId, [...s.inputIds]])).toEqual(inProcess.samples.map((s) => [s.trajId, [...s.inputIds]]));
  }, 60_000);

  test('a worker whose env blocks its event loop past the lock: the job is played elsewhere, the late result refused', async () => {
    const redis = await RedisServer.start();
    started.push(redis);
    // one job each (the other's takes 3 x 200 ms); the stuck worker's first step blocks for 3 s
    const { dir, config, host } = await setUp(yaml({ groups: 2, size: 1, latencyMs: 200, perWorker: 1, redis: redis.url }));
    const stuck = worker('stuck', dir, { AGENTIC_TEST_BLOCK_MS: '3000' });
    const other = worker('other', dir);
    await Promise.all([stuck.ready(), other.ready()]);
    const player = await openPlayer(config, host);
    const { batch } = await player.rollout(2, 0);
    player.ledger.count(0, true);
    const ledger = player.ledger.entries();
    // the other worker played its own job, then the stuck one's once its lock had lapsed
    expect(ledger.map((e) => e.worker)).toEqual(['other', 'other']);
    const replayed = ledger.filter((e) => e.attempts_started > 1);
    expect(replayed).toHaveLength(1);
    expect(replayed[0]!.stalled_counter).toBe(1);
    expect(batch.episodes).toHaveLength(2);
    // the stuck worker wakes, finishes its episode and is refused by BullMQ
    for (let i = 0; i < 200 && !stuck.stderr.includes('late result was refused'); i++) await sleep(25);
    expect(stuck.stderr).toContain('late result was refused');
  }, 60_000);

  test('a worker started with another config refuses the job and stops with one line; the trainer stops with the reason', async () => {
    const redis = await RedisServer.start();
    started.push(redis);
    const { dir, config, host } = await setUp(yaml({ groups: 2, size: 1, latencyMs: 0, perWorker: 1, redis: redis.url }));
    const other = worker('other', dir, {}, ['seed=7']);
    await other.ready();
    const player = await openPlayer(config, host);
    await expect(player.rollout(2, 0)).rejects.toThrow(
      /^distributed: job test\.s0\.train\.W\.g\d\.e0 failed \(1 attempt\(s\), last on other\): distributed: job .* differ from this worker's config/,
    );
    expect(await other.done).toBe(2);
    expect(lines(other.stderr).filter((l) => l.startsWith('error'))).toEqual([expect.stringMatching(/^error: distributed: job .* rollout settings .* differ/)]);
  }, 60_000);

  test('a job that failed for good (a worker of another config) does not fail the resumed run: its step is played again', async () => {
    const redis = await RedisServer.start();
    started.push(redis);
    const { dir, config, host } = await setUp(yaml({ groups: 2, size: 1, latencyMs: 0, perWorker: 1, redis: redis.url }));
    const good = worker('good', dir);
    await good.ready();
    const first = await openPlayer(config, host);
    const { countersAfter } = await first.rollout(2, 0);
    first.ledger.count(0, true);
    good.kill(9);
    await good.done;
    const other = worker('other', dir, {}, ['seed=7']);
    await other.ready();
    await first.pushWeights(1, model);
    await expect(first.rollout(2, 1)).rejects.toThrow(/^distributed: job test\.s1\.train\.W\.g\d\.e1 failed \(1 attempt\(s\), last on other\)/);
    expect(await other.done).toBe(2);
    await first.close();
    // the cause fixed (a worker of the run's config), the run resumes at step 1
    const fixed = worker('fixed', dir);
    await fixed.ready();
    const resumed = DistributedPlayer.open(config, await EnvManager.build('train', config, host), null, null, chat.tokenizer);
    started.push({ stop: () => resumed.close() });
    await resumed.restoreCounters(countersAfter);
    await resumed.prepare(1);
    await resumed.pushWeights(1, model);
    const { batch } = await within(resumed.rollout(2, 1), 15_000);
    expect(batch.episodes.map((e) => e.episodeId)).toEqual([1, 1]);
    expect(redis.cli('zcard', 'bull:test-train:failed').trim()).toBe('0');
  }, 60_000);

  test('a malformed result fails its job with one line naming the worker, whatever is wrong with it', async () => {
    const redis = await RedisServer.start();
    started.push(redis);
    const { config, host } = await setUp(yaml({ groups: 1, size: 1, latencyMs: 0, perWorker: 1, redis: redis.url }));
    const [valid] = (await (await EnvManager.build('train', config, host)).play(1, null, chat)).episodes;
    const turn = valid!.turns[0]!;
    const long = Array.from({ length: 300 }, () => 1);
    // by step: what the misbehaving worker returns, and what the trainer says of it
    type Asked = { version: number; history?: string };
    const cases: Array<{ result: (d: Asked) => object; says: RegExp }> = [
      { result: (d) => ({ episodes: [], version: d.version, history: d.history }), says: /has 0 episode\(s\) for a group of 1$/ },
      {
        result: (d) => ({ episodes: [valid], version: d.version + 1, history: d.history }),
        says: /was played by version 2, above the version 1 the job asked for$/,
      },
      {
        result: (d) => ({ episodes: [{ ...valid, turns: [{ ...turn, responseIds: [10 ** 6] }] }], version: d.version, history: d.history }),
        says: /episode 0 turn 0: responseIds holds 1000000, not a token id below the vocabulary \(\d+\)$/,
      },
      {
        // NaN travels through JSON as null
        result: (d) => ({
          episodes: [{ ...valid, turns: [{ ...turn, logProbs: turn.logProbs.map(() => Number.NaN) }] }],
          version: d.version,
          history: d.history,
        }),
        says: /episode 0 turn 0: logProbs\[0\] is null, not a finite number$/,
      },
      {
        result: (d) => ({
          episodes: [{ ...valid, turns: [{ ...turn, responseIds: long, logProbs: long.map(() => -1) }] }],
          version: d.version,
          history: d.history,
        }),
        says: /episode 0 has a row of \d+ tokens, beyond sequence_length 256$/,
      },
      {
        result: (d) => ({ episodes: [valid], version: d.version, history: 'ffffffff' }),
        says: /was played by weights of history "ffffffff", not the job's [0-9a-f]{8}$/,
      },
    ];
    const connection = new IORedis(redis.url, { maxRetriesPerRequest: null });
    const fake = new Worker('test-train', async (job) => cases[job.data.step]!.result(job.data), { connection, name: 'fake' });
    started.push({ stop: async () => (await fake.close(), connection.disconnect()) });
    const player = await openPlayer(config, host);
    for (const [step, { says }] of cases.entries()) {
      await player.pushWeights(step, model);
      const rollout = within(player.rollout(1, step), 15_000);
      await expect(rollout).rejects.toThrow(new RegExp(`^distributed: job test\\.s${step}\\.train\\.W\\.g0\\.e${step}: the result of worker fake `));
      await expect(rollout).rejects.toThrow(says);
    }
  }, 120_000);

  test('Redis lost mid-run: the trainer waits through distributed.redis_timeout_s, then stops with one line', async () => {
    const redis = await RedisServer.start();
    started.push(redis);
    const { config, host } = await setUp(yaml({ groups: 2, size: 1, latencyMs: 0, perWorker: 1, redis: redis.url }));
    const player = await openPlayer({ ...config, distributed: { ...config.distributed, redis_timeout_s: 1 } }, host);
    const rollout = player.rollout(2, 0);
    await redis.kill();
    await expect(rollout).rejects.toThrow(
      /^distributed: Redis at redis:\/\/127\.0\.0\.1:\d+ has not answered for 1\.\d s \(distributed\.redis_timeout_s 1\); last: .*ECONNREFUSED/,
    );
  }, 60_000);
});

describe('distributed rollouts with no Redis to reach', () => {
  test('Redis unreachable at start: one line, exit 2, from the worker and the trainer', async () => {
    const { dir } = await setUp(yaml({ groups: 2, size: 1, latencyMs: 0, perWorker: 1, redis: 'redis://127.0.0.1:1' }));
    for (const command of ['worker', 'train']) {
      const { code, stderr } = await agentic([command, '-c', 'exp.yaml'], { cwd: dir });
      expect(code).toBe(2);
      expect(lines(stderr).filter((l) => l.startsWith('error'))).toEqual([
        expect.stringMatching(/^error: distributed\.redis_url: no Redis answers at redis:\/\/127\.0\.0\.1:1: /),
      ]);
    }
  }, 60_000);
});
