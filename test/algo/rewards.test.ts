/** From episode outcomes to response rewards (per estimator) and to token rewards. */
import { describe, expect, test } from 'bun:test';
import { type ResponseRewardOptions, responseRewards } from '../../src/algo/estimators';
import { type RewardRow, tokenRewards, type TokenRewardOptions } from '../../src/algo/rewards';
import { expectClose, f32, u8 } from './close';

/** A trajectory row (step null) unless `step` is given. */
const row = (r: Partial<RewardRow>): RewardRow => ({
  trajGroupId: 'g',
  trajId: 't',
  tag: 'env',
  groupId: 0,
  step: null,
  score: 0,
  episodeScore: 0,
  stateHash: null,
  ...r,
});

const grpo: ResponseRewardOptions = {
  estimator: 'grpo',
  grouping: 'traj_group_id',
  method: 'mean_std',
  stepRewardGamma: 0.95,
  episodeRewardWeight: 1,
  stepRewardWeight: 1,
  rewardClip: null,
};

describe('responseRewards', () => {
  test('grpo: scores normalised within their trajectory group', () => {
    // g = [1, 2, 3]: mean 2, std 1 -> (x - 2) / (1 + 1e-6); h = [5] alone -> 0
    const rows = [row({ score: 1 }), row({ score: 5, trajGroupId: 'h' }), row({ score: 2 }), row({ score: 3 })];
    const { rewards, metrics } = responseRewards(rows, grpo);
    expectClose(rewards, [-1 / (1 + 1e-6), 0, 0, 1 / (1 + 1e-6)], 10);
    expect(metrics).toEqual({});
  });

  test('batch grouping uses the batch mean', () => {
    // [1, 2, 3, 6] in different trajectory groups: mean 3
    const rows = [1, 2, 3, 6].map((score, i) => row({ score, trajGroupId: `g${i}` }));
    const { rewards } = responseRewards(rows, { ...grpo, estimator: 'reinforce', grouping: 'batch', method: 'mean' });
    expect(rewards).toEqual([-2, -1, 0, 3]);
  });

  test('tags and group_ids groupings', () => {
    // scores 1 (a/0), 4 (a/1), 10 (b/0), 5 (a/0); method mean
    const rows = [
      row({ tag: 'a', groupId: 0, score: 1 }),
      row({ tag: 'a', groupId: 1, score: 4 }),
      row({ tag: 'b', groupId: 0, score: 10 }),
      row({ tag: 'a', groupId: 0, score: 5 }),
    ];
    // tags: a = [1, 4, 5], mean 10 / 3; b alone
    expectClose(responseRewards(rows, { ...grpo, grouping: 'tags', method: 'mean' }).rewards, [1 - 10 / 3, 4 - 10 / 3, 0, 5 - 10 / 3], 10);
    // group_ids: a/0 = [1, 5], mean 3; a/1 and b/0 alone
    expect(responseRewards(rows, { ...grpo, grouping: 'group_ids', method: 'mean' }).rewards).toEqual([-2, 0, 0, 2]);
  });

  test('step rows carry their episode score', () => {
    // episode scores 1 and 3 (step rewards 9 and 7 are ignored): mean 2 -> -1, 1
    const rows = [row({ step: 0, score: 9, episodeScore: 1 }), row({ step: 0, score: 7, episodeScore: 3 })];
    expect(responseRewards(rows, { ...grpo, method: 'mean' }).rewards).toEqual([-1, 1]);
  });

  test('rloo, reinforce_plus_plus and remax take raw scores', () => {
    const rows = [row({ score: 1 }), row({ score: 4 })];
    for (const estimator of ['rloo', 'reinforce_plus_plus', 'remax'] as const) {
      expect(responseRewards(rows, { ...grpo, estimator }).rewards).toEqual([1, 4]);
    }
  });

  test('reward clip, and its fraction as a metric', () => {
    // identity keeps the scores; |-3| and |2| exceed 1
    const rows = [row({ score: -3 }), row({ score: 0.5 }), row({ score: 2 }), row({ score: -1 })];
    const { rewards, metrics } = responseRewards(rows, { ...grpo, method: 'identity', rewardClip: 1 });
    expect(rewards).toEqual([-1, 0.5, 1, -1]);
    expect(metrics).toEqual({ 'critic/reward_clip_frac': 0.5 });
  });

  test('step_reinforce: discounted step returns, normalised', () => {
    // gamma 0.5; trajectory a: rewards 0, 1 -> G = 0.5, 1; trajectory b: rewards 1, -1 -> G = 1 - 0.5 = 0.5, -1
    // group g = [0.5, 1, 0.5, -1], mean 0.25
    const rows = [
      row({ trajId: 'a', step: 1, score: 1 }),
      row({ trajId: 'b', step: 0, score: 1 }),
      row({ trajId: 'a', step: 0, score: 0 }),
      row({ trajId: 'b', step: 1, score: -1 }),
    ];
    const { rewards } = responseRewards(rows, { ...grpo, estimator: 'step_reinforce', method: 'mean', stepRewardGamma: 0.5 });
    expectClose(rewards, [0.75, 0.25, 0.25, -1.25], 10);
  });
});

