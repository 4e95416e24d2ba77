/**
 * Resuming is exact: a run of N steps, and a run interrupted right after its checkpoint at k and
 * continued by a fresh trainer from that checkpoint, end with byte-identical weights (every role)
 * and the same metrics, timings aside; with a critic (gae), with a reference and an adaptive KL
 * controller, with a lagging actor_infer, with the group filters (whose extra rollouts move the
 * episode counters), in self-play (a game of two seats, each the policy's) and against a pool of
 * past selves. The checkpoint holds what the issue lists, and the
 * log of the resumed run has every step once.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openCheckpoint } from '../../src/checkpoint/load';
import { tf } from '../../src/engine/tf';
import { loadModel } from '../../src/model/load';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import type { StepReport } from '../../src/train/types';
import { scratch } from '../helpers';
import { comparable, interrupted, runIn, type TrainedRun } from './helpers';
import { hostWithVowels, microPolicyFolder } from '../train/helpers';

setDefaultTimeout(60_000);

const host = hostWithVowels();
let pretrain = '';
beforeAll(async () => {
  pretrain = await microPolicyFolder();
});

const bytes = (path: string) => readFileSync(path);
const logged = (run: TrainedRun): StepReport[] => readMetricsJsonl(join(run.out, 'logs', 'metrics.jsonl'));

async function expectSameEnd(straight: TrainedRun, resumed: TrainedRun, roles: readonly string[]): Promise<void> {
  expect(bytes(join(resumed.out, 'model', 'model.safetensors')).equals(bytes(join(straight.out, 'model', 'model.safetensors')))).toBe(true);
  const last = (run: TrainedRun) => join(run.out, 'checkpoints', `checkpoint-${run.maxSteps}`);
  for (const role of roles) {
    expect({ role, same: bytes(join(last(resumed), role, 'model.safetensors')).equals(bytes(join(last(straight), role, 'model.safetensors'))) }).toEqual({
      role,
      same: true,
    });
  }
  expect(bytes(join(last(resumed), 'optimizer.safetensors')).equals(bytes(join(last(straight), 'optimizer.safetensors')))).toBe(true);
  const a = logged(straight);
  const b = logged(resumed);
  expect(b.map((r) => r.step)).toEqual(a.map((r) => r.step));
  expect(comparable(b)).toEqual(comparable(a));
}

/**
 * `stopped`: the run is stopped right after checkpoint-2 and resumed with auto; otherwise a fresh
 * trainer resumes from a copy of the uninterrupted run's checkpoint-2 (the same bytes a stopped
 * run leaves, as the stopped cases show), whose later steps and log it must replace.
 */
