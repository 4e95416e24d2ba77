/**
 * Episodes per second of distributed rollouts with 1, 2, 4 and 8 `agentic worker` processes on this
 * machine (docs/distributed.md): a redis-server of its own on a free loopback port, the trainer's
 * player (src/rollout_sources/distributed/) asking for batches of 128 episodes, random policies.
 *
 *   bun scripts/experiments/distributed_throughput.ts [waits|frozen_lake|both] [--workers 1,2,4,8]
 *
 * waits: test/fixtures/plugins/waits.ts, 3 steps that each wait 100 ms on a timer (I/O, as a tool
 * or code run does); frozen_lake: the built-in FrozenLake. Each worker plays 8 episodes at once
 * (max_env_num_per_worker 8, one env a group), so the processes are what scales. The first row of
 * each env is the same batch played in this process without Redis (EnvManager.play, all 128 at once).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../src/config/load';
import { startBackend } from '../../src/engine/backend';
import { loadModel } from '../../src/model/load';
import { PluginHost } from '../../src/host/plugin_host';
import { ChatFormat } from '../../src/rollout/chat';
import { EnvManager } from '../../src/rollout/env_manager';
import { DistributedPlayer } from '../../src/rollout_sources/distributed/player';
import { freePort } from '../../src/util/free_port';

const ROOT = resolve(import.meta.dir, '../..');
const EPISODES = 128;
const ROUNDS = 3;
const args = process.argv.slice(2);
const which = args.find((a) => !a.startsWith('--')) ?? 'both';
const at = args.indexOf('--workers');
const counts = at === -1 ? [1, 2, 4, 8] : args[at + 1]!.split(',').map(Number);

const ENVS: Record<string, string> = {
  waits: `plugins: [${join(ROOT, 'test/fixtures/plugins/waits.ts')}]
custom_envs:
  E: {env_type: waits, max_steps: 3, max_tokens_per_step: 8, env_config: {turns: 3, latency_ms: 100}}`,
  frozen_lake: `custom_envs:
  E: {env_type: frozen_lake, max_steps: 10, max_tokens_per_step: 32}`,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await startBackend('wasm');
const { model, tokenizer } = await loadModel('agentic:nano', { seed: 1, trainable: false });
const chat = new ChatFormat(tokenizer);
const dir = mkdtempSync(join(tmpdir(), 'agentic-throughput-'));
const port = await freePort();
const redis = Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir], {
  stdout: 'ignore',
  stderr: 'ignore',
});
await sleep(300);

const rows: string[] = [];
try {
  for (const env of which === 'both' ? Object.keys(ENVS) : [which]) {
    {
      writeFileSync(
        join(dir, 'exp.yaml'),
        `pretrain: agentic:nano\neval_steps: 0\nsequence_length: 1024\n${ENVS[env]}\ntrain_env_manager: {num_env_groups: ${EPISODES}, group_size: 1, tags: [E], llm_proxy: {proxy_type: random}}\nrollout_batch_size: ${EPISODES}\n`,
      );
      const host = new PluginHost(dir);
      const { config } = await loadConfig({ configFile: join(dir, 'exp.yaml'), overrides: [] }, host);
      const manager = await EnvManager.build('train', config, host);
      await manager.play(EPISODES, null, chat);
      const started = performance.now();
      for (let round = 0; round < ROUNDS; round++) await manager.play(EPISODES, null, chat);
      rows.push(`| ${env} | in one process, no Redis | ${((EPISODES * ROUNDS) / ((performance.now() - started) / 1000)).toFixed(1)} |`);
      console.log(rows.at(-1));
    }
    for (const n of counts) {
      const queue = `${env}-${n}`;
      writeFileSync(
        join(dir, 'exp.yaml'),
        `pretrain: agentic:nano
eval_steps: 0
sequence_length: 1024
${ENVS[env]}
train_env_manager: {num_env_groups: ${EPISODES}, group_size: 1, tags: [E], llm_proxy: {proxy_type: random}, max_env_num_per_worker: 8}
rollout_batch_size: ${EPISODES}
distributed: {redis_url: 'redis://127.0.0.1:${port}', queue: ${queue}}
`,
      );
      const host = new PluginHost(dir);
      const { config } = await loadConfig({ configFile: join(dir, 'exp.yaml'), overrides: [] }, host);
      const workers = Array.from({ length: n }, (_, i) =>
        Bun.spawn([process.execPath, join(ROOT, 'src/cli/main.ts'), 'worker', '-c', 'exp.yaml', '--name', `w${i}`], {
          cwd: dir,
          stdout: 'ignore',
          stderr: 'ignore',
          env: { ...process.env, AGENTIC_WASM_THREADS: '1' },
        }),
      );
      const player = DistributedPlayer.open(config, await EnvManager.build('train', config, host), null, null, tokenizer);
      await player.prepare(0);
      await player.pushWeights(0, model);
      await player.rollout(EPISODES, 0); // warm-up: every worker started and took jobs
      const started = performance.now();
      for (let step = 1; step <= ROUNDS; step++) {
        // each step's jobs ask for its own version, as the trainer's schedule does (random policies load none)
        await player.pushWeights(step, model);
        await player.rollout(EPISODES, step);
      }
      const seconds = (performance.now() - started) / 1000;
      const rate = (EPISODES * ROUNDS) / seconds;
      rows.push(`| ${env} | ${n} | ${rate.toFixed(1)} |`);
      console.log(rows.at(-1));
      await player.close();
      for (const w of workers) w.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
    }
  }
} finally {
  redis.kill();
  await redis.exited;
  rmSync(dir, { recursive: true, force: true });
}
console.log(['| env | workers | episodes/s |', '|---|---|---|', ...rows].join('\n'));
process.exit(0);
