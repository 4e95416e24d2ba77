/**
 * The warm start, and the promise the product makes: a few RL steps from a warm-started base raise
 * the mean reward. The task is the two-armed bandit made deterministic (the risky arm always pays
 * 1, the safe one 0.1), so the base, which names either arm at random, scores about 0.55, and a
 * policy that learned to pull the risky arm scores up to 1. Everything is seeded: the same numbers
 * every run.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../../src/engine/tf';
import { ChatFormat } from '../../src/rollout/chat';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import type { AgenticConfig } from '../../src/config/schema';
import { PluginHost } from '../../src/host/plugin_host';
import { openRollouts } from '../../src/rollout_sources/open';
import { Trainer } from '../../src/train/trainer';
import type { StepReport } from '../../src/train/types';
import { existingBase, FINGERPRINT_FILE } from '../../src/train/warm_start/base_cache';
import { supervisedRows } from '../../src/train/warm_start/data';
import { warmStart } from '../../src/train/warm_start/train_base';
import type { Sample } from '../../src/rollout/types';
import { scratch } from '../helpers';
import { configOf, microPolicyFolder } from './helpers';

setDefaultTimeout(120_000);

/** Runs a trainer to its end; its step reports. */
async function reportsOf(config: AgenticConfig, host: PluginHost): Promise<StepReport[]> {
  const reports: StepReport[] = [];
  const trainer = await Trainer.create(config, host, openRollouts, { onStep: (r) => void reports.push(r) });
  try {
    await trainer.run();
  } finally {
    await trainer.close();
  }
  return reports;
}

function banditYaml(pretrain: string, baseDir: string): string {
  return `
seed: 3
pretrain: ${pretrain}
max_steps: 6
eval_steps: 6
sequence_length: 256
rollout_batch_size: 32
val_batch_size: 64
adv_estimator: grpo
reward_normalization: {grouping: traj_group_id, method: mean_std}
warm_start: {enabled: true, episodes: 256, epochs: 12, batch_size: 16, learning_rate: 3.0e-3, output_dir: ${baseDir}}
custom_envs:
  Bandit:
    env_type: bandit
    env_manager_cls: step
    max_steps: 1
    max_tokens_per_step: 12
    agent_system_template: "Pull an arm."
    agent_template: "{current_observation}"
    env_config: {risky_prob: 1.0}
train_env_manager: {num_env_groups: 4, group_size: 8, tags: [Bandit], generating_args: {max_new_tokens: 12, temperature: 1.0}}
val_env_manager: {num_env_groups: 64, group_size: 1, tags: [Bandit], generating_args: {max_new_tokens: 12, temperature: 1.0}}
actor_train:
  training_args: {learning_rate: 3.0e-3, per_device_train_batch_size: 16, gradient_accumulation_steps: 1}
`;
}

describe('supervisedRows', () => {
  const chat = new ChatFormat(defaultTokenizer());
  const stop = chat.stopTokenIds[0]!;
  const sample = (ids: number[], mask: number[], turns: Array<[number, number, number]>) =>
    ({
      inputIds: Int32Array.from(ids),
      responseMask: Uint8Array.from(mask),
      turns: turns.map(([prompt, response, end]) => ({ prompt, response, end })),
    }) as unknown as Sample;

  test('a row that ends on its response gets the end-of-turn token, and learns it', () => {
    const { ids, masks } = supervisedRows([sample([1, 2, 3, 4], [0, 0, 1, 1], [[0, 2, 4]])], chat);
    expect([...ids[0]!]).toEqual([1, 2, 3, 4, stop]);
    expect([...masks[0]!]).toEqual([0, 0, 1, 1, 1]);
  });

  test('inside a trajectory the closing token already there is learned where it stands', () => {
    const { ids, masks } = supervisedRows(
      [
        sample(
          [1, 2, stop, 5, 6, 7],
          [0, 1, 0, 0, 1, 1],
          [
            [0, 1, 2],
            [3, 4, 6],
          ],
        ),
      ],
      chat,
    );
    expect([...ids[0]!]).toEqual([1, 2, stop, 5, 6, 7, stop]);
    expect([...masks[0]!]).toEqual([0, 1, 1, 0, 1, 1, 1]);
  });
});

describe('warm start then RL on the bandit', async () => {
  const pretrain = await microPolicyFolder();
  const baseDir = join(scratch(), 'base');
  const host = new PluginHost();
  const config = await configOf(banditYaml(pretrain, baseDir), host);

  test('the warm start teaches the format, saves a base with its fingerprint, and is reused for the same settings', async () => {
    const tensors = tf.memory().numTensors;
    const lines: string[] = [];
    const built = await warmStart(config, host, { info: (line) => lines.push(line) });
    expect(built.built).toBe(true);
    expect(built.rows).toBe(256);
    expect(built.losses.at(-1)!).toBeLessThan(built.losses[0]! * 0.5);
    expect(existsSync(join(baseDir, 'model.safetensors'))).toBe(true);
    expect(JSON.parse(readFileSync(join(baseDir, FINGERPRINT_FILE), 'utf8')).rows).toBe(256);
    expect(tf.memory().numTensors).toBe(tensors);

    const again = await warmStart(config, host, { info: () => {} });
    expect(again).toEqual({ folder: baseDir, built: false, rows: 0, losses: [] });
    expect(existingBase({ ...config, seed: 4 })).toBeNull();
    // the learning-rate schedule shapes the base too
    const decayed = config.warm_start.lr_scheduler_type === 'cosine' ? 'constant' : 'cosine';
    expect(existingBase({ ...config, warm_start: { ...config.warm_start, lr_scheduler_type: decayed } })).toBeNull();
    // the same settings, but rows other than the base's (an env that changed its notes, say): not the same base
    const recorded = JSON.parse(readFileSync(join(baseDir, FINGERPRINT_FILE), 'utf8'));
    expect(existingBase(config, recorded.data)).toBe(baseDir);
    expect(existingBase(config, 'another digest')).toBeNull();
  });

  test('six GRPO steps from the base raise the validation score well above it', async () => {
    const reports = await reportsOf({ ...config, pretrain: baseDir }, host);
    const base = reports[0]!.metrics['val/score/mean']!;
    const final = reports.at(-1)!.metrics['val/score/mean']!;
    const valid = reports[0]!.metrics['val/env/Bandit/action_is_valid']!;
    // the base writes valid answers and picks either arm: about 0.1 x 1/2 + 1 x 1/2
    expect(valid).toBeGreaterThan(0.9);
    expect(base).toBeGreaterThan(0.3);
    expect(base).toBeLessThan(0.75);
    expect(final).toBeGreaterThan(base + 0.2);
  });

  test("an answer temperature: the base's answers are sampled at it, and the trainer scores them at it", async () => {
    const hot = await configOf(banditYaml(pretrain, baseDir), host, [
      'max_steps=1',
      'eval_steps=0',
      'enable_old_logprobs_recompute=true',
      'train_env_manager.generating_args.answer_temperature=2.5',
      // among the 4 likeliest tokens: at 2.5 over the whole vocabulary, the micro base's answers fall
      // apart (3% valid)
      'train_env_manager.generating_args.top_k=4',
    ]);
    const metrics = (await reportsOf({ ...hot, pretrain: baseDir }, host))[0]!.metrics;
    // most episodes still answered (0.75), so each answer's first token was sampled at 2.5: scored
    // at 1 instead, those log-probs would be far from the sampler's
    expect(metrics['env/Bandit/action_is_valid']!).toBeGreaterThan(0.5);
    expect(metrics['actor/train_infer_logprob_gap']!).toBeLessThan(1e-4);
  });
});
