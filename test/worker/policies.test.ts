/**
 * The weights a job names and `agentic worker` plays with (src/worker/policies.ts), with a real
 * redis-server, trainer and worker processes: a local copy of the actor reads the trainer's folder
 * by its absolute path wherever the worker was started, a worker whose machine cannot read it
 * refuses in one line, a LoRA run's workers on `agentic serve` name the version's adapter on both
 * APIs, and a server restarted under a worker gets the job's weights back from it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { agentic, lines, scratch } from '../helpers';
import { RestartingServe, startServe, type ServeProcess } from '../serve/helpers';
import { missing } from '../system_tools';
import { LORA, microPolicyFolder, vowelsYaml } from '../train/helpers';
import { otherMachine, RedisServer, WorkerProcess, waitsYaml } from '../rollout_sources/distributed/helpers';

const started: Array<{ stop(): unknown }> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
});

let redis: RedisServer;

function worker(name: string, args: string[], options: { cwd: string; wrap?: string[] }): WorkerProcess {
  const w = WorkerProcess.start(name, args, options);
  started.push({ stop: () => (w.kill(9), w.done) });
  return w;
}

/** A run whose workers play with their own copy of the actor, from the weights the trainer writes. */
const LOCAL_COPY = (url: string) =>
  waitsYaml({ redis: url, proxy: 'policy', turns: 2, latencyMs: 0, perWorker: 4, distributed: 'weights_timeout_s: 1, attempts: 1' });

describe.skipIf(missing('redis'))('the weights of distributed workers', () => {
  beforeAll(async () => {
    redis = await RedisServer.start();
  });

  afterAll(() => redis.stop());

  test("a worker started in another folder reads the weights where the trainer writes them: the job names the trainer's folder by its absolute path", async () => {
    const dir = scratch({ 'exp.yaml': LOCAL_COPY(redis.url) });
    const elsewhere = scratch();
    const w = worker('elsewhere', ['-c', join(dir, 'exp.yaml'), 'exp_name=abs'], { cwd: elsewhere });
    await w.ready();
    expect(w.stderr).toContain("train: actor_infer's weights from the trainer's model_update_dir (each job names it)");
    const run = await agentic(['train', '-c', 'exp.yaml', 'exp_name=abs'], { cwd: dir });
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    expect(readMetricsJsonl(join(dir, 'output/abs/logs/metrics.jsonl')).map((r) => r.step)).toEqual([0, 1]);
  }, 120_000);

  test.skipIf(missing('bwrap'))(
    "a worker whose machine cannot read the trainer's weights folder refuses the job in one line; the trainer stops with the reason",
    async () => {
      const dir = scratch({ 'exp.yaml': LOCAL_COPY(redis.url) });
      const output = join(dir, 'output');
      mkdirSync(output);
      // the worker's machine has no such folder: an empty one stands in its place
      const w = worker('blind', ['-c', 'exp.yaml', 'exp_name=blind'], { cwd: dir, wrap: otherMachine([[null, output]]) });
      await w.ready();
      const run = await agentic(['train', '-c', 'exp.yaml', 'exp_name=blind'], { cwd: dir });
      const folder = join(output, 'blind/weights').replace(/[.]/g, '\\.');
      const refusal = `distributed: job blind\\.s0\\.train\\.W\\.g\\d\\.e0 asks for the trainer's weights from its model_update_dir, but this worker cannot read ${folder} \\(ENOENT\\); run the worker where that folder is at the same path \\(a shared folder, docs/distributed\\.md\\)`;
      expect(run.code).toBe(1);
      expect(lines(run.stderr).filter((l) => l.startsWith('error'))).toEqual([
        expect.stringMatching(
          new RegExp(`^error: distributed: job blind\\.s0\\.train\\.W\\.g\\d\\.e0 failed \\(1 attempt\\(s\\), last on blind\\): ${refusal}$`),
        ),
      ]);
      expect(await w.done).toBe(2);
      expect(lines(w.stderr).filter((l) => l.startsWith('error'))).toEqual([expect.stringMatching(new RegExp(`^error: ${refusal}$`))]);
    },
    120_000,
  );
});