describe('a resumed run ends where the uninterrupted one does', () => {
  const cases: Array<[string, string[], string[], 'stopped' | 'copied']> = [
    [
      'gae with a critic, two PPO epochs, cosine schedule',
      ['adv_estimator=gae', 'ppo_epochs=2', 'actor_train.training_args.lr_scheduler_type=cosine', 'actor_train.training_args.warmup_steps=1'],
      ['actor', 'critic'],
      'copied',
    ],
    [
      'a reference, an adaptive KL controller and a KL loss',
      ['add_token_level_kl=true', 'init_kl_coef=0.05', 'target_kl=0.01', 'kl_horizon=10', 'use_kl_loss=true', 'kl_loss_coef=0.1'],
      ['actor', 'reference'],
      'stopped',
    ],
    ['a lagging actor_infer and validation', ['actor_infer.model_update_frequency=2', 'eval_steps=2'], ['actor', 'actor_infer'], 'copied'],
    [
      // groups of two on the binary vowels env often score alike: steps play extra rollouts, which advance the episode counters
      'dynamic sampling (filter_groups) and the variance filter',
      [
        'custom_envs.Vowels.env_config.binary=true',
        'train_env_manager.group_size=2',
        'rollout_batch_size=4',
        'filter_groups.enable=true',
        'rollout_filter_ratio=0.5',
      ],
      ['actor'],
      'stopped',
    ],
    [
      // both seats the policy's: two records a game, credit by seat, the seats rotated by group and game;
      // rae's running baselines per seat are state the checkpoint carries
      "self-play on tic_tac_toe, SPIRAL's role-conditioned advantage (rae)",
      [
        'custom_envs.Vowels.env_type=tic_tac_toe',
        '~custom_envs.Vowels.env_config.rounds',
        '+custom_envs.Vowels.env_config.prompt_style=compact',
        '+custom_envs.Vowels.env_config.opening_moves=2',
        'custom_envs.Vowels.env_manager_cls=step',
        'custom_envs.Vowels.max_steps=9',
        'adv_estimator=rae',
        'rae_alpha=0.5',
      ],
      ['actor'],
      'stopped',
    ],
    [
      // O played by past selves: the resumed run reads the pool's snapshots back from their folders
      'fictitious self-play: a seat played by the opponent pool',
      [
        'custom_envs.Vowels.env_type=tic_tac_toe',
        '~custom_envs.Vowels.env_config.rounds',
        '+custom_envs.Vowels.env_config.prompt_style=compact',
        'custom_envs.Vowels.env_manager_cls=step',
        'custom_envs.Vowels.max_steps=9',
        'custom_envs.Vowels.seats={O: past}',
        'val_env_manager.tags=[]',
        'opponent_pool.snapshot_every=1',
        'opponent_pool.size=2',
      ],
      ['actor'],
      'stopped',
    ],
  ];
  for (const [name, overrides, roles, how] of cases) {
    test(name, async () => {
      const before = tf.memory().numTensors;
      const settings = [...overrides, 'max_steps=3', 'save_steps=1'];
      const straight = await runIn(scratch(), host, pretrain, settings);
      const out = scratch();
      let resumeFrom = 'auto';
      if (how === 'stopped') {
        await interrupted(out, host, pretrain, settings, 2);
      } else {
        cpSync(straight.out, out, { recursive: true });
        resumeFrom = join(out, 'checkpoints', 'checkpoint-2');
      }
      const resumed = await runIn(out, host, pretrain, [...settings, `resume_from_checkpoint=${resumeFrom}`]);
      expect(resumed.result.resumedFrom).toBe(join(out, 'checkpoints', 'checkpoint-2'));
      expect(resumed.result.steps).toBe(1);
      await expectSameEnd(straight, resumed, roles);
      expect(tf.memory().numTensors).toBe(before);
    });
  }
});

describe('a checkpoint', () => {
  test('holds the models, the optimizer, the loop state, the metric history and the config, under a manifest', async () => {
    const run = await runIn(scratch(), host, pretrain, [
      'adv_estimator=gae',
      'max_steps=2',
      'save_steps=1',
      'add_token_level_kl=true',
      'init_kl_coef=0.05',
      'target_kl=0.01',
    ]);
    const folder = join(run.out, 'checkpoints', 'checkpoint-1');
    expect(readdirSync(join(run.out, 'checkpoints')).sort()).toEqual(['checkpoint-1', 'checkpoint-2']);
    expect(readdirSync(folder).sort()).toEqual([
      'actor',
      'config.yaml',
      'critic',
      'manifest.json',
      'metrics.jsonl',
      'optimizer.safetensors',
      'reference',
      'trainer_state.json',
    ]);
    expect(readdirSync(join(folder, 'actor')).sort()).toEqual([
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const checkpoint = openCheckpoint(folder);
    const state = checkpoint.state;
    expect(state.global_step).toBe(1);
    expect(state.rng).toEqual({ seed: 5, train_next_episode: [1, 1] });
    expect(state.optimizers.actor_train.step).toBeGreaterThan(0);
    expect(state.optimizers.critic!.step).toBeGreaterThan(0);
    expect(state.kl_coef).not.toBe(0.05); // the adaptive controller moved it
    expect(state.lr_schedule.actor_train).toEqual({ type: 'constant', peak: 1e-3, total_steps: 2, warmup_steps: 0 });
    expect(readMetricsJsonl(join(folder, 'metrics.jsonl')).map((r) => r.step)).toEqual([0]);
    expect(readFileSync(join(folder, 'config.yaml'), 'utf8')).toContain('adv_estimator: gae');
    const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8'));
    expect(Object.keys(manifest.files)).toContain('actor/model.safetensors');
    expect(manifest.files['optimizer.safetensors'].sha256).toMatch(/^[0-9a-f]{64}$/);
    // the actor folder is an ordinary Hugging Face folder: it loads as pretrain
    const loaded = await loadModel(join(folder, 'actor'), { seed: 0, trainable: false });
    expect(loaded.model.config.hidden_size).toBe(32);
    loaded.model.dispose();
    expect(existsSync(join(run.out, 'checkpoints', 'checkpoint-2', 'manifest.json'))).toBe(true);
  });
});
