/**
 * Advantage estimators on host rows. Masks with gaps are multi-turn rows: the response tokens of
 * two turns with observation tokens (mask 0) between them, and padding (mask 0) at the end.
 */
import { describe, expect, test } from 'bun:test';
import { ESTIMATORS } from '../../src/algo/estimators';
import {
  type AdvantageInput,
  agenticReinforce,
  finishAdvantages,
  gae,
  reinforcePlusPlus,
  remax,
  returnsToGo,
  rloo,
  zeroAdvantageFraction,
  zeroAdvantageRows,
} from '../../src/algo/advantage';
import { expectClose, f32, u8 } from './close';

const input = (tokenRewards: Float32Array[], masks: Uint8Array[], extra: Partial<AdvantageInput> = {}): AdvantageInput => ({
  tokenRewards,
  masks,
  values: null,
  groups: tokenRewards.map(() => 'g'),
  baselines: null,
  ...extra,
});

/** Each registered estimator's advantage function, by name. */
const ADVANTAGE_ESTIMATORS = Object.fromEntries(Object.entries(ESTIMATORS).map(([name, entry]) => [name, entry.advantages]));

describe('returnsToGo (reinforce, grpo, gigpo, step_reinforce)', () => {
  test('is the registered estimator of all four', () => {
    for (const name of ['reinforce', 'grpo', 'gigpo', 'step_reinforce'] as const) expect(ADVANTAGE_ESTIMATORS[name]).toBe(returnsToGo);
    expect(ADVANTAGE_ESTIMATORS).toMatchObject({ gae, agentic_reinforce: agenticReinforce, reinforce_plus_plus: reinforcePlusPlus, rloo, remax });
  });

  test('gamma 1 gives every token the final reward', () => {
    const { advantages, returns } = returnsToGo(input([f32(0, 0, 0, 1)], [u8(1, 1, 1, 1)]), { gamma: 1, lambd: 1 });
    expectClose(advantages[0]!, [1, 1, 1, 1]);
    expectClose(returns[0]!, [1, 1, 1, 1]);
  });

  test('discounts token by token, through observation tokens', () => {
    // turn 1 at 0-1, observation at 2-3, turn 2 at 4-5; gamma 0.5 from the reward at 5
    const { advantages } = returnsToGo(input([f32(0, 0, 0, 0, 0, 1)], [u8(1, 1, 0, 0, 1, 1)]), { gamma: 0.5, lambd: 1 });
    expectClose(advantages[0]!, [1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1]);
  });
});

describe('gae', () => {
  const options = { gamma: 0.9, lambd: 0.8 }; // gamma * lambd = 0.72

  test('one response', () => {
    // t=2: delta = 1 - 0.6 = 0.4                  A = 0.4
    // t=1: delta = 0.9 * 0.6 - 0.4 = 0.14         A = 0.14 + 0.72 * 0.4   = 0.428
    // t=0: delta = 0.9 * 0.4 - 0.2 = 0.16         A = 0.16 + 0.72 * 0.428 = 0.46816
    const values = [f32(0.2, 0.4, 0.6)];
    const { advantages, returns } = gae(input([f32(0, 0, 1)], [u8(1, 1, 1)], { values }), options);
    expectClose(advantages[0]!, [0.46816, 0.428, 0.4]);
    expectClose(returns[0]!, [0.46816 + 0.2, 0.428 + 0.4, 0.4 + 0.6]); // A + V
  });

  test('observation tokens carry the next value and the advantage through', () => {
    // tokens 1-2 are an observation (their values 9 are ignored), 4 is padding
    // t=3: delta = 1 - 0.6 = 0.4                  A = 0.4
    // t=0: delta = 0.9 * 0.6 - 0.2 = 0.34         A = 0.34 + 0.72 * 0.4 = 0.628
    const values = [f32(0.2, 9, 9, 0.6, 9)];
    const { advantages, returns } = gae(input([f32(0, 0, 0, 1, 0)], [u8(1, 0, 0, 1, 0)], { values }), options);
    expectClose(advantages[0]!, [0.628, 0.4, 0.4, 0.4, 0]);
    expectClose([returns[0]![0]!, returns[0]![3]!], [0.628 + 0.2, 0.4 + 0.6]);
  });

  test('needs the critic values', () => {
    expect(() => gae(input([f32(1)], [u8(1)]), options)).toThrow();
  });
});

