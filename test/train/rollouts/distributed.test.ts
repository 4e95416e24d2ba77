/**
 * Distributed rollouts as the trainer's player sees them (src/train/rollouts/distributed.ts): a real
 * redis-server, real `agentic worker` processes, real BullMQ; a worker killed or stalled with jobs
 * in hand, and what the trainer ingests.
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load';
import type { AgenticConfig } from '../../../src/config/schema';
import { startBackend } from '../../../src/engine/backend';
import { loadModel, loadTokenizer } from '../../../src/model/load';
import type { Qwen2Model } from '../../../src/model/qwen2';
import { PluginHost } from '../../../src/plugins/host';
import { ChatFormat } from '../../../src/rollout/chat';
import { EnvManager } from '../../../src/rollout/env_manager';
import type { Episode } from '../../../src/rollout/types';
import { DistributedPlayer } from '../../../src/train/rollouts/distributed';
import { agentic, lines, scratch } from '../../helpers';
import { missing } from '../../system_tools';
import { RedisServer, WAITS_PLUGIN, WorkerProcess } from './distributed_helpers';

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
    player.count(0, true);
    const ledger = player.ledgerEntries();

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
    player.count(0, true);
    const ledger = player.ledgerEntries();
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
