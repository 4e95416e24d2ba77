/** ROLL's reward normalisation, reward clip and discounted step returns. */
import { describe, expect, test } from 'bun:test';
import { clipValues, discountedStepReturns, normalizeRewards } from '../../src/algo/reward_norm';
import { expectClose } from './close';
import { std } from '../../src/algo/stats';

const byGroup = { method: 'mean_std', batchStatistics: false } as const;

describe('normalizeRewards', () => {
  test('identity copies', () => {
    const values = [3, -1];
    const out = normalizeRewards(values, ['a', 'b'], { method: 'identity', batchStatistics: false });
    expect(out).toEqual([3, -1]);
    expect(out).not.toBe(values);
  });

  test('mean_std divides by unbiased std + 1e-6, per group', () => {
    // keys interleaved: g = [1, 2, 3], h = [10, 14], s = [7]
    // g: mean 2, std sqrt((1 + 0 + 1) / 2) = 1       -> (x - 2) / (1 + 1e-6)
    // h: mean 12, std sqrt((4 + 4) / 1) = 2 sqrt(2)   -> (x - 12) / (2 sqrt(2) + 1e-6)
    // s: a group of one -> 0
    const out = normalizeRewards([1, 10, 2, 7, 14, 3], ['g', 'h', 'g', 's', 'h', 'g'], byGroup);
    expectClose(out, [-1 / (1 + 1e-6), -2 / (2 * Math.SQRT2 + 1e-6), 0, 0, 2 / (2 * Math.SQRT2 + 1e-6), 1 / (1 + 1e-6)], 10);
    // 1e-6 is added to the std, not to the variance: 1 / sqrt(1 + 1e-6) = 0.9999995
    expect(out[5]).not.toBeCloseTo(1 / Math.sqrt(1 + 1e-6), 10);
  });

  test('mean gives exactly 0 to a group that all scored alike', () => {
    // 8 x -0.1 summed and divided back is -0.1 + 1.4e-17: a group of format penalties must carry no advantage
    for (const value of [-0.1, 0.1, 0.3, -0.7]) {
      expect(normalizeRewards(Array(8).fill(value), Array(8).fill('g'), { method: 'mean', batchStatistics: false })).toEqual(Array(8).fill(0));
    }
  });

  test('mean_std gives 0 when the std is at most 1e-6', () => {
    expect(normalizeRewards([4, 4], ['g', 'g'], byGroup)).toEqual([0, 0]);
    // [0, 1e-6]: std = 1e-6 / sqrt(2) <= 1e-6
    expect(normalizeRewards([0, 1e-6], ['g', 'g'], byGroup)).toEqual([0, 0]);
    // [0, 2e-6]: std = sqrt(2) 1e-6 > 1e-6 -> (-/+1e-6) / (sqrt(2) 1e-6 + 1e-6) = -/+1 / (sqrt(2) + 1)
    expectClose(normalizeRewards([0, 2e-6], ['g', 'g'], byGroup), [-1 / (Math.SQRT2 + 1), 1 / (Math.SQRT2 + 1)], 8);
  });

  test('mean shifts by the group mean only', () => {
    // g = [1, 3] -> mean 2; s = [7] -> 7 - 7
    const out = normalizeRewards([1, 3, 7], ['g', 'g', 's'], { method: 'mean', batchStatistics: false });
    expect(out).toEqual([-1, 1, 0]);
  });

  test('asym_clip scales like mean_std and no longer clips to [-1, 3]', () => {
    // sixteen 0s and one 1: mean 1/17, var = (16 (1/17)^2 + (16/17)^2) / 16 = 1/17
    const values = [...new Array<number>(16).fill(0), 1];
    const keys = values.map(() => 'g');
    const out = normalizeRewards(values, keys, { method: 'asym_clip', batchStatistics: false });
    const s = 1 / Math.sqrt(17) + 1e-6;
    expect(out[16]).toBeCloseTo(16 / 17 / s, 10); // about 3.88
    expect(out[0]).toBeCloseTo(-1 / 17 / s, 10);
    expect(out).toEqual(normalizeRewards(values, keys, byGroup));
  });

  test('batch statistics use the mean and std of all values', () => {
    // [1, 2, 3, 6]: mean 3, std sqrt(14 / 3)
    const keys = ['', '', '', ''];
    const s = Math.sqrt(14 / 3) + 1e-6;
    expectClose(normalizeRewards([1, 2, 3, 6], keys, { method: 'mean_std', batchStatistics: true }), [-2 / s, -1 / s, 0, 3 / s], 10);
    expect(normalizeRewards([1, 2, 3, 6], keys, { method: 'mean', batchStatistics: true })).toEqual([-2, -1, 0, 3]);
  });

  test('a batch of one normalises to 0', () => {
    expect(normalizeRewards([5], [''], { method: 'mean_std', batchStatistics: true })).toEqual([0]);
  });

  test('with batch statistics a group of one still gives 0', () => {
    // batch [1, 2, 3]: mean 2, std 1; group a = rows 0, 1; group b = row 2 alone
    const out = normalizeRewards([1, 2, 3], ['a', 'a', 'b'], { method: 'mean_std', batchStatistics: true });
    expectClose(out, [-1 / (1 + 1e-6), 0, 0], 10);
  });
});

describe('clipValues', () => {
  test('clamps to ±clip and counts strictly larger values', () => {
    // |-3| and |2| exceed 1; |-1| = 1 does not
    expect(clipValues([-3, 0.5, 2, -1], 1)).toEqual({ values: [-1, 0.5, 1, -1], clippedFraction: 0.5 });
  });

  test('null clip copies', () => {
    expect(clipValues([-3, 9], null)).toEqual({ values: [-3, 9], clippedFraction: 0 });
    expect(clipValues([], 1)).toEqual({ values: [], clippedFraction: 0 });
  });
});

describe('discountedStepReturns', () => {
  test('G_t = r_t + gamma G_{t+1} per trajectory, ordered by step', () => {
    // trajectory a, steps 0, 1, 2, rewards 0, 0, 1, gamma 0.5: G = 0.25, 0.5, 1
    // trajectory b, steps 0, 1, rewards -1, 2:                  G = -1 + 0.5 * 2 = 0, 2
    const rewards = [1, 2, 0, -1, 0];
    const trajs = ['a', 'b', 'a', 'b', 'a'];
    const steps = [2, 1, 0, 0, 1];
    expect(discountedStepReturns(rewards, trajs, steps, 0.5)).toEqual([1, 2, 0.25, 0, 0.5]);
  });

  test('gamma 1 sums the rest of the trajectory', () => {
    expect(discountedStepReturns([1, 2, 3], ['a', 'a', 'a'], [0, 1, 2], 1)).toEqual([6, 5, 3]);
  });
});

describe("ROLL's norm_mean_type / norm_std_type", () => {
  test('the group mean over the batch std, whatever the method', () => {
    const values = [1, 3, 10, 14];
    const keys = ['a', 'a', 'b', 'b'];
    const s = std(values) + 1e-6;
    const out = normalizeRewards(values, keys, { method: 'identity', batchStatistics: false, statistics: { mean: 'group', std: 'batch' } });
    expectClose(out, [-1 / s, 1 / s, -2 / s, 2 / s], 10);
    expect(normalizeRewards(values, keys, { method: 'mean_std', batchStatistics: false, statistics: { mean: 'batch', std: null } })).toEqual(
      values.map((v) => v - 7),
    );
  });
});