describe('agenticReinforce', () => {
  test('one value per turn: its last token reward + gamma x next turn', () => {
    // turn 2 (4-5): 1 + 0.9 * 0 = 1; turn 1 (0-1): 0.5 + 0.9 * 1 = 1.4
    // rewards inside a turn (0.3 at 0, 0.2 at 4) are not its last token's: ignored
    const rewards = f32(0.3, 0.5, 0, 0, 0.2, 1, 0);
    const { advantages, returns } = agenticReinforce(input([rewards], [u8(1, 1, 0, 0, 1, 1, 0)]), { gamma: 0.9, lambd: 1 });
    expectClose(advantages[0]!, [1.4, 1.4, 0, 0, 1, 1, 0]);
    expectClose(returns[0]!, [1.4, 1.4, 0, 0, 1, 1, 0]);
  });
});

describe('reinforcePlusPlus', () => {
  test('whitens returns over the batch and keeps credit across observations', () => {
    // returns (gamma 1, no reset at observation token 2): row 0 [1, 1, 1, 1], row 1 [-1, -1, 0, 0]
    // masked returns 1, 1, 1, -1, -1: mean 0.2, var = (3 * 0.8^2 + 2 * 1.2^2) / 4 = 1.2
    const rewards = [f32(0, 0, 0, 1), f32(0, -1, 0, 0)];
    const masks = [u8(1, 1, 0, 1), u8(1, 1, 0, 0)];
    const { advantages, returns } = reinforcePlusPlus(input(rewards, masks), { gamma: 1, lambd: 1 });
    const s = Math.sqrt(1.2 + 1e-8);
    expectClose(advantages[0]!, [0.8 / s, 0.8 / s, 0, 0.8 / s]);
    expectClose(advantages[1]!, [-1.2 / s, -1.2 / s, 0, 0]);
    expectClose(returns[0]!, [1, 1, 1, 1]);
    expectClose(returns[1]!, [-1, -1, 0, 0]);
  });
});

describe('rloo', () => {
  test('score minus the mean of the other rows; a lone row keeps its score', () => {
    // row scores (sums of token rewards) 1, 0, 5, 2, 1, 3 in groups a, c, a, b, a, c
    // a (rows 0, 2, 4): 1 - (5 + 1) / 2 = -2, 5 - (1 + 1) / 2 = 4, 1 - (1 + 5) / 2 = -2
    // c (rows 1, 5): 0 - 3 = -3, 3 - 0 = 3;  b (row 3) alone: 2
    const rewards = [f32(0, 0, 1), f32(0, 0, 0), f32(0, 5, 0), f32(0.5, 0, 1.5), f32(0, 0, 1), f32(0, 3, 0)];
    const masks = [u8(1, 1, 1), u8(1, 0, 1), u8(1, 1, 0), u8(1, 1, 1), u8(1, 1, 1), u8(1, 1, 0)];
    const groups = ['a', 'c', 'a', 'b', 'a', 'c'];
    const { advantages, returns } = rloo(input(rewards, masks, { groups }), { gamma: 1, lambd: 1 });
    const expected = [
      [-2, -2, -2],
      [-3, 0, -3],
      [4, 4, 0],
      [2, 2, 2],
      [-2, -2, -2],
      [3, 3, 0],
    ];
    expected.forEach((row, i) => expectClose(advantages[i]!, row));
    expected.forEach((row, i) => expectClose(returns[i]!, row));
  });
});

