/**
 * Rollouts, training, eval and play with `agentic serve` as the inference server (a child process
 * on a free loopback port): the rows are the in-process policy's on both APIs, training leaves the
 * server holding the trainer's weights with the train/infer gap ~0, a server killed mid-run stops
 * the run with one line, and eval and play answer from it as they would in this process.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Rng } from '../../src/engine/rng';
import { GREEDY } from '../../src/model/sampling';
import { loadModel } from '../../src/model/load';
import { PluginHost } from '../../src/host/plugin_host';
import { ChatFormat } from '../../src/rollout/chat';
import { EnvManager } from '../../src/rollout/env_manager';
import { ModelPolicy } from '../../src/rollout/policy';
import type { RolloutBatch } from '../../src/rollout/types';
import { openCheckpoint } from '../../src/checkpoint/load';
import { Qwen2Model } from '../../src/model/qwen2';
import { saveModel } from '../../src/model/load';
import { runTraining } from '../../src/cli/training_run';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { agentic, scratch } from '../helpers';
import { call, RestartingServe, startServe, type ServeProcess } from '../serve/helpers';
import { configOf, LORA, microPolicyFolder, vowelsYaml } from '../train/helpers';

setDefaultTimeout(120_000);

const VOWELS_PLUGIN = resolve(import.meta.dir, '../fixtures/plugins/vowels.ts');

let pretrain = '';
let server: ServeProcess;
/** The servers' admin key: the trainer sends it (proxy_config.api_key) with its weights. */
const KEY = 'admin-key';
/** Where the runs of this file write the weights they send (their output_dir/weights). */
const SERVE_ARGS = ['sequence_length=512', '--admin-key', KEY, '--weights-root', tmpdir()];

beforeAll(async () => {
  pretrain = await microPolicyFolder();
  server = await startServe([`pretrain=${pretrain}`, ...SERVE_ARGS]);
});

afterAll(async () => {
  await server?.stop();
});

const proxy = (manager: 'train' | 'val', type: string, url: string) => [
  `${manager}_env_manager.llm_proxy.proxy_type=${type}`,
  `${manager}_env_manager.llm_proxy.proxy_config.base_url=${url}`,
  `${manager}_env_manager.llm_proxy.proxy_config.api_key=${KEY}`,
];

/** The vowels config, and the host that loaded its plugin. */
async function vowels(overrides: string[]) {
  const host = new PluginHost();
  return { config: await configOf(vowelsYaml(pretrain), host, [`plugins=[${VOWELS_PLUGIN}]`, ...overrides]), host };
}

describe('rollouts on agentic serve', () => {
  test("greedy, /generate and /v1/completions give the in-process policy's rows (log-probs within 1e-4)", async () => {
    const { model, tokenizer } = await loadModel(pretrain, { seed: 0, trainable: false });
    const chat = new ChatFormat(tokenizer);
    const play = async (overrides: string[]): Promise<RolloutBatch> => {
      const { config, host } = await vowels(['val_env_manager.num_env_groups=4', 'val_batch_size=4', ...overrides]);
      const manager = await EnvManager.build('val', config, host);
      try {
        await manager.servers?.connect(tokenizer);
        return await manager.play(config.val_batch_size, model, chat);
      } finally {
        await manager.close();
      }
    };
    try {
      const here = await play([]);
      for (const type of ['sglang', 'openai']) {
        const served = await play(proxy('val', type, server.url));
        expect(served.samples.map((s) => [...s.inputIds])).toEqual(here.samples.map((s) => [...s.inputIds]));
        served.samples.forEach((sample, i) => sample.logProbs.forEach((lp, t) => expect(Math.abs(lp - here.samples[i]!.logProbs[t]!)).toBeLessThan(1e-4)));
        expect(served.metrics['val/env/Vowels/infer_failure']).toBe(0);
        expect(served.samples.every((s) => s.responseMask.some((m) => m === 1))).toBe(true);
      }
    } finally {
      model.dispose();
    }
  });
});

