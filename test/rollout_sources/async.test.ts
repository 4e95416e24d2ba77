/**
 * Asynchronous training (async_generation_ratio): the schedule of policy versions and its
 * staleness bound, weights reaching the rollout thread intact, runs that play ahead, resume
 * exactly and drop what is too stale, and a thread crash that fails the run instead of hanging it.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tf } from '../../src/engine/tf';
import { loadModel } from '../../src/model/load';
import { PluginHost } from '../../src/host/plugin_host';
import { RolloutThread } from '../../src/rollout_sources/thread/trainer_side';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { keepFresh, playingVersion, stalenessBound } from '../../src/rollout_sources/async';
import type { InFlight, StepRollout } from '../../src/train/rollout_source';
import { runTraining, type RunResult } from '../../src/cli/training_run';
import { comparable } from '../checkpoint/helpers';
import { scratch } from '../helpers';
import { configOf, microPolicyFolder, vowelsYaml } from '../train/helpers';

setDefaultTimeout(120_000);

const VOWELS_PLUGIN = resolve(import.meta.dir, '../fixtures/plugins/vowels.ts');

let pretrain = '';
beforeAll(async () => {
  pretrain = await microPolicyFolder();
});

/** The rejection of `promise`, or a failure if it resolves (Bun's `rejects` can miss a thread's messages). */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

async function asyncConfig(out: string, overrides: string[]) {
  return configOf(vowelsYaml(pretrain), new PluginHost(), [`output_dir=${out}`, 'track_with=[jsonl]', `plugins=[${VOWELS_PLUGIN}]`, ...overrides]);
}

async function train(out: string, overrides: string[], onCheckpoint?: (path: string) => void): Promise<{ result: RunResult; warnings: string[] }> {
  const host = new PluginHost();
  const config = await configOf(vowelsYaml(pretrain), host, [`output_dir=${out}`, 'track_with=[jsonl]', `plugins=[${VOWELS_PLUGIN}]`, ...overrides]);
  const warnings: string[] = [];
  const result = await runTraining({ config, files: ['test'], overrides }, host, { info: () => {}, warn: (line) => warnings.push(line), onCheckpoint });
  return { result, warnings };
}

const bytes = (path: string) => readFileSync(path);

describe('the schedule', () => {
  test('the batch of step s is played by the weights actor_infer held at step s - k', () => {
    expect([0, 1, 2, 3, 4, 5].map((s) => playingVersion(s, 0, 1))).toEqual([0, 1, 2, 3, 4, 5]);
    expect([0, 1, 2, 3, 4, 5].map((s) => playingVersion(s, 1, 1))).toEqual([0, 0, 1, 2, 3, 4]);
    expect([0, 1, 2, 3, 4, 5].map((s) => playingVersion(s, 2, 1))).toEqual([0, 0, 0, 1, 2, 3]);
    // a lagging actor_infer (model_update_frequency 2) holds even versions only
    expect([0, 1, 2, 3, 4, 5, 6].map((s) => playingVersion(s, 1, 2))).toEqual([0, 0, 0, 2, 2, 4, 4]);
    for (const [k, f] of [
      [1, 1],
      [2, 1],
      [1, 2],
      [3, 4],
    ] as const) {
      const worst = Math.max(...Array.from({ length: 40 }, (_, s) => s - playingVersion(s, k, f)));
      expect(worst).toBe(stalenessBound(k, f));
    }
  });

  test('carried batches beyond the bound are dropped, and every one after them, so episode ids stay in order', () => {
    const batch = (step: number, version: number, counters: number[]): StepRollout => ({
      step,
      version,
      countersAfter: counters,
      baselines: null,
      refLogProbs: null,
      batch: { mode: 'train', episodes: [], samples: new Array(8).fill(null), metrics: {} },
    });
    const inFlight: InFlight = { countersBefore: [4, 4], batches: [batch(5, 3, [5, 5]), batch(6, 4, [6, 6])] };
    expect(keepFresh(inFlight, 2)).toMatchObject({ kept: inFlight.batches, dropped: 0, counters: [6, 6] });
    // with a bound of 1 the first (2 versions old) goes, and the second with it
    expect(keepFresh(inFlight, 1)).toMatchObject({ kept: [], dropped: 16, counters: [4, 4] });
    const fresher: InFlight = { countersBefore: [4, 4], batches: [batch(5, 4, [5, 5]), batch(6, 4, [6, 6])] };
    expect(keepFresh(fresher, 1)).toMatchObject({ kept: [fresher.batches[0]], dropped: 8, counters: [5, 5] });
  });
});