describe('remax', () => {
  test('reward-to-go of sampled tokens minus the greedy baseline', () => {
    // row 0: the 5 on observation token 2 is not sampled; returns 1 at tokens 0, 1, 3; minus 0.4
    // row 1: rewards -1 then 2 -> returns 1, 2; minus 1.5
    const rewards = [f32(0, 0, 5, 1), f32(-1, 2, 0, 0)];
    const masks = [u8(1, 1, 0, 1), u8(1, 1, 0, 0)];
    const { advantages, returns } = remax(input(rewards, masks, { baselines: [0.4, 1.5] }), { gamma: 1, lambd: 1 });
    expectClose(
      [0, 1, 3].map((t) => advantages[0]![t]!),
      [0.6, 0.6, 0.6],
    );
    expectClose(
      [0, 1].map((t) => advantages[1]![t]!),
      [-0.5, 0.5],
    );
    expectClose(
      [0, 1, 3].map((t) => returns[0]![t]!),
      [1, 1, 1],
    );
    expectClose(
      [0, 1].map((t) => returns[1]![t]!),
      [1, 2],
    );
  });

  test('needs the baselines', () => {
    expect(() => remax(input([f32(1)], [u8(1)]), { gamma: 1, lambd: 1 })).toThrow();
  });
});

describe('finishAdvantages', () => {
  // masked values 1, 1, 1, -1, -1 (the 9 sits on an observation token): mean 0.2, var 1.2
  const advantages = [f32(1, 1, 9, 1), f32(-1, -1, 7, 7)];
  const masks = [u8(1, 1, 0, 1), u8(1, 1, 0, 0)];
  const s = Math.sqrt(1.2 + 1e-8);

  test('whitens over sampled tokens and zeroes the rest', () => {
    const out = finishAdvantages(advantages, masks, { whitenAdvantages: true, advantageClip: null });
    expectClose(out.advantages[0]!, [0.8 / s, 0.8 / s, 0, 0.8 / s]);
    expectClose(out.advantages[1]!, [-1.2 / s, -1.2 / s, 0, 0]);
    expect(out.clippedFraction).toBe(0);
    expectClose(advantages[0]!, [1, 1, 9, 1]); // new rows
  });

  test('clips after whitening and counts clipped sampled tokens', () => {
    // 0.8 / s = 0.730 stays; -1.2 / s = -1.095 (2 of 5 tokens) -> -1
    const out = finishAdvantages(advantages, masks, { whitenAdvantages: true, advantageClip: 1 });
    expectClose(out.advantages[1]!, [-1, -1, 0, 0]);
    expectClose(out.advantages[0]!, [0.8 / s, 0.8 / s, 0, 0.8 / s]);
    expect(out.clippedFraction).toBeCloseTo(2 / 5, 12);
  });

  test('clip without whitening; values at the bound are not counted', () => {
    const out = finishAdvantages([f32(0.3, -0.7, 2, 0.5)], [u8(1, 1, 0, 1)], { whitenAdvantages: false, advantageClip: 0.5 });
    expectClose(out.advantages[0]!, [0.3, -0.5, 0, 0.5]);
    expect(out.clippedFraction).toBeCloseTo(1 / 3, 12);
  });

  test('one sampled token is not whitened', () => {
    const out = finishAdvantages([f32(3, 4)], [u8(0, 1)], { whitenAdvantages: true, advantageClip: null });
    expectClose(out.advantages[0]!, [0, 4]);
  });
});

test('zeroAdvantageRows and zeroAdvantageFraction find rows with no advantage on a sampled token', () => {
  // the second row's only nonzero value sits on an observation token; the third has one sampled -0.5
  const rows = [f32(0, 0, 0), f32(0, 3, 0), f32(0, -0.5, 0), f32(1, 1, 1)];
  const masks = [u8(1, 1, 1), u8(1, 0, 1), u8(1, 1, 0), u8(1, 1, 1)];
  expect(zeroAdvantageFraction(rows, masks)).toBe(0.5);
  expect(zeroAdvantageRows(rows, masks)).toEqual([true, true, false, false]);
  expect(zeroAdvantageFraction([], [])).toBe(0);
});