describe('training on agentic serve', () => {
  test("after the run the server holds the trainer's weights: its version, and its log-probs those of the final checkpoint (1e-4); the gap ~0", async () => {
    const out = scratch();
    const info: string[] = [];
    const { config, host } = await vowels([
      `output_dir=${out}`,
      'track_with=[jsonl]',
      'max_steps=3',
      'save_steps=1',
      'eval_steps=2',
      'enable_old_logprobs_recompute=false',
      ...proxy('train', 'sglang', server.url),
      ...proxy('val', 'sglang', server.url),
    ]);
    await runTraining({ config, files: ['test'], overrides: [] }, host, { info: (line) => info.push(line), warn: () => {} });
    // the actor_infer line says where responses come from, and that recomputing holds regardless
    const line = info.find((l) => l.startsWith('actor_infer: '))!;
    expect(line).toContain(`inference servers ${server.url} (sglang), loading actor_infer's weights from`);
    expect(line).toContain('old log-probs recomputed by actor_train (enable_old_logprobs_recompute=false does not hold here');
    const logged = readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
    // three steps and the validation after the last
    expect(logged.map((r) => r.step)).toEqual([0, 1, 2, 3]);
    expect(logged.filter((r) => 'val/env/Vowels/infer_failure' in r.metrics).map((r) => r.step)).toEqual([0, 2, 3]);
    const steps = logged.slice(0, 3);
    for (const step of steps) {
      // the sampler's log-probs are the trainer's own, from another process
      expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
      expect(step.metrics['env/Vowels/infer_failure']).toBe(0);
      expect(step.metrics['time/step_model_update']).toBeGreaterThan(0);
    }
    // the last validation was played by version 3 of this start's history, actor_train's weights after the 3 steps (checkpoint-3)
    const named = (v: number) => `weights-${v}-${openCheckpoint(join(out, 'checkpoints', 'checkpoint-3')).state.history![0]!.id}`;
    expect((await call(server.url, '/get_weight_version')).body).toEqual({ weight_version: named(3) });
    expect(readdirSync(join(out, 'weights')).sort()).toEqual([named(2), named(3)]);
    const { model, tokenizer } = await loadModel(join(out, 'checkpoints', 'checkpoint-3', 'actor'), { seed: 0, trainable: false });
    const chat = new ChatFormat(tokenizer);
    const policy = new ModelPolicy(model, chat, { sampling: GREEDY, stopStrings: null, maxRunning: 4, maxLength: 512 });
    try {
      for (const [i, prompt] of [chat.firstTurn('You write.', 'round 1: write something'), [5, 6, 7, 8, 9]].entries()) {
        const reply = await call(server.url, '/generate', {
          input_ids: prompt,
          sampling_params: { max_new_tokens: 12, temperature: 0, stop_token_ids: chat.stopTokenIds },
          return_logprob: true,
        });
        expect(reply.body.meta_info.weight_version).toBe(named(3));
        const here = await policy.respond({
          id: `p${i}`,
          promptIds: prompt,
          maxNewTokens: 12,
          rng: Rng.fromSeed(1),
          env: null as never,
          session: `p${i}`,
        });
        if (here.failure) throw new Error(here.failure.reason);
        expect(reply.body.output_ids).toEqual(here.tokens);
        (reply.body.meta_info.output_token_logprobs as number[][]).forEach(([lp], t) => expect(Math.abs(lp! - here.logProbs[t]!)).toBeLessThan(1e-4));
      }
    } finally {
      await policy.close();
      model.dispose();
    }
  });

  test('a LoRA run sends the base once and then its adapters alone; both APIs generate with them; the gap ~0', async () => {
    const out = scratch();
    const info: string[] = [];
    const { config, host } = await vowels([
      `output_dir=${out}`,
      'track_with=[jsonl]',
      'max_steps=3',
      'save_steps=3',
      'eval_steps=2',
      ...LORA,
      ...proxy('train', 'sglang', server.url),
      ...proxy('val', 'openai', server.url),
    ]);
    await runTraining({ config, files: ['test'], overrides: [] }, host, { info: (line) => info.push(line), warn: () => {} });
    expect(info).toContain(
      "weight sync: LoRA: the base once (SGLang's servers), then each version's adapter alone (/load_lora_adapter, /v1/load_lora_adapter)",
    );
    const logged = readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
    for (const step of logged.slice(0, 3)) {
      expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
      expect(step.metrics['env/Vowels/infer_failure']).toBe(0);
    }
    expect(logged.filter((r) => 'val/env/Vowels/infer_failure' in r.metrics).map((r) => r.metrics['val/env/Vowels/infer_failure'])).toEqual([0, 0, 0]);
    // the adapters of the last two versions stay loaded, older ones were unloaded; the folders follow
    const history = openCheckpoint(join(out, 'checkpoints', 'checkpoint-3')).state.history![0]!.id;
    const named = (v: number) => `weights-${v}-${history}`;
    expect((await call(server.url, '/get_server_info')).body.lora_adapters).toEqual([named(2), named(3)]);
    expect(readdirSync(join(out, 'weights')).sort()).toEqual(['base', named(2), named(3)]);
    expect(readdirSync(join(out, 'weights', named(3))).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    // the server's weights-3 is the final checkpoint's policy
    const { model, tokenizer } = await loadModel(join(out, 'checkpoints', 'checkpoint-3', 'actor'), { seed: 0, trainable: false });
    const chat = new ChatFormat(tokenizer);
    const policy = new ModelPolicy(model, chat, { sampling: GREEDY, stopStrings: null, maxRunning: 4, maxLength: 512 });
    try {
      const prompt = chat.firstTurn('You write.', 'round 1: write something');
      const reply = await call(server.url, '/generate', {
        input_ids: prompt,
        sampling_params: { max_new_tokens: 12, temperature: 0, stop_token_ids: chat.stopTokenIds },
        return_logprob: true,
        lora_path: named(3),
      });
      const here = await policy.respond({ id: 'p', promptIds: prompt, maxNewTokens: 12, rng: Rng.fromSeed(1), env: null as never, session: 'p' });
      if (here.failure) throw new Error(here.failure.reason);
      expect(reply.body.output_ids).toEqual(here.tokens);
      (reply.body.meta_info.output_token_logprobs as number[][]).forEach(([lp], t) => expect(Math.abs(lp! - here.logProbs[t]!)).toBeLessThan(1e-4));
    } finally {
      await policy.close();
      model.dispose();
    }
  });

  test("a LoRA run resumed from an earlier checkpoint against the server still up: its adapters have names of their own, the earlier run's are unloaded", async () => {
    const own = await startServe([`pretrain=${pretrain}`, 'sequence_length=512', '--weights-root', tmpdir()]);
    try {
      const out = scratch();
      const settings = [`output_dir=${out}`, 'track_with=[jsonl]', 'max_steps=3', 'save_steps=1', ...LORA, ...proxy('train', 'sglang', own.url)];
      const first = await vowels(settings);
      await runTraining({ config: first.config, files: ['test'], overrides: [] }, first.host, { info: () => {}, warn: () => {} });
      const checkpoint = join(out, 'checkpoints', 'checkpoint-1');
      const again = await vowels([...settings, 'actor_train.training_args.learning_rate=0.001', `resume_from_checkpoint=${checkpoint}`]);
      await runTraining({ config: again.config, files: ['test'], overrides: [] }, again.host, { info: () => {}, warn: () => {} });
      const lineage = openCheckpoint(join(out, 'checkpoints', 'checkpoint-3')).state.history!;
      expect(lineage.map((h) => h.from)).toEqual([0, 1]);
      const history = lineage[1]!.id;
      expect((await call(own.url, '/get_server_info')).body.lora_adapters).toEqual([`weights-1-${history}`, `weights-2-${history}`]);
      expect((await call(own.url, '/get_weight_version')).body.weight_version).toBe(`base-${history}`);
      for (const step of readMetricsJsonl(join(out, 'logs', 'metrics.jsonl')).slice(1, 3)) {
        expect(step.metrics['env/Vowels/infer_failure']).toBe(0);
        expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
      }
    } finally {
      await own.stop();
    }
  });

  test('a LoRA run whose server restarts mid-run on other weights: the base is loaded again before the next step, and the gap stays ~0', async () => {
    const other = join(scratch(), 'other');
    const { model: seed12, tokenizer } = await loadModel(pretrain, { seed: 0, trainable: false });
    const stranger = Qwen2Model.random(seed12.config, { seed: 12 });
    await saveModel(other, stranger, tokenizer);
    seed12.dispose();
    stranger.dispose();
    let serving = await startServe([`pretrain=${pretrain}`, 'sequence_length=512', '--weights-root', tmpdir()]);
    const port = Number(new URL(serving.url).port);
    try {
      const out = scratch();
      const { config, host } = await vowels([
        `output_dir=${out}`,
        'track_with=[jsonl]',
        'max_steps=3',
        'save_steps=1',
        ...LORA,
        ...proxy('train', 'sglang', serving.url),
      ]);
      await runTraining({ config, files: ['test'], overrides: [] }, host, {
        info: () => {},
        warn: () => {},
        onCheckpoint: async (path) => {
          if (!path.endsWith('checkpoint-1')) return;
          await serving.stop();
          serving = await startServe([`pretrain=${other}`, 'sequence_length=512', '--weights-root', tmpdir()], { port });
        },
      });
      const logged = readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
      for (const step of logged.slice(0, 3)) {
        expect(step.metrics['env/Vowels/infer_failure']).toBe(0);
        expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
      }
    } finally {
      await serving.stop();
    }
  });

  test('a LoRA run that trains the embedding whole sends merged weights instead (vLLM and SGLang: no modules_to_save); the gap ~0', async () => {
    const out = scratch();
    const info: string[] = [];
    const { config, host } = await vowels([
      `output_dir=${out}`,
      'track_with=[jsonl]',
      'max_steps=2',
      'eval_steps=0',
      ...LORA,
      'actor_train.model_args.additional_target=embed_tokens',
      ...proxy('train', 'sglang', server.url),
    ]);
    await runTraining({ config, files: ['test'], overrides: [] }, host, { info: (line) => info.push(line), warn: () => {} });
    expect(info).toContain(
      "weight sync: LoRA with embed_tokens trained whole: each version's weights merged (vLLM refuses adapters with modules_to_save; SGLang documents no support for them)",
    );
    for (const step of readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'))) {
      expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
      expect(step.metrics['env/Vowels/infer_failure']).toBe(0);
    }
    const named = (v: number) => `weights-${v}-${openCheckpoint(join(out, 'checkpoints', 'checkpoint-2')).state.history![0]!.id}`;
    expect(readdirSync(join(out, 'weights')).sort()).toEqual([named(0), named(1)]);
    expect(readdirSync(join(out, 'weights', named(1)))).toContain('config.json');
    expect((await call(server.url, '/get_weight_version')).body).toEqual({ weight_version: named(1) });
  });

  test("a server that fails to generate for a step: that step's episodes end as infer_failure, counted, and (max_infer_failure_rate=1) the run goes on, training nothing on that step", async () => {
    let failing = false;
    // in front of agentic serve: every call goes through, but /generate answers 500 while `failing`
    const front = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const path = new URL(request.url).pathname;
        if (failing && path === '/generate') return Response.json({ error: { message: 'out of memory' } }, { status: 500 });
        const body = request.method === 'POST' ? await request.text() : undefined;
        return fetch(server.url + path, { method: request.method, headers: request.headers, body });
      },
    });
    const out = scratch();
    try {
      const { config, host } = await vowels([
        `output_dir=${out}`,
        'track_with=[jsonl]',
        'max_steps=3',
        'save_steps=1',
        ...proxy('train', 'sglang', `http://127.0.0.1:${front.port}`),
        'train_env_manager.llm_proxy.proxy_config.max_retries=1',
        'train_env_manager.llm_proxy.proxy_config.retry_backoff_s=0.05',
        'max_infer_failure_rate=1',
      ]);
      await runTraining({ config, files: ['test'], overrides: [] }, host, {
        info: () => {},
        warn: () => {},
        onCheckpoint: (path) => {
          failing = path.endsWith('checkpoint-1');
        },
      });
    } finally {
      await front.stop(true);
    }
    const steps = readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
    expect(steps.map((s) => s.metrics['env/Vowels/infer_failure'])).toEqual([0, 1, 0]);
    expect(steps.map((s) => s.metrics['system/samples'])).toEqual([8, 0, 8]);
    expect(steps[1]!.metrics['env/response_length']).toBe(0);
    expect(steps[2]!.metrics['env/response_length']).toBeGreaterThan(0);
  });

  for (const lora of [false, true]) {
    const what = lora ? 'LoRA: the base, then the adapter' : 'the version';
    test(`a server killed and restarted in the middle of a step (${what}): its weights go back and its turns are asked again; no episode fails, the gap stays ~0`, async () => {
      const serving = await RestartingServe.start([`pretrain=${pretrain}`, ...SERVE_ARGS], 1);
      try {
        const out = scratch();
        const { config, host } = await vowels([
          `output_dir=${out}`,
          'track_with=[jsonl]',
          'max_steps=3',
          'save_steps=0',
          ...(lora ? LORA : []),
          ...proxy('train', 'sglang', serving.url),
          // the try that meets the kill is the one retry: the next finds the restarted server
          'train_env_manager.llm_proxy.proxy_config.max_retries=1',
          'train_env_manager.llm_proxy.proxy_config.retry_backoff_s=0.05',
        ]);
        await runTraining({ config, files: ['test'], overrides: [] }, host, { info: () => {}, warn: () => {} });
        expect(serving.restarted).toBe(true);
        const steps = readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
        expect(steps.map((s) => s.metrics['env/Vowels/infer_failure'])).toEqual([0, 0, 0]);
        expect(steps.map((s) => s.metrics['system/samples'])).toEqual([8, 8, 8]);
        for (const step of steps) expect(step.metrics['actor/train_infer_logprob_gap']).toBeLessThan(1e-4);
      } finally {
        await serving.stop();
      }
    });
  }

  test('a server killed mid-run (SIGKILL): the run stops with one line naming it, no hang', async () => {
    const doomed = await startServe([`pretrain=${pretrain}`, ...SERVE_ARGS]);
    const out = scratch();
    const { config, host } = await vowels([
      `output_dir=${out}`,
      'track_with=[jsonl]',
      'max_steps=6',
      'save_steps=1',
      ...proxy('train', 'sglang', doomed.url),
      'train_env_manager.llm_proxy.proxy_config.timeout_s=2',
      'train_env_manager.llm_proxy.proxy_config.retry_backoff_s=0.1',
      'train_env_manager.llm_proxy.proxy_config.unavailable_timeout_s=1',
    ]);
    const started = performance.now();
    const error = await runTraining({ config, files: ['test'], overrides: [] }, host, {
      info: () => {},
      warn: () => {},
      onCheckpoint: (path) => {
        if (path.endsWith('checkpoint-1')) doomed.child.kill('SIGKILL');
      },
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    // a run that failed before the kill leaves the server to stop here
    doomed.child.kill('SIGKILL');
    await doomed.child.exited;
    expect(error?.name).toBe('InferenceError');
    expect(error!.message).toStartWith('train_env_manager: no inference server has answered for ');
    expect(error!.message).toContain(doomed.url);
    expect(error!.message).not.toContain('\n');
    expect(performance.now() - started).toBeLessThan(60_000);
    expect(existsSync(join(out, 'checkpoints', 'checkpoint-1'))).toBe(true);
  });
});