describe('responseRewards for gigpo', () => {
  // group g: trajectory A (episode 1) visits s0, s1 with step rewards 0, 1
  //          trajectory B (episode 0) visits s0, s2, s1 with step rewards 0, 0, 0
  // group h: trajectory C (episode 1) visits s0 with step reward 1 (same hash as g's s0)
  const rows = [
    row({ trajId: 'A', step: 0, stateHash: 's0', score: 0, episodeScore: 1 }),
    row({ trajId: 'B', step: 0, stateHash: 's0', score: 0, episodeScore: 0 }),
    row({ trajId: 'C', step: 0, stateHash: 's0', score: 1, episodeScore: 1, trajGroupId: 'h' }),
    row({ trajId: 'A', step: 1, stateHash: 's1', score: 1, episodeScore: 1 }),
    row({ trajId: 'B', step: 1, stateHash: 's2', score: 0, episodeScore: 0 }),
    row({ trajId: 'B', step: 2, stateHash: 's1', score: 0, episodeScore: 0 }),
  ];
  const gigpo: ResponseRewardOptions = { ...grpo, estimator: 'gigpo', method: 'mean', stepRewardGamma: 0.5, stepRewardWeight: 0.5 };

  test('episode part + weight x step part over anchor states (mean_norm)', () => {
    // step returns (gamma 0.5): A0 = 0 + 0.5 * 1 = 0.5, A1 = 1, B = 0, 0, 0, C0 = 1
    // episode part over g's step rows [1, 1, 0, 0, 0] (mean 0.4): A 0.6, B -0.4; h [1] alone: 0
    // anchors (g,s0) = {A0 0.5, B0 0}: +-0.25; (g,s1) = {A1 1, B2 0}: +-0.5; (g,s2), (h,s0) alone: 0
    const { rewards } = responseRewards(rows, gigpo);
    expectClose(rewards, [
      0.6 + 0.5 * 0.25, //  A0
      -0.4 - 0.5 * 0.25, // B0
      0, //                 C0: not grouped with g's s0
      0.6 + 0.5 * 0.5, //   A1
      -0.4, //              B1
      -0.4 - 0.5 * 0.5, //  B2
    ]);
  });

  test('metrics of the parts and of the anchor groups', () => {
    const { metrics } = responseRewards(rows, gigpo);
    // episode parts 0.6, -0.4, 0, 0.6, -0.4, -0.4; step parts 0.25, -0.25, 0, 0.5, 0, -0.5
    // anchor group sizes 2 (g,s0), 1 (h,s0), 2 (g,s1), 1 (g,s2)
    expect(metrics).toEqual({
      'critic/episode_rewards_norm/mean': expect.closeTo(0, 10),
      'critic/episode_rewards_norm/max': expect.closeTo(0.6, 10),
      'critic/episode_rewards_norm/min': expect.closeTo(-0.4, 10),
      'critic/step_rewards_norm/mean': expect.closeTo(0, 10),
      'critic/step_rewards_norm/max': 0.5,
      'critic/step_rewards_norm/min': -0.5,
      'system/state_batch_size/mean': 1.5,
      'system/state_batch_size/max': 2,
      'system/state_batch_size/min': 1,
    });
  });

  test('mean_std: a lone anchor gives step part 0, a pair +-0.25 / (std + 1e-6)', () => {
    // step part only: (g,s0) = {0.5, 0}: std = sqrt(2 * 0.25^2 / 1) = sqrt(0.125)
    const { rewards } = responseRewards(rows, { ...gigpo, method: 'mean_std', episodeRewardWeight: 0, stepRewardWeight: 1 });
    const s0 = 0.25 / (Math.sqrt(0.125) + 1e-6);
    const s1 = 0.5 / (Math.sqrt(0.5) + 1e-6); // {1, 0}: std sqrt(2 * 0.5^2) = sqrt(0.5)
    expectClose(rewards, [s0, -s0, 0, s1, 0, -s1], 8);
  });
});

