/**
 * Episodes that `agentic serve` failed (infer_failure) and the update, on HTTP-policy runs against
 * a real server: a group holding one leaves the update, too many stop the run with one line, and
 * a step with nothing left trains nothing (weights, optimizer, learning rate, KL coefficient and
 * policy version unchanged, nothing written for the servers), which a resumed run carries on from.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { learningRateAt } from '../../src/model/optim';
import { PluginHost } from '../../src/host/plugin_host';
import { runTraining } from '../../src/cli/training_run';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { learningRateSchedule } from '../../src/train/schedule';
import { scratch } from '../helpers';
import { call, startServe, type ServeProcess } from '../serve/helpers';
import { configOf, microPolicyFolder, vowelsYaml } from './helpers';

setDefaultTimeout(180_000);

const VOWELS_PLUGIN = resolve(import.meta.dir, '../fixtures/plugins/vowels.ts');

let pretrain = '';
let server: ServeProcess;

beforeAll(async () => {
  pretrain = await microPolicyFolder();
  server = await startServe([`pretrain=${pretrain}`, 'sequence_length=512', '--weights-root', tmpdir()]);
});

afterAll(async () => {
  await server?.stop();
});

/** Two groups of four vowels episodes of two turns each, played by the server at `url`, one request try. */
async function vowels(url: string, overrides: string[]) {
  const host = new PluginHost();
  const config = await configOf(vowelsYaml(pretrain, { rounds: 2 }), host, [
    `plugins=[${VOWELS_PLUGIN}]`,
    'track_with=[jsonl]',
    'train_env_manager.llm_proxy.proxy_type=sglang',
    `train_env_manager.llm_proxy.proxy_config.base_url=${url}`,
    'train_env_manager.llm_proxy.proxy_config.max_retries=0',
    ...overrides,
  ]);
  return { config, host };
}

const quiet = { info: () => {}, warn: () => {} };
const bytes = (path: string) => readFileSync(path);
const trainerState = (checkpoint: string) => JSON.parse(readFileSync(join(checkpoint, 'trainer_state.json'), 'utf8'));