describe('the config', () => {
  test('async runs need the policy proxy and a backend the rollout thread can start: one line naming the key', async () => {
    const random = await rejectionOf(asyncConfig(scratch(), ['async_generation_ratio=1', 'train_env_manager.llm_proxy.proxy_type=random']));
    expect(random.message).toBe(
      "async_generation_ratio: 1 runs actor_infer's model in a worker, but train_env_manager.llm_proxy.proxy_type is random; set it to policy or the ratio to 0",
    );
    const webgpu = await rejectionOf(asyncConfig(scratch(), ['async_generation_ratio=2', 'backend=webgpu']));
    expect(webgpu.message).toBe('async_generation_ratio: the rollout worker runs the wasm or cpu backend, not webgpu; set async_generation_ratio=0 for webgpu');
  });
});

describe('the rollout thread', () => {
  test("after a weight update its logits are actor_train's", async () => {
    const config = await asyncConfig(scratch(), ['async_generation_ratio=1']);
    const thread = await RolloutThread.start(config, { threads: 1 });
    const { model } = await loadModel(pretrain, { seed: 1, trainable: true });
    try {
      const ids = new Int32Array([3, 17, 42, 5, 99, 7]);
      const ours = () => tf.tidy(() => model.logits(model.forward(tf.tensor2d(ids, [1, ids.length], 'int32')).hidden)).dataSync() as Float32Array;
      await thread.pushWeights(0, model);
      const before = await thread.logits(ids);
      expect(maxDifference(before, ours())).toBeLessThan(1e-5);
      // train-like change: every weight moves, so stale weights would show
      tf.tidy(() => model.variables.forEach((v, i) => v.assign(tf.add(v, tf.mul(tf.randomNormal(v.shape, 0, 1, 'float32', i), 0.05)))));
      expect(maxDifference(await thread.logits(ids), ours())).toBeGreaterThan(1e-3);
      await thread.pushWeights(1, model);
      expect(thread.version).toBe(1);
      expect(maxDifference(await thread.logits(ids), ours())).toBeLessThan(1e-5);
    } finally {
      model.dispose();
      await thread.close();
    }
  });

  test('a crash fails what waits on it, and what comes after, with one line', async () => {
    const config = await asyncConfig(scratch(), ['async_generation_ratio=1']);
    const thread = await RolloutThread.start(config, { threads: 1 });
    const { model } = await loadModel(pretrain, { seed: 1, trainable: false });
    await thread.pushWeights(0, model);
    model.dispose();
    const waiting = thread.rollout(8);
    thread.crashForTest(3);
    const error = await rejectionOf(waiting);
    expect(error.message).toBe('rollout worker (actor_infer) stopped unexpectedly (exit code 3)');
    expect((await rejectionOf(thread.validate())).message).toBe(error.message);
    await thread.close();
  });

  test('a plugin that kills the thread mid-run stops the run with one line, not a hang', async () => {
    const host = new PluginHost();
    const exits = resolve(import.meta.dir, '../fixtures/plugins/exits.ts');
    const yaml = vowelsYaml(pretrain)
      .replace('env_type: vowels', `env_type: ${exits}`)
      .replace(/env_config: \{rounds: \d+\}/, 'env_config: {}');
    const config = await configOf(yaml, host, [`output_dir=${scratch()}`, 'track_with=[jsonl]', 'async_generation_ratio=1']);
    const error = await rejectionOf(runTraining({ config, files: ['test'], overrides: [] }, host, { info: () => {}, warn: () => {} }));
    expect(error.message).toBe('rollout worker (actor_infer) stopped unexpectedly (exit code 9)');
  });

  test('a plugin the thread cannot load fails the start with its message', async () => {
    const config = await asyncConfig(scratch(), ['async_generation_ratio=1']);
    const error = await rejectionOf(RolloutThread.start({ ...config, plugins: ['./no/such/plugin.ts'] }, { threads: 1 }));
    expect(error.message).toContain('no/such/plugin.ts: no such plugin file or folder');
  });
});

function maxDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let most = 0;
  for (let i = 0; i < a.length; i++) most = Math.max(most, Math.abs(a[i]! - b[i]!));
  return most;
}