describe('tokenRewards', () => {
  // row 0: turn (0-1), observation (2), turn (3), padding (4); row 1: turn (0-1), padding; row 2: no sampled token
  const masks = [u8(1, 1, 0, 1, 0), u8(1, 1, 0, 0, 0), u8(0, 0, 0, 0, 0)];
  const old = [f32(-1, -1, -1, -1, -1), f32(-1, -1, -1, -1, -1), f32(-1, -1, -1, -1, -1)];
  // d = old - ref: row 0 -> 0.2, -0.1, (observation: 5, ignored), 0.3; row 1 -> 0.4, 0
  const ref = [f32(-1.2, -0.9, -6, -1.3, -1), f32(-1.4, -1, -1, -1, -1), f32(-1, -1, -1, -1, -1)];
  const plain: TokenRewardOptions = { addTokenLevelKl: false, klCoef: 0.1, klPenalty: 'kl', whitenRewards: false };

  test('the reward sits on the last sampled token', () => {
    const { tokenRewards: out, kl, meanKl } = tokenRewards([1, -0.5, 9], masks, old, null, plain);
    expectClose(out[0]!, [0, 0, 0, 1, 0]);
    expectClose(out[1]!, [0, -0.5, 0, 0, 0]);
    expectClose(out[2]!, [0, 0, 0, 0, 0]);
    expectClose(kl[0]!, [0, 0, 0, 0, 0]); // no reference
    expect(meanKl).toBe(0);
  });

  test('KL on sampled tokens; the mean of the row means over the rows with a sampled token, which the controller counts', () => {
    const { tokenRewards: out, kl, meanKl, klRows } = tokenRewards([1, -0.5, 9], masks, old, ref, plain);
    expectClose(kl[0]!, [0.2, -0.1, 0, 0.3, 0]);
    expectClose(kl[1]!, [0.4, 0, 0, 0, 0]);
    expectClose(out[0]!, [0, 0, 0, 1, 0]); // not subtracted without add_token_level_kl
    // row means (0.2 - 0.1 + 0.3) / 3 and 0.4 / 2; the row without tokens has no KL, not a KL of 0
    expect(meanKl).toBeCloseTo((0.4 / 3 + 0.2) / 2, 6);
    expect(klRows).toBe(2);
  });

  test('add_token_level_kl subtracts beta x KL on every sampled token', () => {
    const { tokenRewards: out } = tokenRewards([1, -0.5, 9], masks, old, ref, { ...plain, addTokenLevelKl: true });
    expectClose(out[0]!, [-0.1 * 0.2, -0.1 * -0.1, 0, 1 - 0.1 * 0.3, 0]);
    expectClose(out[1]!, [-0.1 * 0.4, -0.5 - 0.1 * 0, 0, 0, 0]);
  });

  test('the KL type is the one asked for', () => {
    // abs: |d|
    const { tokenRewards: out, kl } = tokenRewards([1, -0.5, 9], masks, old, ref, { ...plain, addTokenLevelKl: true, klPenalty: 'abs' });
    expectClose(kl[0]!, [0.2, 0.1, 0, 0.3, 0]);
    expectClose(out[0]!, [-0.02, -0.01, 0, 0.97, 0]);
  });

  test('whiten_rewards whitens over sampled tokens and masks', () => {
    // sampled rewards 0, 2 | 0, 0: mean 0.5, var (3 * 0.25 + 2.25) / 3 = 1
    const m = [u8(1, 1, 0), u8(1, 1, 0)];
    const lp = [f32(0, 0, 0), f32(0, 0, 0)];
    const { tokenRewards: out } = tokenRewards([2, 0], m, lp, null, { ...plain, whitenRewards: true });
    const s = Math.sqrt(1 + 1e-8);
    expectClose(out[0]!, [-0.5 / s, 1.5 / s, 0]);
    expectClose(out[1]!, [-0.5 / s, -0.5 / s, 0]);
  });

  test('whiten_rewards is skipped for a single sampled token', () => {
    const { tokenRewards: out } = tokenRewards([3], [u8(0, 1)], [f32(0, 0)], null, { ...plain, whitenRewards: true });
    expectClose(out[0]!, [0, 3]);
  });
});