describe('episodes the inference server failed', () => {
  test('a group holding an infer_failure (a partly played episode) leaves the update; the step trains on the other group', async () => {
    let failing = true;
    // in front of agentic serve: env 5's second turn (group 1) gets a 500 while `failing`
    const front = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const path = new URL(request.url).pathname;
        const body = request.method === 'POST' ? await request.text() : undefined;
        if (failing && path === '/generate' && /-train:5:\d+:1-\d+$/.test(JSON.parse(body!).rid)) {
          return Response.json({ error: { message: 'out of memory' } }, { status: 500 });
        }
        return fetch(server.url + path, { method: request.method, headers: request.headers, body });
      },
    });
    const out = scratch();
    try {
      const { config, host } = await vowels(`http://127.0.0.1:${front.port}`, [`output_dir=${out}`, 'max_steps=2', 'save_steps=1']);
      await runTraining({ config, files: ['test'], overrides: [] }, host, {
        ...quiet,
        onCheckpoint: () => {
          failing = false;
        },
      });
    } finally {
      await front.stop(true);
    }
    const [failed, whole] = readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
    // one episode of eight failed, after its first turn
    expect(failed!.metrics['env/Vowels/infer_failure']).toBe(1 / 8);
    expect(failed!.metrics['rollout/infer_failure_rate']).toBe(1 / 8);
    expect(failed!.metrics['rollout/dropped_groups']).toBe(1);
    expect(failed!.metrics['rollout/dropped_samples']).toBe(4);
    expect(failed!.metrics['system/samples']).toBe(4);
    expect(failed!.metrics['actor/optimizer_steps']).toBe(1);
    expect(whole!.metrics['rollout/dropped_groups']).toBe(0);
    expect(whole!.metrics['system/samples']).toBe(8);
  });

  test('more failed episodes than max_infer_failure_rate: the run stops with one line naming the rate, the step and the servers', async () => {
    const out = scratch();
    const { config, host } = await vowels(server.url, [
      `output_dir=${out}`,
      'max_steps=3',
      'save_steps=1',
      'train_env_manager.llm_proxy.proxy_config.timeout_s=3',
    ]);
    const error = await runTraining({ config, files: ['test'], overrides: [] }, host, {
      ...quiet,
      // the server holds every request of step 1 (SGLang's pause): each times out, and is not retried
      onCheckpoint: async () => {
        expect((await call(server.url, '/pause_generation', {})).status).toBe(200);
      },
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect((await call(server.url, '/continue_generation', {})).status).toBe(200);
    expect(error?.name).toBe('InferenceError');
    expect(error!.message).toStartWith(
      'step 2: 8 of 8 episodes (100%) got no response from the inference servers (infer_failure), above max_infer_failure_rate=0.5; check the servers of train_env_manager.llm_proxy (the first failure: train_env_manager: ',
    );
    expect(error!.message).toContain(server.url);
    expect(error!.message).not.toContain('\n');
    expect(existsSync(join(out, 'checkpoints', 'checkpoint-1'))).toBe(true);
    expect(existsSync(join(out, 'checkpoints', 'checkpoint-2'))).toBe(false);
  });

  test('a step whose every group failed trains nothing: weights, moments, learning rate, KL coefficient and version stay; a resume carries on exactly', async () => {
    const out = scratch();
    const settings = [
      `output_dir=${out}`,
      'max_steps=3',
      'save_steps=1',
      'max_infer_failure_rate=1',
      'train_env_manager.llm_proxy.proxy_config.timeout_s=3',
      'actor_train.training_args.lr_scheduler_type=linear',
      'add_token_level_kl=true',
      'init_kl_coef=0.2',
      'target_kl=0.01',
      'kl_horizon=8',
    ];
    const { config, host } = await vowels(server.url, settings);
    const warned: string[] = [];
    await runTraining({ config, files: ['test'], overrides: [] }, host, {
      info: () => {},
      warn: (line) => warned.push(line),
      // the server holds every request of step 1 (SGLang's pause), and serves again from step 2
      onCheckpoint: async (path) => {
        const route = path.endsWith('checkpoint-1') ? '/pause_generation' : '/continue_generation';
        expect((await call(server.url, route, {})).status).toBe(200);
      },
    });
    const steps = readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
    expect(steps.map((s) => s.step)).toEqual([0, 1, 2]);
    const [, idle, after] = steps;
    expect(idle!.metrics['env/Vowels/infer_failure']).toBe(1);
    expect(idle!.metrics['rollout/dropped_groups']).toBe(2);
    expect(idle!.metrics['system/samples']).toBe(0);
    expect(idle!.metrics['actor/lr']).toBeUndefined();
    expect(idle!.metrics['critic/kl_coef']).toBeUndefined();
    expect(warned).toContain(
      'step 2: no episode left to learn from; the update is skipped (weights, learning rate, KL coefficient and policy version unchanged)',
    );

    const checkpoint = (n: number) => join(out, 'checkpoints', `checkpoint-${n}`);
    // the idle step changed nothing the next step learns with
    expect(bytes(join(checkpoint(2), 'actor', 'model.safetensors')).equals(bytes(join(checkpoint(1), 'actor', 'model.safetensors')))).toBe(true);
    expect(bytes(join(checkpoint(2), 'optimizer.safetensors')).equals(bytes(join(checkpoint(1), 'optimizer.safetensors')))).toBe(true);
    const [one, two] = [trainerState(checkpoint(1)), trainerState(checkpoint(2))];
    expect(two).toMatchObject({ global_step: 2, policy_version: 1, kl_coef: one.kl_coef, optimizers: one.optimizers });
    expect(one.kl_coef).not.toBe(0.2);
    // step 2 learns at the schedule's second position, with the coefficient step 0 left
    const schedule = learningRateSchedule(config, 'actor_train');
    expect(after!.metrics['actor/lr']).toBe(learningRateAt(1, schedule));
    expect(learningRateAt(1, schedule)).not.toBe(learningRateAt(2, schedule));
    expect(after!.metrics['critic/kl_coef']).toBe(one.kl_coef);
    // nothing new went to the server: step 2 played version 1, written once, at step 1
    const folders = readdirSync(resolve(config.model_update_dir)).sort();
    expect(folders).toEqual([expect.stringMatching(/^weights-0-[0-9a-f]+$/), expect.stringMatching(/^weights-1-[0-9a-f]+$/)]);
    expect((await call(server.url, '/get_weight_version')).body).toEqual({ weight_version: folders[1] });

    // resumed after the idle step, the run ends as the uninterrupted one did
    const again = await vowels(server.url, [...settings, `resume_from_checkpoint=${checkpoint(2)}`, `checkpoint_config.output_dir=${join(out, 'resumed')}`]);
    await runTraining({ config: again.config, files: ['test'], overrides: [] }, again.host, quiet);
    const resumed = join(out, 'resumed', 'checkpoint-3');
    expect(bytes(join(resumed, 'actor', 'model.safetensors')).equals(bytes(join(checkpoint(3), 'actor', 'model.safetensors')))).toBe(true);
    expect(bytes(join(resumed, 'optimizer.safetensors')).equals(bytes(join(checkpoint(3), 'optimizer.safetensors')))).toBe(true);
    expect(trainerState(resumed)).toMatchObject({ global_step: 3, policy_version: 2, kl_coef: trainerState(checkpoint(3)).kl_coef });
  });
});
