/**
 * Rehearsal (warm_start.rehearsal_coef): during RL, one supervised step per training step on fresh
 * random-action rows whose loss covers only the reading (the think notes), never the random move.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors';
import { tf } from '../../src/engine/tf';
import { loadModel, saveModel } from '../../src/model/load';
import { PluginHost } from '../../src/host/plugin_host';
import { ChatFormat } from '../../src/rollout/chat';
import { openRollouts } from '../../src/rollout_sources/open';
import { Trainer } from '../../src/train/trainer';
import { rehearsalRows } from '../../src/train/warm_start/data';
import { scratch } from '../helpers';
import { microPolicyFolder, shippedConfig } from './helpers';

setDefaultTimeout(60_000);

let folder = '';
beforeAll(async () => {
  folder = await microPolicyFolder();
});

/** The default FrozenLake config at test size. */
async function smallConfig(overrides: string[]) {
  const config = await shippedConfig('agentic', [
    `pretrain=${folder}`,
    'max_steps=2',
    'eval_steps=0',
    `output_dir=${scratch()}`,
    'rollout_batch_size=4',
    'train_env_manager.num_env_groups=2',
    'train_env_manager.group_size=2',
    'custom_envs.FrozenLakeTrain.max_steps=2',
    'warm_start.rehearsal_episodes=2',
    ...overrides,
  ]);
  return config;
}

describe('rehearsal rows', () => {
  test('teach the notes and never the move, from a seed stream of their own per step', async () => {
    const config = await smallConfig([]);
    const { model, tokenizer } = await loadModel(folder, { seed: 0, trainable: false });
    model.dispose();
    const chat = new ChatFormat(tokenizer);
    const host = new PluginHost();
    const rows = await rehearsalRows(config, host, chat, 0);
    expect(rows.ids.length).toBeGreaterThan(0);
    for (let r = 0; r < rows.ids.length; r++) {
      const ids = Array.from(rows.ids[r]!);
      const mask = rows.masks[r]!;
      const first = mask.indexOf(1);
      const learned = tokenizer.decode(
        ids.filter((_, t) => mask[t]),
        { skipSpecialTokens: false },
      );
      const rest = tokenizer.decode(
        ids.slice(first).filter((_, t) => !mask[first + t]),
        { skipSpecialTokens: false },
      );
      // one contiguous span from the response's start to just past </think>
      expect(mask.lastIndexOf(1) - first + 1).toBe(mask.reduce((a, b) => a + b, 0));
      expect(learned).toMatch(/^<think>goal [^<]*; holes [^<]*<\/think><?$/);
      expect(rest).toMatch(/^<?answer>(Up|Down|Left|Right)<\/answer><\|im_end\|>$/);
    }
    expect(await rehearsalRows(config, host, chat, 0)).toEqual(rows);
    expect((await rehearsalRows(config, host, chat, 1)).ids).not.toEqual(rows.ids);
  });

  test('need something to rehearse: one line naming the key', async () => {
    const error = await smallConfig(['warm_start.rehearsal_coef=1', 'warm_start.think=false']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'warm_start.rehearsal_coef: rehearsal replays the reading (warm_start.think or warm_start.state_questions), and both are off',
    );
  });
});

describe('a run with rehearsal', () => {
  async function finalWeights(coef: number): Promise<{ weights: Uint8Array; losses: number[] }> {
    const config = await smallConfig([`warm_start.rehearsal_coef=${coef}`]);
    const before = tf.memory().numTensors;
    const trainer = await Trainer.create(config, new PluginHost(), openRollouts);
    try {
      const { reports } = await trainer.run();
      const out = join(config.output_dir, 'model');
      await saveModel(out, trainer.roles.actor, trainer.roles.tokenizer);
      const losses = reports.map((r) => r.metrics['rehearsal/loss']).filter((v): v is number => v !== undefined);
      for (const r of reports) if (coef > 0) expect(r.metrics['rehearsal/rows']).toBeGreaterThan(0);
      return { weights: readFileSync(join(out, 'model.safetensors')), losses };
    } finally {
      await trainer.close();
      expect(tf.memory().numTensors).toBe(before);
    }
  }

  test('takes one supervised step a training step, which moves the weights; off by default', async () => {
    const off = await finalWeights(0);
    const on = await finalWeights(1);
    expect(off.losses).toEqual([]);
    expect(on.losses.length).toBe(2);
    for (const loss of on.losses) expect(loss).toBeGreaterThan(0);
    expect(Buffer.from(on.weights).equals(Buffer.from(off.weights))).toBe(false);
  });
});
