/**
 * Every shipped config trains: each configs/*.yaml runs two steps and a validation on the micro
 * policy, shrunk to a group or two per tag and a few tokens per turn, with finite metrics and a
 * flat tensor count.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AgenticConfig, EnvManagerConfig } from '../../src/config/schema';
import { tf } from '../../src/engine/tf';
import { PluginHost } from '../../src/host/plugin_host';
import { openRollouts } from '../../src/rollout_sources/open';
import { Trainer } from '../../src/train/trainer';
import { ROOT, scratch } from '../helpers';
import { microPolicyFolder, shippedConfig } from './helpers';

setDefaultTimeout(60_000);

const CONFIGS = readdirSync(join(ROOT, 'configs'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.slice(0, -'.yaml'.length))
  .sort();

let folder = '';
beforeAll(async () => {
  folder = await microPolicyFolder();
});

function shrinkManager(manager: EnvManagerConfig, groupSize: number): number {
  manager.num_env_groups = manager.tags.length;
  manager.num_groups_partition = manager.tags.map(() => 1);
  manager.group_size = groupSize;
  if (manager.generating_args) manager.generating_args.max_new_tokens = Math.min(manager.generating_args.max_new_tokens, 12);
  return manager.num_env_groups * groupSize;
}

/** The config at test size: its algorithm and envs as shipped, everything else small. */
function shrink(config: AgenticConfig): AgenticConfig {
  config.rollout_batch_size = shrinkManager(config.train_env_manager, 2);
  if (config.val_env_manager.tags.length) config.val_batch_size = shrinkManager(config.val_env_manager, 1);
  for (const env of Object.values(config.custom_envs)) {
    env.max_steps = Math.min(env.max_steps, 2);
    env.max_tokens_per_step = Math.min(env.max_tokens_per_step, 12);
  }
  config.actor_infer.generating_args.max_new_tokens = 12;
  return config;
}

test('the shipped configs are found', () => {
  expect(CONFIGS).toContain('agentic');
  expect(CONFIGS.length).toBeGreaterThanOrEqual(5);
});

describe('every shipped config trains', () => {
  for (const name of CONFIGS) {
    test(name, async () => {
      const config = shrink(await shippedConfig(name, [`pretrain=${folder}`, 'max_steps=2', 'eval_steps=1', `output_dir=${scratch()}`]));
      const host = new PluginHost();
      const before = tf.memory().numTensors;
      const trainer = await Trainer.create(config, host, openRollouts);
      try {
        const { reports } = await trainer.run();
        const steps = reports.filter((r) => r.metrics['system/tensors'] !== undefined);
        expect(steps.length).toBe(2);
        for (const { metrics } of steps) {
          for (const [key, value] of Object.entries(metrics)) if (!Number.isFinite(value)) throw new Error(`${name}: ${key} is ${value}`);
          // a config that skips samples without advantage updates nothing when all scored alike
          if (metrics['actor/update_samples'] === 0) {
            expect(metrics['critic/zero_advantage_frac']).toBe(1);
            continue;
          }
          // dynamic sampling: a step whose every rollout scored alike, up to the cap, keeps no group and trains nothing
          if (metrics['dynamic_sampling/kept_groups'] === 0) {
            expect(metrics['dynamic_sampling/gen_batches']).toBe(config.filter_groups.max_num_gen_batches);
            expect(metrics['actor/pg_loss']).toBeUndefined();
            continue;
          }
          expect(metrics['actor/pg_loss']).toBeDefined();
          expect(metrics['actor/skipped_steps']).toBe(0);
        }
        expect(steps[0]!.metrics['system/tensors']).toBe(steps[1]!.metrics['system/tensors']);
        if (config.val_env_manager.tags.length) expect(reports.at(-1)!.metrics['val/score/mean']).toBeDefined();
      } finally {
        await trainer.close();
      }
      expect(tf.memory().numTensors).toBe(before);
    });
  }
});
