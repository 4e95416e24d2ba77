/** KL estimators on host numbers and on tensors, and the KL coefficient controllers. */
import { beforeAll, describe, expect, test } from 'bun:test';
import { AdaptiveKlController, FixedKlController, KL_PENALTIES, klController, klPenalty, klPenaltyTensor, type KlPenalty } from '../../src/algo/kl';
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { expectClose } from './close';

beforeAll(async () => {
  await startBackend('wasm');
});

// [log p, log p_ref] pairs and d = log p - log p_ref
const pairs: [number, number][] = [
  [-1, -1.5], // d = 0.5
  [-2, -1], //   d = -1
  [-0.5, -0.5], // d = 0
  [-4, -1], //   d = -3
  [-0.25, -12.25], // d = 12
];

// By hand, per type, for the pairs above. k3: k = -d, exp(k) - k - 1, clamped to [-10, 10].
const expected: Record<KlPenalty, number[]> = {
  kl: [0.5, -1, 0, -3, 12],
  abs: [0.5, 1, 0, 3, 12],
  mse: [0.125, 0.5, 0, 4.5, 72], // d^2 / 2
  k3: [
    Math.exp(-0.5) + 0.5 - 1, // 0.1065
    Math.E - 1 - 1, //          0.7183
    0,
    10, //                      e^3 - 3 - 1 = 16.09, clamped
    10, //                      e^-12 + 12 - 1 = 11.00, clamped
  ],
  low_var_kl: [Math.exp(-0.5) - 0.5, Math.E - 2, 0, 10, 10],
  full: [Math.exp(-1) * 0.5, Math.exp(-2) * -1, 0, Math.exp(-4) * -3, Math.exp(-0.25) * 12], // p * d
};

describe('klPenalty', () => {
  test('every type, by hand', () => {
    expect(Object.keys(expected).sort()).toEqual([...KL_PENALTIES].sort());
    for (const type of KL_PENALTIES) {
      expectClose(
        pairs.map(([p, r]) => klPenalty(p, r, type)),
        expected[type],
        10,
      );
    }
  });
});

describe('klPenaltyTensor', () => {
  test('agrees with the host version for every type', () => {
    const logp = tf.tensor1d(pairs.map(([p]) => p));
    const ref = tf.tensor1d(pairs.map(([, r]) => r));
    for (const type of KL_PENALTIES) {
      const out = klPenaltyTensor(logp, ref, type);
      expectClose(out.dataSync(), expected[type], 4);
      expectClose(
        out.dataSync(),
        pairs.map(([p, r]) => klPenalty(p, r, type)),
        4,
      );
      out.dispose();
    }
    tf.dispose([logp, ref]);
  });

  test('gradients with respect to log p', () => {
    // d = 0.5 at log p = -1, and d = -3 (k3 clamped) at log p = -4
    const ref = tf.tensor1d([-1.5, -1]);
    const gradient = (type: KlPenalty) => {
      const g = tf.grad((logp: tf.Tensor) => tf.sum(klPenaltyTensor(logp, ref, type)));
      const x = tf.tensor1d([-1, -4]);
      const out = g(x);
      const values = Array.from(out.dataSync());
      tf.dispose([x, out]);
      return values;
    };
    expectClose(gradient('kl'), [1, 1]);
    expectClose(gradient('abs'), [1, -1]); // sign(d)
    expectClose(gradient('mse'), [0.5, -3]); // d
    expectClose(gradient('k3'), [1 - Math.exp(-0.5), 0]); // 1 - exp(-d); 0 where clamped
    expectClose(gradient('full'), [Math.exp(-1) * 1.5, Math.exp(-4) * -2]); // p (d + 1)
    ref.dispose();
  });
});

describe('KL controllers', () => {
  test('fixed keeps its value', () => {
    const c = new FixedKlController(0.1);
    c.update();
    expect(c.value).toBe(0.1);
  });

  test('adaptive: value *= 1 + clip(kl / target - 1, ±0.2) x rows / horizon', () => {
    const c = new AdaptiveKlController(0.2, 0.1, 1000);
    c.update(0.11, 100); // error 0.1 -> x (1 + 0.1 * 100 / 1000) = x 1.01
    expect(c.value).toBeCloseTo(0.2 * 1.01, 12);
    c.update(1, 100); // error 9 clipped to 0.2 -> x 1.02
    expect(c.value).toBeCloseTo(0.2 * 1.01 * 1.02, 12);
    c.update(0, 50); // error -1 clipped to -0.2 -> x (1 - 0.2 * 50 / 1000) = x 0.99
    expect(c.value).toBeCloseTo(0.2 * 1.01 * 1.02 * 0.99, 12);
  });

  test('klController picks by target_kl', () => {
    const fixed = klController({ initKlCoef: 0.3, targetKl: null, klHorizon: 10000 });
    expect(fixed).toBeInstanceOf(FixedKlController);
    expect(fixed.value).toBe(0.3);
    const adaptive = klController({ initKlCoef: 0.3, targetKl: 0.05, klHorizon: 500 });
    expect(adaptive).toBeInstanceOf(AdaptiveKlController);
    expect(adaptive).toMatchObject({ value: 0.3, target: 0.05, horizon: 500 });
  });
});
