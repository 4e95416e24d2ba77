/**
 * The group filters in training runs of the micro policy on the binary vowels env, whose groups of
 * two often all score alike: with filter_groups (DAPO's dynamic sampling) such groups never reach
 * the update and the step still trains on num_env_groups groups, played over several rollouts;
 * with rollout_filter_ratio (RAGEN's variance filter) the step trains on the share of groups it
 * keeps. The pure selections are test/train/group_filters.test.ts's.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { tf } from '../../src/engine/tf';
import { openRollouts } from '../../src/rollout_sources/open';
import { Trainer } from '../../src/train/trainer';
import { configOf, hostWithVowels, microPolicyFolder, vowelsYaml } from './helpers';

setDefaultTimeout(60_000);

let folder = '';
const host = hostWithVowels();

beforeAll(async () => {
  folder = await microPolicyFolder();
});

const GROUPS = 4;
const SIZE = 2;

async function train(overrides: string[]) {
  const config = await configOf(vowelsYaml(folder, { groups: GROUPS, size: SIZE }), host, [
    'custom_envs.Vowels.env_config.binary=true',
    'max_steps=3',
    ...overrides,
  ]);
  const before = tf.memory().numTensors;
  const trainer = await Trainer.create(config, host, openRollouts, { warn: () => {} });
  try {
    return (await trainer.run()).reports;
  } finally {
    await trainer.close();
    expect(tf.memory().numTensors).toBe(before);
  }
}

describe('filter_groups', () => {
  test('groups that all scored alike never reach the update; the step fills up with groups of further rollouts', async () => {
    const reports = await train(['filter_groups.enable=true', 'filter_groups.max_num_gen_batches=0']);
    const metrics = reports.map((r) => r.metrics);
    for (const m of metrics) {
      expect(m['dynamic_sampling/kept_groups']).toBe(GROUPS);
      expect(m['system/samples']).toBe(GROUPS * SIZE);
      expect(m['critic/zero_advantage_frac']).toBe(0); // a constant group's advantages are exactly 0
      expect(m['train/num_gen_batches']).toBe(m['dynamic_sampling/gen_batches']!);
      const gens = m['dynamic_sampling/gen_batches']!;
      // each rollout plays GROUPS groups: the kept, the dropped and the surplus of the last
      expect(m['dynamic_sampling/dropped_groups']! + GROUPS).toBeLessThanOrEqual(gens * GROUPS);
      if (gens > 1) expect(m['dynamic_sampling/dropped_groups']).toBeGreaterThan(0);
      expect(m['rollout/score/mean']).toBe(0.5); // every kept group of two: one 0 and one 1
    }
    // the premise: some groups scored alike, and were replaced by groups of another rollout
    expect(metrics.some((m) => m['dynamic_sampling/gen_batches']! > 1)).toBe(true);
    expect(metrics.some((m) => m['dynamic_sampling/first/rollout/score/mean'] !== 0.5)).toBe(true);
  });

  test('a step the filter emptied is not a failed step: a policy whose groups all score alike keeps training', async () => {
    // greedy play: both episodes of a group play alike, so every group scores alike and the step keeps none
    const reports = await train([
      'filter_groups.enable=true',
      'filter_groups.max_num_gen_batches=1',
      'train_env_manager.generating_args.do_sample=false',
      'max_failed_steps_in_a_row=1',
    ]);
    expect(reports).toHaveLength(3);
    for (const r of reports) expect(r.metrics['dynamic_sampling/kept_groups']).toBe(0);
  });

  test('at max_num_gen_batches the step trains on what it kept', async () => {
    const reports = await train(['filter_groups.enable=true', 'filter_groups.max_num_gen_batches=1']);
    for (const { metrics: m } of reports) {
      expect(m['dynamic_sampling/gen_batches']).toBe(1);
      expect(m['dynamic_sampling/kept_groups']! + m['dynamic_sampling/dropped_groups']!).toBe(GROUPS);
      expect(m['system/samples']).toBe(m['dynamic_sampling/kept_groups']! * SIZE);
      if (m['system/samples']! > 0) expect(m['critic/zero_advantage_frac']).toBe(0);
    }
  });
});

describe('rollout_filter_ratio', () => {
  test('the step trains on ceil(ratio x groups) groups, those whose scores spread most', async () => {
    const reports = await train(['rollout_filter_ratio=0.5', 'rollout_filter_type=std']);
    for (const { metrics: m } of reports) {
      expect(m['rollout_filter/kept_groups']).toBe(GROUPS / 2);
      expect(m['system/samples']).toBe((GROUPS / 2) * SIZE);
      expect(m['rollout_filter/score_std_kept']).toBeGreaterThanOrEqual(m['rollout_filter/score_std_dropped']!);
    }
  });

  test('std_rev keeps the groups whose scores spread least', async () => {
    const reports = await train(['rollout_filter_ratio=0.25', 'rollout_filter_type=std_rev']);
    for (const { metrics: m } of reports) {
      expect(m['rollout_filter/kept_groups']).toBe(1);
      expect(m['rollout_filter/score_std_kept']).toBeLessThanOrEqual(m['rollout_filter/score_std_dropped']!);
    }
  });
});