describe.skipIf(missing('redis'))('workers that play on agentic serve', () => {
  let server: ServeProcess;
  let pretrain: string;

  beforeAll(async () => {
    redis = await RedisServer.start();
    pretrain = await microPolicyFolder();
    server = await startServe([`pretrain=${pretrain}`, 'sequence_length=512', '--weights-root', tmpdir()]);
  });

  afterAll(async () => {
    await server?.stop();
    await redis.stop();
  });

  test("every request names the version's adapter, on completions (openai) and /generate (sglang): the train/infer gap ~0, no infer_failure", async () => {
    const dir = scratch();
    const plugin = resolve(import.meta.dir, '../fixtures/plugins/vowels.ts');
    writeFileSync(
      join(dir, 'exp.yaml'),
      `${vowelsYaml(pretrain)}
plugins: [${plugin}]
save_steps: 0
track_with: [jsonl]
distributed: {redis_url: '${redis.url}'}
`,
    );
    const args = [
      'exp_name=lora',
      'max_steps=3',
      'eval_steps=2',
      ...LORA,
      'actor_train.training_args.learning_rate=1.0e-2',
      'train_env_manager.llm_proxy.proxy_type=openai',
      `train_env_manager.llm_proxy.proxy_config.base_url=${server.url}`,
      'val_env_manager.llm_proxy.proxy_type=sglang',
      `val_env_manager.llm_proxy.proxy_config.base_url=${server.url}`,
    ];
    const w = worker('w', ['-c', 'exp.yaml', ...args], { cwd: dir });
    await w.ready();
    const run = await agentic(['train', '-c', 'exp.yaml', ...args], { cwd: dir });
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    const logged = readMetricsJsonl(join(dir, 'output/lora/logs/metrics.jsonl'));
    expect(logged.map((r) => r.step)).toEqual([0, 1, 2, 3]);
    for (const step of logged.slice(0, 3)) {
      // the servers sample with the trainer's adapter of the step, not the base
      expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
      expect(step.metrics['env/Vowels/infer_failure']).toBe(0);
    }
    expect(logged.filter((r) => 'val/env/Vowels/infer_failure' in r.metrics).map((r) => [r.step, r.metrics['val/env/Vowels/infer_failure']])).toEqual([
      [0, 0],
      [2, 0],
      [3, 0],
    ]);
  }, 180_000);

  for (const lora of [false, true]) {
    const what = lora ? 'LoRA: the base, then the adapter' : 'the version';
    test(`a server killed and restarted in the middle of a step (${what}): the worker gives it the job's weights from the trainer's folder and asks again; no episode fails, the gap ~0`, async () => {
      const serving = await RestartingServe.start([`pretrain=${pretrain}`, 'sequence_length=512', '--weights-root', tmpdir()], 1);
      started.push(serving);
      const dir = scratch();
      const plugin = resolve(import.meta.dir, '../fixtures/plugins/vowels.ts');
      writeFileSync(
        join(dir, 'exp.yaml'),
        `${vowelsYaml(pretrain)}
plugins: [${plugin}]
save_steps: 0
track_with: [jsonl]
distributed: {redis_url: '${redis.url}'}
`,
      );
      const args = [
        `exp_name=restart_${lora ? 'lora' : 'whole'}`,
        'max_steps=3',
        'eval_steps=0',
        ...(lora ? LORA : []),
        'train_env_manager.llm_proxy.proxy_type=sglang',
        `train_env_manager.llm_proxy.proxy_config.base_url=${serving.url}`,
        // the try that meets the kill is the one retry: the next finds the restarted server
        'train_env_manager.llm_proxy.proxy_config.max_retries=1',
        'train_env_manager.llm_proxy.proxy_config.retry_backoff_s=0.05',
      ];
      const w = worker('w', ['-c', 'exp.yaml', ...args], { cwd: dir });
      await w.ready();
      const run = await agentic(['train', '-c', 'exp.yaml', ...args], { cwd: dir });
      expect(run.stderr).not.toContain('error');
      expect(run.code).toBe(0);
      expect(serving.restarted).toBe(true);
      const logged = readMetricsJsonl(join(dir, `output/${args[0]!.slice('exp_name='.length)}/logs/metrics.jsonl`));
      expect(logged.map((r) => r.metrics['env/Vowels/infer_failure'])).toEqual([0, 0, 0]);
      for (const step of logged) expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
    }, 180_000);
  }
});
