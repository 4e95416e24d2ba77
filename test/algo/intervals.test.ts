import { describe, expect, test } from 'bun:test';
import { bootstrapMeanInterval, wilsonInterval } from '../../src/algo/intervals';

// Wilson's bounds computed by hand from (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964
describe('wilsonInterval', () => {
  test('45 of 50', () => {
    const { low, high } = wilsonInterval(45, 50);
    expect(low).toBeCloseTo(0.786398, 5);
    expect(high).toBeCloseTo(0.956524, 5);
  });

  test('0 of 10 starts at 0, 10 of 10 ends at 1', () => {
    expect(wilsonInterval(0, 10).low).toBe(0);
    expect(wilsonInterval(0, 10).high).toBeCloseTo(0.277533, 5);
    expect(wilsonInterval(10, 10).low).toBeCloseTo(0.722467, 5);
    expect(wilsonInterval(10, 10).high).toBe(1);
  });

  test('impossible counts are refused', () => {
    expect(() => wilsonInterval(3, 2)).toThrow('0 <= successes <= n');
    expect(() => wilsonInterval(0, 0)).toThrow('n > 0');
  });
});

describe('bootstrapMeanInterval', () => {
  test('the same values and seed give the same interval; another seed another one', () => {
    const values = Array.from({ length: 50 }, (_, i) => (i * 37) % 11);
    expect(bootstrapMeanInterval(values, 7)).toEqual(bootstrapMeanInterval(values, 7));
    expect(bootstrapMeanInterval(values, 7)).not.toEqual(bootstrapMeanInterval(values, 8));
  });

  test('brackets the mean, and is one point for constant scores', () => {
    const values = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 1 : 0));
    const { low, high } = bootstrapMeanInterval(values, 1);
    expect(low).toBeLessThan(0.25);
    expect(high).toBeGreaterThan(0.25);
    // the normal approximation's half width for p=0.25, n=200 is 0.06; the bootstrap's is close
    expect(high - low).toBeGreaterThan(0.09);
    expect(high - low).toBeLessThan(0.15);
    expect(bootstrapMeanInterval([0.5, 0.5, 0.5], 1)).toEqual({ low: 0.5, high: 0.5 });
  });
});
