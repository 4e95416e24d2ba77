/**
 * The training loop on a micro policy: every estimator, KL and loss setting runs with finite
 * losses and a flat tensor count; the PPO ratio is real; actor_infer follows its update frequency;
 * a non-finite update is skipped without touching the weights; the same seed gives the same run.
 * (Whether runs learn is issue #7's subject, with its own tests.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { openCheckpoint, restoreTrainer } from '../../src/checkpoint/load';
import { saveCheckpoint } from '../../src/checkpoint/save';
import { tf } from '../../src/engine/tf';
import { TrainingError } from '../../src/errors';
import { openRollouts } from '../../src/rollout_sources/open';
import { Trainer } from '../../src/train/trainer';
import type { StepReport } from '../../src/train/types';
import { configOf, hostWithVowels, microPolicyFolder, vowelsYaml } from './helpers';

setDefaultTimeout(30_000);

let folder = '';
const host = hostWithVowels();

beforeAll(async () => {
  folder = await microPolicyFolder();
});

async function train(
  overrides: string[],
  options: { rounds?: number; kind?: 'traj' | 'step'; poison?: (step: number, role: string, update: number) => boolean } = {},
) {
  const config = await configOf(vowelsYaml(folder, { rounds: options.rounds, kind: options.kind }), host, overrides);
  const before = tf.memory().numTensors;
  const trainer = await Trainer.create(config, host, openRollouts, { poison: options.poison });
  try {
    const summary = await trainer.run();
    return summary;
  } finally {
    await trainer.close();
    expect(tf.memory().numTensors).toBe(before);
  }
}

function expectHealthy(reports: readonly StepReport[]): void {
  const steps = reports.filter((r) => r.metrics['system/tensors'] !== undefined);
  expect(steps.length).toBeGreaterThan(0);
  for (const { metrics } of steps) {
    for (const [key, value] of Object.entries(metrics)) if (!Number.isFinite(value)) throw new Error(`${key} is ${value}`);
    expect(metrics['actor/skipped_steps'] ?? 0).toBe(0);
  }
  // every step leaves the tensor count where it found it
  expect(new Set(steps.map((r) => r.metrics['system/tensors'])).size).toBe(1);
}

describe('every estimator, KL and loss setting trains', () => {
  const cases: Array<[string, string[], { rounds?: number; kind?: 'traj' | 'step' }]> = [
    ['grpo', [], {}],
    ['reinforce', ['adv_estimator=reinforce', 'reward_normalization.grouping=batch', 'reward_normalization.method=mean'], {}],
    ['gae, with value clip', ['adv_estimator=gae', 'value_clip=0.2', 'lambd=0.9', 'gamma=0.99'], { rounds: 2 }],
    ['reinforce_plus_plus', ['adv_estimator=reinforce_plus_plus'], { rounds: 2 }],
    ['rloo', ['adv_estimator=rloo'], {}],
    ['remax', ['adv_estimator=remax'], {}],
    ['agentic_reinforce', ['adv_estimator=agentic_reinforce', 'gamma=0.9'], { rounds: 2 }],
    ['gigpo', ['adv_estimator=gigpo'], { rounds: 2, kind: 'step' }],
    ['step_reinforce', ['adv_estimator=step_reinforce'], { rounds: 2, kind: 'step' }],
    ['KL in the reward, adaptive', ['add_token_level_kl=true', 'init_kl_coef=0.05', 'target_kl=0.01', 'kl_horizon=100', 'kl_penalty=k3'], {}],
    [
      'KL loss, whitening, clips',
      ['use_kl_loss=true', 'kl_loss_coef=0.1', 'kl_loss_type=mse', 'whiten_advantages=true', 'advantage_clip=0.5', 'reward_clip=1', 'whiten_rewards=true'],
      {},
    ],
    [
      'dual clip, clip range, entropy, 2 epochs',
      ['dual_clip_loss=true', 'use_pg_clip_range=true', 'pg_clip_low=0.1', 'pg_clip_high=0.3', 'entropy_loss_coef=0.01', 'ppo_epochs=2'],
      {},
    ],
    ['token-mean', ['loss_agg_mode=token-mean'], {}],
    ['no credit for thinking', ['think_credit=false'], {}],
    [
      'KL loss on the thinking, entropy on the answer',
      ['use_kl_loss=true', 'kl_loss_coef=0.1', 'kl_loss_tokens=think', 'entropy_loss_coef=0.01', 'entropy_loss_tokens=answer'],
      {},
    ],
    ['KL loss outside the answer', ['use_kl_loss=true', 'kl_loss_coef=0.1', 'kl_loss_tokens=outside_answer'], {}],
    ['entropy outside the thinking', ['entropy_loss_coef=0.01', 'entropy_loss_tokens=outside_think'], {}],
    ['seq-mean-token-sum', ['loss_agg_mode=seq-mean-token-sum'], {}],
    [
      'seq-mean-token-sum-norm, cosine schedule',
      ['loss_agg_mode=seq-mean-token-sum-norm', 'actor_train.training_args.lr_scheduler_type=cosine', 'actor_train.training_args.warmup_steps=1'],
      {},
    ],
  ];
  for (const [name, overrides, options] of cases) {
    test(name, async () => {
      const summary = await train(overrides, options);
      expectHealthy(summary.reports);
      const last = summary.reports.at(-1)!.metrics;
      expect(last['actor/optimizer_steps']).toBeGreaterThan(0);
      expect(Math.abs(last['actor/pg_loss']!) + last['actor/grad_norm']!).toBeGreaterThan(0);
    });
  }

  test('the metrics carry ROLL and verl names', async () => {
    const summary = await train(['adv_estimator=gae', 'use_kl_loss=true', 'kl_loss_coef=0.1', 'eval_steps=1']);
    const first = summary.reports[0]!.metrics;
    for (const key of [
      'actor/pg_loss',
      'actor/kl_loss',
      'actor/entropy',
      'actor/clipfrac',
      'actor/approxkl',
      'actor/ratio_mean',
      'actor/grad_norm',
      'actor/lr',
      'critic/vf_loss',
      'critic/score/mean',
      'critic/advantages/mean',
      'critic/returns/mean',
      'critic/values/mean',
      'critic/kl',
      'critic/kl_coef',
      'tokens/response_length/mean',
      'time/step_total',
      'time/step_ref',
      'time/step_old_logp',
      'time/step_values',
      'time/step_actor_train',
      'time/step_critic_train',
      'system/tps',
      'env/Vowels/success',
      'val/env/Vowels/success',
      'time/step_val',
    ]) {
      expect(first).toHaveProperty([key]);
    }
    // the last report is the validation after the last step
    expect(summary.reports.at(-1)!.step).toBe(2);
    expect(summary.reports.at(-1)!.metrics['val/score/mean']).toBeDefined();
  });

  test('GiGPO groups anchor states within each group', async () => {
    const summary = await train(['adv_estimator=gigpo'], { rounds: 2, kind: 'step' });
    const m = summary.reports[0]!.metrics;
    // 2 groups x 4 envs x 2 rounds: each round's observation is shared by the 4 envs of a group
    expect(m['system/samples']).toBe(16);
    expect(m['system/state_batch_size/mean']).toBe(4);
    expect(m['critic/step_rewards_norm/mean']).toBeDefined();
  });

  test('gigpo on trajectory rows is a config error that names the key', async () => {
    await expect(configOf(vowelsYaml(folder), host, ['adv_estimator=gigpo'])).rejects.toThrow(
      'adv_estimator: gigpo needs one row per step, but custom_envs.Vowels.env_manager_cls is traj; set it to step',
    );
  });
});

describe('the roles', () => {
  test("old log-probs are actor_train's: equal to the sampling ones on-policy, and the ratio moves once weights do", async () => {
    const onePass = await train(['actor_train.training_args.per_device_train_batch_size=8']);
    const first = onePass.reports[0]!.metrics;
    // the tokens are scored where they were sampled (no shift error), by the same weights
    expect(first['actor/train_infer_logprob_gap']!).toBeLessThan(1e-4);
    // one mini-batch, one epoch: the ratio is exactly 1 and nothing is clipped
    expect(Math.abs(first['actor/ratio_max']! - 1)).toBeLessThan(1e-4);
    expect(Math.abs(first['actor/ratio_min']! - 1)).toBeLessThan(1e-4);
    const twoEpochs = await train(['actor_train.training_args.per_device_train_batch_size=8', 'ppo_epochs=2', 'pg_clip=0.01']);
    const second = twoEpochs.reports[0]!.metrics;
    expect(second['actor/ratio_max']! - second['actor/ratio_min']!).toBeGreaterThan(1e-3);
    expect(second['actor/clipfrac']!).toBeGreaterThan(0);
  });

  test('without the recompute the sampling log-probs stand in: the same losses up to rounding, one forward pass fewer', async () => {
    const args = ['actor_train.training_args.per_device_train_batch_size=8', 'ppo_epochs=2', 'pg_clip=0.01'];
    const recomputed = (await train(args)).reports[0]!.metrics;
    const sampled = (await train([...args, 'enable_old_logprobs_recompute=false'])).reports[0]!.metrics;
    expect(sampled['time/step_old_logp']).toBeUndefined();
    expect(recomputed['time/step_old_logp']).toBeDefined();
    // the gap is still reported, from the update's forward pass before its first optimizer step;
    // with a recompute that pass matches the recomputed log-probs exactly
    expect(sampled['actor/train_infer_logprob_gap']).toBe(sampled['actor/logprob_gap_before_update']!);
    expect(sampled['actor/train_infer_logprob_gap']!).toBeLessThan(1e-4);
    expect(Math.abs(sampled['actor/train_infer_logprob_gap']! - recomputed['actor/train_infer_logprob_gap']!)).toBeLessThan(1e-5);
    expect(recomputed['actor/logprob_gap_before_update']).toBe(0);
    for (const key of ['actor/pg_loss', 'actor/ratio_max', 'actor/ratio_min', 'actor/clipfrac', 'critic/score/mean']) {
      expect(Math.abs(sampled[key]! - recomputed[key]!)).toBeLessThan(1e-3);
    }
    // the ratio is still real: the second epoch moves it
    expect(sampled['actor/ratio_max']! - sampled['actor/ratio_min']!).toBeGreaterThan(1e-3);
  });

  test('actor_infer takes the weights every model_update_frequency steps', async () => {
    const summary = await train(['max_steps=3', 'actor_infer.model_update_frequency=2']);
    const gap = summary.reports.map((r) => r.metrics['actor/train_infer_logprob_gap']!);
    expect(gap[0]).toBeLessThan(1e-4); // synced at step 0
    expect(gap[1]).toBeGreaterThan(1e-3); // step 1 samples with step 0's weights
    expect(gap[2]).toBeLessThan(1e-4); // synced again at step 2
    expect(summary.reports[2]!.metrics['time/step_model_update']).toBeDefined();
  });

  test('critic_warmup trains only the critic first', async () => {
    const summary = await train(['adv_estimator=gae', 'critic_warmup=1']);
    expect(summary.reports[0]!.metrics['critic/vf_loss']).toBeDefined();
    expect(summary.reports[0]!.metrics['actor/pg_loss']).toBeUndefined();
    expect(summary.reports[1]!.metrics['actor/pg_loss']).toBeDefined();
  });

  test('the reference exists only when a KL term uses it, the critic only for gae', async () => {
    const config = await configOf(vowelsYaml(folder), host, ['use_kl_loss=true']); // kl_loss_coef 0: no KL term
    const trainer = await Trainer.create(config, host, openRollouts);
    expect(trainer.roles.reference).toBeNull();
    expect(trainer.roles.critic).toBeNull();
    expect(trainer.roles.infer).toBe(trainer.roles.actor);
    await trainer.close();
  });
});

describe('a non-finite update', () => {
  test('is skipped, counted and warned about; the weights stay and the run goes on', async () => {
    const config = await configOf(vowelsYaml(folder), host, ['max_steps=3', 'actor_train.training_args.per_device_train_batch_size=8']);
    const warnings: string[] = [];
    const trainer = await Trainer.create(config, host, openRollouts, {
      warn: (line) => warnings.push(line),
      poison: (step, role) => step === 1 && role === 'actor',
    });
    const weights = async () => Promise.all(trainer.roles.actor.variables.map(async (v) => Array.from(await v.data())));
    try {
      await trainer.step(0);
      const before = await weights();
      const poisoned = await trainer.step(1);
      expect(await weights()).toEqual(before);
      expect(poisoned.metrics['actor/skipped_steps']).toBe(1);
      expect(poisoned.metrics['system/skipped_updates']).toBe(1);
      expect(warnings).toEqual(['step 2: skipped 1 actor update whose loss or gradients were not finite (weights unchanged; 1 so far)']);
      const next = await trainer.step(2);
      expect(next.metrics['actor/skipped_steps']).toBe(0);
      expect(Number.isFinite(next.metrics['actor/pg_loss']!)).toBe(true);
      expect(await weights()).not.toEqual(before);
    } finally {
      await trainer.close();
    }
  });
});

describe('updates skipped in a row', () => {
  test('stop the run with one line once max_skipped_updates_in_a_row is reached; an applied update starts the count again', async () => {
    const config = await configOf(vowelsYaml(folder), host, [
      'max_steps=6',
      'ppo_epochs=1',
      'actor_train.training_args.per_device_train_batch_size=4',
      'max_skipped_updates_in_a_row=3',
    ]);
    const before = tf.memory().numTensors;
    const warnings: string[] = [];
    // two actor updates a step: step 1 skips its first only, steps 2 and 3 skip both
    const poison = (step: number, role: string, update: number) => role === 'actor' && ((step === 1 && update === 0) || step >= 2);
    const trainer = await Trainer.create(config, host, openRollouts, { warn: (line) => warnings.push(line), poison });
    try {
      const stopped = await trainer.run().then(
        () => null,
        (error: unknown) => error,
      );
      expect(stopped).toBeInstanceOf(TrainingError);
      expect((stopped as Error).message).toBe(
        'step 4: the last 4 actor updates in a row were skipped (loss or gradients not finite): the policy has diverged; resume from an earlier checkpoint with a lower learning rate or max_grad_norm (max_skipped_updates_in_a_row=3 stopped it)',
      );
      expect(warnings.filter((line) => line.includes('skipped'))).toHaveLength(3);
    } finally {
      await trainer.close();
    }
    expect(tf.memory().numTensors).toBe(before);
  });

  test('a checkpoint keeps the count: resumed after 2 skipped updates, the next 2 stop the run', async () => {
    const overrides = ['max_steps=4', 'ppo_epochs=1', 'actor_train.training_args.per_device_train_batch_size=4', 'max_skipped_updates_in_a_row=3'];
    const config = await configOf(vowelsYaml(folder), host, overrides);
    const root = mkdtempSync(join(tmpdir(), 'agentic-skipped-'));
    // two actor updates a step, both skipped from step 1 on
    const poison = (step: number, role: string) => role === 'actor' && step >= 1;
    try {
      const first = await Trainer.create(config, host, openRollouts, { poison });
      let path = '';
      try {
        await first.step(0);
        await first.step(1);
        path = await saveCheckpoint(root, { trainer: first, config, history: [], resumedFrom: null });
      } finally {
        await first.close();
      }
      expect(JSON.parse(readFileSync(join(path, 'trainer_state.json'), 'utf8')).skipped_updates_in_a_row).toEqual({ actor: 2 });
      const resumed = await Trainer.create(config, host, openRollouts, { poison });
      try {
        restoreTrainer(resumed, openCheckpoint(path));
        const stopped = await resumed.step(2).then(
          () => null,
          (error: unknown) => error,
        );
        expect(stopped).toBeInstanceOf(TrainingError);
        expect((stopped as Error).message).toStartWith('step 3: the last 4 actor updates in a row were skipped');
      } finally {
        await resumed.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('0 never stops', async () => {
    const config = await configOf(vowelsYaml(folder), host, [
      'max_steps=2',
      'actor_train.training_args.per_device_train_batch_size=4',
      'max_skipped_updates_in_a_row=0',
    ]);
    const trainer = await Trainer.create(config, host, openRollouts, { poison: (_step, role) => role === 'actor' });
    try {
      const summary = await trainer.run();
      expect(summary.skippedUpdates).toBe(4);
    } finally {
      await trainer.close();
    }
  });
});

describe('skip_zero_advantage_samples', () => {
  test('with every sample informative, the update is the one without it', async () => {
    // with a KL loss: the reference then scores the kept samples after the advantages, here all of them
    const kl = ['use_kl_loss=true', 'kl_loss_coef=0.1'];
    const plain = await train(kl);
    const skipping = await train([...kl, 'skip_zero_advantage_samples=true']);
    for (const [a, b] of plain.reports.map((r, i) => [r.metrics, skipping.reports[i]!.metrics] as const)) {
      expect(b['actor/update_samples']).toBe(b['system/samples']!); // the premise: no group scored alike
      for (const key of ['actor/pg_loss', 'actor/kl_loss', 'critic/kl', 'actor/grad_norm', 'actor/entropy', 'actor/optimizer_steps'])
        expect(b[key]).toBe(a[key]!);
    }
    expect(skipping.reports[1]!.metrics['critic/kl']).not.toBe(0); // the reference did score them
    expect(plain.reports[0]!.metrics['actor/update_samples']).toBeUndefined();
  });

  test('a batch with no advantage anywhere leaves the actor as it was', async () => {
    // groups of one: every sample is its own group's mean, so every advantage is 0
    const config = await configOf(vowelsYaml(folder, { groups: 4, size: 1 }), host, [
      'skip_zero_advantage_samples=true',
      'use_kl_loss=true',
      'kl_loss_coef=0.1',
    ]);
    const before = tf.memory().numTensors;
    const trainer = await Trainer.create(config, host, openRollouts);
    const weights = async () => Promise.all(trainer.roles.actor.variables.map(async (v) => Array.from(await v.data())));
    try {
      const start = await weights();
      const report = await trainer.step(0);
      expect(report.metrics['critic/zero_advantage_frac']).toBe(1);
      expect(report.metrics['actor/update_samples']).toBe(0);
      expect(report.metrics['actor/pg_loss']).toBeUndefined();
      expect(await weights()).toEqual(start);
    } finally {
      await trainer.close();
    }
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('determinism', () => {
  const comparable = (reports: readonly StepReport[]) =>
    reports.map((r) => Object.fromEntries(Object.entries(r.metrics).filter(([k]) => !/^time\/|tokens_per_second|system\/tps/.test(k))));

  test('the same seed gives the same run', async () => {
    const a = await train(['adv_estimator=gae', 'ppo_epochs=2']);
    const b = await train(['adv_estimator=gae', 'ppo_epochs=2']);
    expect(comparable(b.reports)).toEqual(comparable(a.reports));
    const c = await train(['adv_estimator=gae', 'ppo_epochs=2', 'seed=6']);
    expect(comparable(c.reports)).not.toEqual(comparable(a.reports));
  });
});
