/**
 * The opponent pool (src/rollout/opponent_pool.ts): which snapshots make the pool of a policy
 * version; snapshots taken from actor_train when due, read back from their folders by a resumed
 * run, and a missing one refused; each group's game drawing one by the seed; and the past seats of
 * a training rollout played by the drawn snapshot, never recorded.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../../src/engine/tf';
import { copyWeights } from '../../src/model/copy_weights';
import { loadModel } from '../../src/model/load';
import { Qwen2Model } from '../../src/model/qwen2';
import { EnvManager } from '../../src/rollout/env_manager';
import { OpponentPool, poolVersions, snapshotFolder } from '../../src/rollout/opponent_pool';
import { scratch } from '../helpers';
import { microPolicyConfig } from '../model/tiny';
import { chat, configFrom, hostWith, tokenizer } from './helpers';

const shape = microPolicyConfig(tokenizer.vocabSize);

/** Self-play of tic_tac_toe with O played by the pool, validation on nothing (the pool is training's). */
function poolYaml(out: string, rotate = false): string {
  return `
seed: 5
output_dir: ${out}
sequence_length: 1024
rollout_batch_size: 8
opponent_pool: {snapshot_every: 1, size: 2}
custom_envs:
  Game:
    env_type: tic_tac_toe
    env_manager_cls: step
    max_steps: 9
    max_tokens_per_step: 8
    env_config: {prompt_style: compact}
    seats: {O: past}
    rotate_seats: ${rotate}
train_env_manager: {num_env_groups: 4, group_size: 2, tags: [Game], generating_args: {max_new_tokens: 8, temperature: 1, top_p: 1, top_k: 0}}
val_env_manager: {tags: []}
`;
}

async function weightsOf(model: Qwen2Model): Promise<Buffer> {
  const weights = await model.toWeights();
  return Buffer.concat([...weights.values()].map((w) => Buffer.from(w.data.buffer, w.data.byteOffset, w.data.byteLength)));
}

async function folderWeights(folder: string): Promise<Buffer> {
  const loaded = await loadModel(folder, { seed: 0, trainable: false });
  try {
    return await weightsOf(loaded.model);
  } finally {
    loaded.model.dispose();
  }
}

test("a version's pool is the latest `size` multiples of snapshot_every up to it", () => {
  expect(poolVersions(0, 10, 4)).toEqual([0]);
  expect(poolVersions(9, 10, 4)).toEqual([0]);
  expect(poolVersions(25, 10, 4)).toEqual([0, 10, 20]);
  expect(poolVersions(57, 10, 4)).toEqual([20, 30, 40, 50]);
  expect(poolVersions(3, 1, 2)).toEqual([2, 3]);
});

describe('snapshots', () => {
  test('are taken from actor_train when due, read back by a resumed run, and freed when they leave the pool', async () => {
    const before = tf.memory().numTensors;
    const config = await configFrom(poolYaml(scratch()));
    const actor = Qwen2Model.random(shape, { seed: 1 });
    const later = [2, 3].map((seed) => Qwen2Model.random(shape, { seed }));
    const pool = new OpponentPool(config, tokenizer);
    const taken: Buffer[] = [];
    for (const version of [0, 1, 2]) {
      if (version > 0) copyWeights(later[version - 1]!, actor);
      await pool.update(version, actor);
      taken.push(await weightsOf(actor));
    }
    for (const version of [0, 1, 2]) expect((await folderWeights(snapshotFolder(config, version))).equals(taken[version]!)).toBe(true);
    expect(pool.takeMetrics()).toEqual({ 'opponent_pool/snapshots': 2 });

    // a run resumed at version 2 reads version 1 back from its folder and draws as the first did
    const resumed = new OpponentPool(config, tokenizer);
    await resumed.update(2, actor);
    const ages = (p: OpponentPool) => {
      const opened = p.open(chat);
      for (let groupId = 0; groupId < 16; groupId++) {
        const policy = opened.policyFor({ groupId, episodeId: 3 });
        expect(opened.policyFor({ groupId, episodeId: 3 })).toBe(policy);
      }
      return opened.close().then(() => p.takeMetrics());
    };
    const drawn = await ages(pool);
    expect(await ages(resumed)).toEqual(drawn);
    // both snapshots met: the mean age of 16 draws from versions 1 and 2 lies between
    expect(drawn['opponent_pool/opponent_age']).toBeGreaterThan(0);
    expect(drawn['opponent_pool/opponent_age']).toBeLessThan(1);

    for (const model of [actor, ...later]) model.dispose();
    pool.dispose();
    resumed.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  test('a snapshot missing from its folder is refused in one line', async () => {
    const config = await configFrom(poolYaml(scratch()));
    const actor = Qwen2Model.random(shape, { seed: 1 });
    const pool = new OpponentPool(config, tokenizer);
    try {
      const error = await pool.update(3, actor).catch((e: Error) => e);
      expect((error as Error).message).toMatch(
        /^opponent_pool: the snapshot of policy version 2 is not in .*version-2; a resumed run needs the pool its run wrote there$/,
      );
      expect(existsSync(join(snapshotFolder(config, 3), 'model.safetensors'))).toBe(true);
    } finally {
      pool.dispose();
      actor.dispose();
    }
  });
});

test("a training rollout's past seats are played by the pool's snapshots and only the policy's seats are recorded", async () => {
  const before = tf.memory().numTensors;
  const config = await configFrom(poolYaml(scratch()));
  const actor = Qwen2Model.random(shape, { seed: 1 });
  const pool = new OpponentPool(config, tokenizer);
  const manager = await EnvManager.build('train', config, hostWith());
  try {
    await pool.update(0, actor);
    manager.useOpponentPool(pool);
    const batch = await manager.play(config.rollout_batch_size, actor, chat);
    expect(batch.episodes).toHaveLength(8);
    for (const episode of batch.episodes) {
      expect(episode.seat!.players).toEqual(['past', 'policy']);
      expect(episode.seat!.index).toBe(1);
      // O moves first: the snapshot answered from its prompt, and none of its turns is a row
      expect(episode.seat!.moves[0]!.seat).toBe(0);
    }
    expect(batch.samples.every((s) => s.seat === 'X')).toBe(true);
    expect(pool.takeMetrics()).toEqual({ 'opponent_pool/snapshots': 1, 'opponent_pool/opponent_age': 0 });
  } finally {
    await manager.close();
    pool.dispose();
    actor.dispose();
  }
  expect(tf.memory().numTensors).toBe(before);
});