describe('asynchronous runs', () => {
  test('play k steps ahead: staleness, versions and validation as scheduled, deterministic, no tensors left', async () => {
    const before = tf.memory().numTensors;
    const settings = ['async_generation_ratio=1', 'max_steps=3', 'eval_steps=2', 'save_steps=0', 'use_kl_loss=true', 'kl_loss_coef=0.05'];
    const a = await train(scratch(), settings);
    const b = await train(scratch(), settings);
    const steps = a.result.reports.filter((r) => r.step < 3);
    expect(steps.map((r) => r.metrics['async/policy_version'])).toEqual([0, 0, 1]);
    expect(steps.map((r) => r.metrics['async/staleness_max'])).toEqual([0, 1, 1]);
    expect(steps.map((r) => r.metrics['async/dropped_samples'])).toEqual([0, 0, 0]);
    // validation at steps 0 and 2 and after the last
    expect(a.result.reports.filter((r) => r.metrics['val/success/mean'] !== undefined || r.metrics['val/score/mean'] !== undefined).map((r) => r.step)).toEqual(
      [0, 2, 3],
    );
    // step 0's batch was played by the very weights that train on it, later ones by older weights
    const gaps = steps.map((r) => r.metrics['actor/train_infer_logprob_gap']!);
    expect(gaps[0]).toBeLessThan(1e-4);
    expect(gaps[1]).toBeGreaterThan(1e-3);
    expect(steps[1]!.metrics['actor/is_weight_mean']).toBeGreaterThan(0);
    // the rollout thread scores each batch with the reference; at step 0 actor_train still is the
    // reference, so its old log-probs (the trainer's) and the thread's reference ones agree
    expect(steps[0]!.metrics['critic/kl']).toBeLessThan(1e-5);
    expect(steps[2]!.metrics['critic/kl']).toBeGreaterThan(1e-5);
    expect(steps[0]!.metrics['time/rollout_ref']).toBeGreaterThan(0);
    expect(comparable(b.result.reports)).toEqual(comparable(a.result.reports));
    expect(tf.memory().numTensors).toBe(before);
  });

  // [name, settings, the checkpoint resumed, batches it carries]
  const cases: Array<[string, string[], number, number]> = [
    // steps 2 and 3 were played with versions 0 and 1, which checkpoint-2 does not hold
    ['two steps ahead', ['async_generation_ratio=2', 'max_steps=4', 'save_steps=1', 'eval_steps=2'], 2, 2],
    // actor_infer updated every 2 steps: at step 3 it holds version 2, saved as actor_infer/;
    // step 3's batch was played by version 2 and step 4's will be, so nothing is carried
    [
      'a lagging actor_infer, resumed between its updates',
      ['async_generation_ratio=1', 'actor_infer.model_update_frequency=2', 'max_steps=5', 'save_steps=1'],
      3,
      0,
    ],
  ];
  for (const [name, settings, at, carried] of cases) {
    test(`resume continues exactly (${name}): the in-flight batches are saved with the checkpoint`, async () => {
      const straightOut = scratch();
      await train(straightOut, settings);
      const out = scratch();
      cpSync(straightOut, out, { recursive: true });
      const from = join(out, 'checkpoints', `checkpoint-${at}`);
      const state = JSON.parse(readFileSync(join(from, 'trainer_state.json'), 'utf8'));
      expect(state.in_flight).toEqual({ file: 'in_flight_rollouts.json', batches: carried });
      const resumed = await train(out, [...settings, `resume_from_checkpoint=${from}`]);
      const maxSteps = Number(settings.find((o) => o.startsWith('max_steps='))!.split('=')[1]);
      expect(resumed.result.steps).toBe(maxSteps - at);
      expect(bytes(join(out, 'model', 'model.safetensors')).equals(bytes(join(straightOut, 'model', 'model.safetensors')))).toBe(true);
      const logged = (dir: string) => readMetricsJsonl(join(dir, 'logs', 'metrics.jsonl'));
      expect(comparable(logged(out))).toEqual(comparable(logged(straightOut)));
    });
  }

  test("remax's greedy baselines are played by the thread; gae's critic trains here", async () => {
    const remax = await train(scratch(), ['async_generation_ratio=1', 'adv_estimator=remax', 'max_steps=2', 'save_steps=0']);
    for (const r of remax.result.reports) expect(r.metrics['critic/remax_baseline/mean']).toBeGreaterThanOrEqual(0);
    const gae = await train(scratch(), ['async_generation_ratio=1', 'adv_estimator=gae', 'max_steps=2', 'save_steps=0']);
    for (const r of gae.result.reports) expect(r.metrics['critic/vf_loss']).toBeGreaterThan(0);
    expect(gae.result.reports.map((r) => r.metrics['async/staleness_max'])).toEqual([0, 1]);
  });

  test('resumed with a smaller ratio, the carried batches too stale for it are dropped and played again', async () => {
    const out = scratch();
    await train(out, ['async_generation_ratio=2', 'max_steps=3', 'save_steps=1']);
    const from = join(out, 'checkpoints', 'checkpoint-2');
    const resumed = await train(out, ['async_generation_ratio=1', 'max_steps=3', 'save_steps=1', `resume_from_checkpoint=${from}`]);
    const step2 = resumed.result.reports.find((r) => r.step === 2)!;
    // batch 2 was played by version 0: two versions old, one more than k = 1 allows
    expect(step2.metrics['async/dropped_samples']).toBe(8);
    expect(step2.metrics['async/staleness_max']).toBe(0);
    expect(step2.metrics['async/policy_version']).toBe(2);
  });
});