describe('eval, render and play on agentic serve', () => {
  const args = () => [
    `pretrain=${pretrain}`,
    'val_batch_size=4',
    'val_env_manager.num_env_groups=4',
    'custom_envs.FrozenLake.max_steps=2',
    'custom_envs.FrozenLake.max_tokens_per_step=6',
  ];

  test('eval: the table and JSON of the servers are those of the same model in this process', async () => {
    const [here, there] = [join(scratch(), 'here.json'), join(scratch(), 'there.json')];
    const local = await agentic(['eval', '--config-name', 'frozen_lake', '--out', here, ...args()]);
    expect(local.code).toBe(0);
    const served = await agentic(['eval', '--config-name', 'frozen_lake', '--out', there, ...args(), ...proxy('val', 'sglang', server.url)]);
    expect(served.stderr).toContain(`policy: the model on sglang server ${server.url}`);
    expect(served.code).toBe(0);
    expect(served.stdout).toBe(local.stdout);
    const [a, b] = [JSON.parse(readFileSync(here, 'utf8')), JSON.parse(readFileSync(there, 'utf8'))];
    expect(b).toMatchObject({ policy: 'model', model: `sglang server ${server.url}`, backend: null });
    expect(b.tags.FrozenLake).toEqual({ ...a.tags.FrozenLake, infer_failure: 0 });
  });

  test('render plays its episodes on the server and says so in the report', async () => {
    const folder = join(scratch(), 'render');
    const { code, stderr } = await agentic([
      'render',
      '--config-name',
      'frozen_lake',
      '--episodes',
      '2',
      `render_save_dir=${folder}`,
      ...args(),
      ...proxy('val', 'sglang', server.url),
    ]);
    expect(stderr).toContain(`policy: the model on sglang server ${server.url}`);
    expect(code).toBe(0);
    expect(readFileSync(join(folder, 'report.html'), 'utf8')).toContain(`played by the model sglang server ${server.url} (seed`);
  });

  test('play --policy model --auto: the turns come from the server, as they would here', async () => {
    const [here, there] = [join(scratch(), 'here.json'), join(scratch(), 'there.json')];
    const local = await agentic(['play', 'FrozenLake', '--config-name', 'frozen_lake', '--policy', 'model', '--auto', '--out', here, 'seed=3', ...args()]);
    expect(local.code).toBe(0);
    const served = await agentic([
      'play',
      'FrozenLake',
      '--config-name',
      'frozen_lake',
      '--policy',
      'model',
      '--auto',
      '--out',
      there,
      'seed=3',
      ...args(),
      ...proxy('val', 'openai', server.url),
    ]);
    expect(served.code).toBe(0);
    expect(served.stdout).toContain(`responses: model on openai server ${server.url}`);
    const turns = (path: string) => JSON.parse(readFileSync(path, 'utf8'))[0].turns.map((t: { responseText: string }) => t.responseText);
    expect(turns(there)).toEqual(turns(here));
    expect(turns(there).length).toBeGreaterThan(0);
  });
});
