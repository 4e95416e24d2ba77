/** ROLL's train/infer importance weights: truncated ratios of old over behaviour log-probs. */
import { describe, expect, test } from 'bun:test';
import { importanceWeights } from '../../src/algo/off_policy';
import { expectClose } from './close';

const f32 = (values: number[]) => Float32Array.from(values);
const u8 = (values: number[]) => Uint8Array.from(values);

describe('importanceWeights', () => {
  // row 0: log-ratios 0 (prompt), 0.1, -0.5, 0.3 (the last off the mask); row 1: one token, ratio e^1
  const old = [f32([0, -1.0, -2.0, -0.2]), f32([0, -0.5])];
  const behaviour = [f32([0, -1.1, -1.5, -0.5]), f32([0, -1.5])];
  const masks = [u8([0, 1, 1, 0]), u8([0, 1])];

  test('token: each sampled token its own ratio, truncated at the upper bound; 1 elsewhere', () => {
    const { weights, metrics } = importanceWeights(old, behaviour, masks, { type: 'token', upperBound: 1.2 });
    expectClose(Array.from(weights[0]!), [1, Math.exp(0.1), Math.exp(-0.5), 1]);
    expectClose(Array.from(weights[1]!), [1, 1.2]);
    expect(metrics['actor/is_weight_mean']).toBeCloseTo((Math.exp(0.1) + Math.exp(-0.5) + 1.2) / 3, 5);
    expect(metrics['actor/is_weight_truncated_frac']).toBeCloseTo(1 / 3, 6);
  });

  test("sequence: every sampled token of a row the product of the row's ratios", () => {
    const { weights } = importanceWeights(old, behaviour, masks, { type: 'sequence', upperBound: 10 });
    expectClose(Array.from(weights[0]!), [1, Math.exp(-0.4), Math.exp(-0.4), 1]);
    expectClose(Array.from(weights[1]!), [1, Math.exp(1)]);
  });

  test('the same policy on both sides weighs every token 1', () => {
    const { weights, metrics } = importanceWeights(old, old, masks, { type: 'token', upperBound: 1.2 });
    for (const row of weights) expect(Array.from(row).every((w) => w === 1)).toBe(true);
    expect(metrics['actor/is_weight_truncated_frac']).toBe(0);
  });
});
