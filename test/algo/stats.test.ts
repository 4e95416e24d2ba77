/** Masked statistics over response tokens, and plain statistics over per-row values. */
import { describe, expect, test } from 'bun:test';
import { applyMask, groupIndices, lastMasked, maskedCount, maskedMean, maskedVariance, maskedWhiten, mean, std, summaryStats } from '../../src/algo/stats';
import { expectClose, f32, u8 } from './close';

// masked entries: 1, 3 (row 0) and 20 (row 1)
const rows = [f32(1, 2, 3, 4), f32(10, 20)];
const masks = [u8(1, 0, 1, 0), u8(0, 1)];

describe('masked statistics', () => {
  test('mean and count see only masked entries', () => {
    expect(maskedCount(masks)).toBe(3);
    expect(maskedMean(rows, masks)).toBe(8); // (1 + 3 + 20) / 3
  });

  test('mean of nothing is 0', () => {
    expect(maskedMean(rows, [u8(0, 0, 0, 0), u8(0, 0)])).toBe(0);
  });

  test('variance is unbiased (n - 1)', () => {
    // ((1-8)^2 + (3-8)^2 + (20-8)^2) / (3 - 1) = (49 + 25 + 144) / 2
    expect(maskedVariance(rows, masks)).toBe(109);
  });

  test('variance of fewer than two values throws', () => {
    expect(() => maskedVariance(rows, [u8(0, 0, 1, 0), u8(0, 0)])).toThrow();
  });

  test('whiten uses batch mean and rsqrt(var + 1e-8), over every entry', () => {
    const out = maskedWhiten(rows, masks);
    const s = Math.sqrt(109 + 1e-8);
    // unmasked entries (2, 4, 10) are shifted and scaled with the same statistics
    expectClose(out[0]!, [(1 - 8) / s, (2 - 8) / s, (3 - 8) / s, (4 - 8) / s]);
    expectClose(out[1]!, [(10 - 8) / s, (20 - 8) / s]);
    expectClose(rows[0]!, [1, 2, 3, 4]); // inputs untouched
  });

  test('whiten adds 1e-8 to the variance, not to the std', () => {
    // values 0 and 2e-4: mean 1e-4, var = 2 * (1e-4)^2 / 1 = 2e-8
    // (2e-4 - 1e-4) / sqrt(2e-8 + 1e-8) = 1e-4 / (sqrt(3) * 1e-4) = 1 / sqrt(3)
    const out = maskedWhiten([f32(0, 2e-4)], [u8(1, 1)]);
    expectClose(out[0]!, [-1 / Math.sqrt(3), 1 / Math.sqrt(3)], 4);
  });

  test('applyMask zeroes unmasked entries in place', () => {
    const row = f32(1, 2, 3);
    const out = applyMask([row], [u8(1, 0, 1)]);
    expect(out[0]).toBe(row);
    expectClose(row, [1, 0, 3]);
  });

  test('lastMasked is the last sampled position', () => {
    expect(lastMasked(u8(1, 1, 0, 1, 0, 0))).toBe(3);
    expect(lastMasked(u8(0, 0))).toBe(-1);
  });
});

describe('plain statistics', () => {
  test('mean', () => {
    expect(mean([1, 2, 3, 6])).toBe(3);
    expect(mean([])).toBe(0);
  });

  test('std is unbiased', () => {
    // mean 3; squares 4 + 1 + 0 + 9 = 14; 14 / (4 - 1)
    expect(std([1, 2, 3, 6])).toBeCloseTo(Math.sqrt(14 / 3), 12);
    expect(std([1, 3])).toBeCloseTo(Math.SQRT2, 12); // population std would be 1
  });

  test('std of fewer than two values is NaN', () => {
    expect(std([5])).toBeNaN();
    expect(std([])).toBeNaN();
  });

  test('groups keep first-seen order', () => {
    const groups = groupIndices(['b', 'a', 'b', 'c', 'a']);
    expect([...groups.entries()]).toEqual([
      ['b', [0, 2]],
      ['a', [1, 4]],
      ['c', [3]],
    ]);
  });

  test('summary stats', () => {
    expect(summaryStats('x', [2, -1, 5])).toEqual({ 'x/mean': 2, 'x/max': 5, 'x/min': -1 });
    expect(summaryStats('x', [])).toEqual({});
  });
});
