/** The actor's and critic's losses, aggregated with global norms, and their gradients. */
import { beforeAll, describe, expect, test } from 'bun:test';
import { aggLoss, COMMON_POLICY_STAT_NAMES, entropyLoss, klLoss, type LossNorms, PG_VARIANTS, type PolicyLossOptions, valueLoss } from '../../src/algo/loss';
import { LOSS_AGG_MODES, type PgVariantName } from '../../src/algo/names';
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { expectClose } from './close';

beforeAll(async () => {
  await startBackend('wasm');
});

const t2 = (rows: number[][]) => tf.tensor2d(rows);
/** Reads a scalar and disposes it. */
const read = (x: tf.Tensor) => {
  const value = x.dataSync()[0]!;
  x.dispose();
  return value;
};
/** Reads named scalars and disposes them. */
const readNamed = (stats: Record<string, tf.Tensor>) => Object.fromEntries(Object.entries(stats).map(([name, x]) => [name, read(x)]));

/** topr's weights when a test is not about them. */
const EVEN = { positiveWeight: 1, negativeWeight: 1 };

/** The ppo variant's loss, from positional tensors. */
const policyLoss = (
  logProbs: tf.Tensor,
  oldLogProbs: tf.Tensor,
  advantages: tf.Tensor,
  mask: tf.Tensor,
  o: PolicyLossOptions,
  norms: LossNorms,
  weights: tf.Tensor | null = null,
) => PG_VARIANTS.ppo.loss({ logProbs, oldLogProbs, advantages, mask, weights, scores: null }, o, norms);

describe('aggLoss', () => {
  // masked token losses: row 0 -> 1, 2; row 1 -> 4; row 2 -> 7, 8, 9
  const losses = [
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
  ];
  const masks = [
    [1, 1, 0],
    [1, 0, 0],
    [1, 1, 1],
  ];
  const norms: LossNorms = { tokens: 6, sequences: 3, sumNormScale: 4 };
  // by hand, over the whole batch (token sum 3 + 4 + 24 = 31)
  const whole = {
    'token-mean': 31 / 6,
    'seq-mean-token-sum': 31 / 3,
    'seq-mean-token-mean': (3 / 2 + 4 / 1 + 24 / 3) / 3,
    'seq-mean-token-sum-norm': 31 / 4,
  } as const;
  const agg = (rows: number[], mode: (typeof LOSS_AGG_MODES)[number]) => {
    const loss = t2(rows.map((i) => losses[i]!));
    const mask = t2(rows.map((i) => masks[i]!));
    const value = read(aggLoss(loss, mask, mode, norms));
    tf.dispose([loss, mask]);
    return value;
  };

  test('each mode on the whole batch', () => {
    for (const mode of LOSS_AGG_MODES) expect(agg([0, 1, 2], mode)).toBeCloseTo(whole[mode], 5);
  });

  test('two micro-batches with the same norms sum to the batch loss', () => {
    for (const mode of LOSS_AGG_MODES) expect(agg([0], mode) + agg([1, 2], mode)).toBeCloseTo(whole[mode], 5);
  });

  test('divides by the global norms, not the micro-batch counts', () => {
    // row 1 alone: 4 / 6 tokens, 4 / 3 sequences, (4 / 1) / 3, 4 / 4
    expect(agg([1], 'token-mean')).toBeCloseTo(4 / 6, 6);
    expect(agg([1], 'seq-mean-token-sum')).toBeCloseTo(4 / 3, 6);
    expect(agg([1], 'seq-mean-token-mean')).toBeCloseTo(4 / 3, 6);
    expect(agg([1], 'seq-mean-token-sum-norm')).toBeCloseTo(1, 6);
  });

  test('a row without sampled tokens adds nothing to seq-mean-token-mean', () => {
    const loss = t2([
      [2, 4],
      [5, 5],
    ]);
    const mask = t2([
      [1, 1],
      [0, 0],
    ]);
    // row 0 mean 3, row 1 0 (not NaN); / 1 sequence
    expect(read(aggLoss(loss, mask, 'seq-mean-token-mean', { tokens: 2, sequences: 1, sumNormScale: 2 }))).toBeCloseTo(3, 5);
    tf.dispose([loss, mask]);
  });
});

describe('ppo', () => {
  // two rows; old log p = -1, log p = -1 + ln(ratio); the last token of row 1 is not sampled
  const ratios = [
    [1.5, 0.5, 1.2],
    [0.7, 1.5, 100],
  ];
  const advantages = [
    [1, -2, 1],
    [2, -1, 1],
  ];
  const mask = [
    [1, 1, 1],
    [1, 1, 0],
  ];
  const norms: LossNorms = { tokens: 5, sequences: 2, sumNormScale: 6 };
  const options: PolicyLossOptions = { clipLow: 0.2, clipHigh: 0.3, dualClip: null, aggMode: 'token-mean', topr: EVEN };
  // per token, -min(r A, clip(r, 0.8, 1.3) A):
  //   r 1.5, A  1: -min(1.5, 1.3)  = -1.3   clipped (above 1 + high, A > 0)
  //   r 0.5, A -2: -min(-1, -1.6)  =  1.6   clipped (below 1 - low, A < 0)
  //   r 1.2, A  1: -1.2                     inside [0.8, 1.3]: 1.2 > 1 + low shows the high bound is used
  //   r 0.7, A  2: -min(1.4, 1.6)  = -1.4   below 1 - low but A > 0: not clipped
  //   r 1.5, A -1: -min(-1.5, -1.3) = 1.5   above 1 + high but A < 0: not clipped

  const run = (o: PolicyLossOptions, rows = ratios, adv = advantages, m = mask, n = norms) => {
    const before = tf.memory().numTensors;
    const old = t2(rows.map((r) => r.map(() => -1)));
    const logp = t2(rows.map((r) => r.map((x) => -1 + Math.log(x))));
    const a = t2(adv);
    const k = t2(m);
    const result = policyLoss(logp, old, a, k, o, n);
    const gradient = tf.grad((x: tf.Tensor) => policyLoss(x, old, a, k, o, n).loss)(logp);
    const out = { loss: read(result.loss), stats: readNamed(result.stats), gradient: gradient.arraySync() as number[][] };
    tf.dispose([old, logp, a, k, gradient]);
    expect(tf.memory().numTensors).toBe(before);
    return out;
  };

  test('clipped surrogate, token-mean', () => {
    // (-1.3 + 1.6 - 1.2 - 1.4 + 1.5) / 5 tokens = -0.8 / 5
    expect(run(options).loss).toBeCloseTo(-0.16, 5);
  });

  test('clipped surrogate, seq-mean-token-mean', () => {
    // row 0: (-1.3 + 1.6 - 1.2) / 3 = -0.3; row 1: (-1.4 + 1.5) / 2 = 0.05; / 2 rows
    expect(run({ ...options, aggMode: 'seq-mean-token-mean' }).loss).toBeCloseTo((-0.3 + 0.05) / 2, 5);
  });

  test('stats: ratio sum, approxkl, policykl, ratio max and min, then clipped and dual-clipped counts', () => {
    const logs = [Math.log(1.5), Math.log(0.5), Math.log(1.2), Math.log(0.7), Math.log(1.5)];
    expect(PG_VARIANTS.ppo.stats).toEqual(['clipfrac', 'dual_clipfrac']);
    const { stats } = run(options);
    expect(Object.keys(stats)).toEqual([...COMMON_POLICY_STAT_NAMES, 'clipfrac', 'dual_clipfrac']);
    expectClose(Object.values(stats), [
      1.5 + 0.5 + 1.2 + 0.7 + 1.5,
      logs.reduce((a, l) => a + 0.5 * l * l, 0),
      logs.reduce((a, l) => a + l, 0),
      1.5, // the unsampled ratio 100 is left out
      0.5,
      2, // clipped: the first two tokens
      0,
    ]);
  });

  test('gradient is zero on clipped tokens and -r A / tokens elsewhere', () => {
    const { gradient } = run(options);
    expectClose(gradient[0]!, [0, 0, (-1.2 * 1) / 5]);
    expectClose(gradient[1]!, [(-0.7 * 2) / 5, (-1.5 * -1) / 5, 0]);
  });

  test('dual clip bounds a negative advantage loss by (1 + 2 x 0.2) |A|', () => {
    const dual: PolicyLossOptions = { clipLow: 0.2, clipHigh: 0.2, dualClip: 1 + 2 * 0.2, aggMode: 'seq-mean-token-sum', topr: EVEN };
    const one: LossNorms = { tokens: 4, sequences: 1, sumNormScale: 4 };
    // r 10,  A -1: -min(-10, -1.2) = 10  -> bounded to 1.4        dual-clipped
    // r 1.3, A -1: -min(-1.3, -1.2) = 1.3 < 1.4: unchanged
    // r 10,  A  2: -min(20, 2.4) = -2.4 (positive A: no dual clip)  clipped
    // r 1000, A -3: 3000 -> bounded to 1.4 * 3 = 4.2              dual-clipped
    const rows = [[10, 1.3, 10, 1000]];
    const adv = [[-1, -1, 2, -3]];
    const m = [[1, 1, 1, 1]];
    const { loss, stats, gradient } = run(dual, rows, adv, m, one);
    expect(loss).toBeCloseTo(1.4 + 1.3 - 2.4 + 4.2, 4); // token sum / 1 sequence
    expect(stats.clipfrac).toBe(1); // clipped
    expect(stats.dual_clipfrac).toBe(2); // dual-clipped
    expectClose(gradient[0]!, [0, 1.3, 0, 0]); // only the unbounded token: -r A
    expect(run({ ...dual, dualClip: null }, rows, adv, m, one).loss).toBeCloseTo(10 + 1.3 - 2.4 + 3000, 1);
  });

  test('the log-ratio is clamped to ±20', () => {
    // log p - old = 50 -> ratio e^20; A = -1 -> loss e^20 (token-mean over 1)
    const old = t2([[-60]]);
    const logp = t2([[-10]]);
    const a = t2([[-1]]);
    const k = t2([[1]]);
    const { loss, stats } = policyLoss(logp, old, a, k, options, { tokens: 1, sequences: 1, sumNormScale: 1 });
    expect(read(loss) / Math.exp(20)).toBeCloseTo(1, 5);
    expect(readNamed(stats).policykl).toBeCloseTo(20, 4); // policykl: the clamped log-ratio
    tf.dispose([old, logp, a, k]);
  });
});

test('importance weights scale each token term, and carry no gradient of their own', () => {
  // ratio 1 everywhere: the term is -A per token; weights 0.5 and 2 on the two sampled tokens
  const logp = t2([[-1, -2, -3]]);
  const a = t2([[1, -1, 5]]);
  const k = t2([[1, 1, 0]]);
  const w = t2([[0.5, 2, 9]]);
  const n = { tokens: 2, sequences: 1, sumNormScale: 1 };
  const options: PolicyLossOptions = { clipLow: 0.2, clipHigh: 0.2, dualClip: null, aggMode: 'token-mean', topr: EVEN };
  const plain = policyLoss(logp, logp, a, k, options, n);
  const weighted = policyLoss(logp, logp, a, k, options, n, w);
  expect(read(plain.loss)).toBeCloseTo((-1 + 1) / 2, 6);
  expect(read(weighted.loss)).toBeCloseTo((-0.5 + 2) / 2, 6);
  // d/dlogp of -w r A / tokens at r = 1 (the old log-probs a separate tensor of the same values)
  const old = t2([[-1, -2, -3]]);
  const gradient = tf.grad((x: tf.Tensor) => policyLoss(x, old, a, k, options, n, w).loss)(logp);
  expectClose(Array.from(gradient.dataSync()), [-0.25, 1, 0]);
  tf.dispose([logp, old, a, k, w, ...Object.values(plain.stats), ...Object.values(weighted.stats), gradient]);
});

describe('topr, vanilla, tis, cispo, kimi15', () => {
  // Two rows of three tokens; old log p = -1, log p = -1 + ln r with r = 2, 0.5, 1 on both rows.
  // Row 0 scored 1 (a positive row), row 1 scored 0 (0 or less: a negative row); the last token
  // of row 1 is not sampled. Token-mean over the 5 sampled tokens.
  const ratios = [
    [2, 0.5, 1],
    [2, 0.5, 1],
  ];
  const advantages = [
    [1, -1, 2],
    [-1, 1, 5],
  ];
  const mask = [
    [1, 1, 1],
    [1, 1, 0],
  ];
  const scores = [[1], [0]];
  const norms: LossNorms = { tokens: 5, sequences: 2, sumNormScale: 6 };
  const base: PolicyLossOptions = { clipLow: 0.2, clipHigh: 0.2, dualClip: null, aggMode: 'token-mean', topr: { positiveWeight: 2, negativeWeight: 0.5 } };
  const [up, down] = [-1 + Math.log(2), -1 + Math.log(0.5)]; // log p where r = 2 and r = 0.5

  const run = (variant: PgVariantName, o = base) => {
    const before = tf.memory().numTensors;
    const old = t2(ratios.map((r) => r.map(() => -1)));
    const logp = t2(ratios.map((r) => r.map((x) => -1 + Math.log(x))));
    const a = t2(advantages);
    const k = t2(mask);
    const s = t2(scores);
    const input = (logProbs: tf.Tensor) => ({ logProbs, oldLogProbs: old, advantages: a, mask: k, weights: null, scores: s });
    const result = PG_VARIANTS[variant].loss(input(logp), o, norms);
    const gradient = tf.grad((x: tf.Tensor) => PG_VARIANTS[variant].loss(input(x), o, norms).loss)(logp);
    const out = { loss: read(result.loss), stats: readNamed(result.stats), gradient: gradient.arraySync() as number[][] };
    tf.dispose([old, logp, a, k, s, gradient]);
    expect(tf.memory().numTensors).toBe(before);
    return out;
  };

  test('topr: -A log p on positive rows, -clip(r, 0, 1) A log p on negative ones, each weighted', () => {
    // row 0 (x 2):   -1 x up, -(-1) x down, -2 x (-1)
    // row 1 (x 0.5): r 2 -> 1: -1 x (-1) x up; r 0.5 -> 0.5: -0.5 x 1 x down
    const row0 = 2 * (-up + down + 2);
    const row1 = 0.5 * (up - 0.5 * down);
    expect(run('topr').loss).toBeCloseTo((row0 + row1) / 5, 5);
    // weights 1 and 1: every positive token's REINFORCE term as is
    expect(run('topr', { ...base, topr: EVEN }).loss).toBeCloseTo((-up + down + 2 + up - 0.5 * down) / 5, 5);
  });

  test('topr: the gradient pushes log p along the advantage, the negative rows tapered, the taper a constant', () => {
    // d/dlog p = -weight x A / 5 on positive rows, -weight x clip(r, 0, 1) x A / 5 on negative ones
    // (a taper with a gradient of its own would add -0.5 x 0.5 x 1 x down / 5 on row 1's second token)
    const { gradient } = run('topr');
    expectClose(gradient[0]!, [(-2 * 1) / 5, (-2 * -1) / 5, (-2 * 2) / 5]);
    expectClose(gradient[1]!, [(-0.5 * 1 * -1) / 5, (-0.5 * 0.5 * 1) / 5, 0]);
    // descent (log p -= gradient) raises log p where A > 0 and lowers it where A < 0, on either kind of row
    advantages.forEach((row, i) => row.forEach((a, t) => mask[i]![t] && expect(Math.sign(gradient[i]![t]!)).toBe(-Math.sign(a))));
  });

  test("topr stats: the common ones, then the negative rows' truncated tokens (r > 1)", () => {
    const logs = [Math.log(2), Math.log(0.5), 0, Math.log(2), Math.log(0.5)];
    expect(PG_VARIANTS.topr.stats).toEqual(['topr_negative_total_clipfrac']);
    // row 0's r = 2 is not truncated: only the negative row's is
    const { stats } = run('topr');
    expect(Object.keys(stats)).toEqual([...COMMON_POLICY_STAT_NAMES, 'topr_negative_total_clipfrac']);
    expectClose(Object.values(stats), [6, logs.reduce((a, l) => a + 0.5 * l * l, 0), logs.reduce((a, l) => a + l, 0), 2, 0.5, 1]);
  });

  test('topr: a wild ratio on a negative row is truncated to 1, not overflowed', () => {
    // log p - old = 100; A = -1, score -1: -1 x (-1) x (-1) = -1 over 1 token
    const [logp, old, a, k, s] = [t2([[-1]]), t2([[-101]]), t2([[-1]]), t2([[1]]), t2([[-1]])];
    const { loss, stats } = PG_VARIANTS.topr.loss({ logProbs: logp, oldLogProbs: old, advantages: a, mask: k, weights: null, scores: s }, base, {
      tokens: 1,
      sequences: 1,
      sumNormScale: 1,
    });
    expect(read(loss)).toBeCloseTo(-0.5, 5); // x topr_negative_weight 0.5
    expect(() =>
      PG_VARIANTS.topr.loss({ logProbs: logp, oldLogProbs: old, advantages: a, mask: k, weights: null, scores: null }, base, {
        tokens: 1,
        sequences: 1,
        sumNormScale: 1,
      }),
    ).toThrow('episode score');
    tf.dispose([logp, old, a, k, s, ...Object.values(stats)]);
  });

  test('vanilla: -A log p on every token, whatever the ratio or the score', () => {
    const { loss, gradient, stats } = run('vanilla');
    expect(loss).toBeCloseTo((-up + down + 2 + up - down) / 5, 5);
    expectClose(gradient[0]!, [-1 / 5, 1 / 5, -2 / 5]);
    expectClose(gradient[1]!, [1 / 5, -1 / 5, 0]);
    expect(Object.keys(stats)).toEqual([...COMMON_POLICY_STAT_NAMES]);
  });

  test('tis: -clip(r, 0, 1) A log p on every token, the ratio a constant', () => {
    // row 0: r 2 -> 1: -1 x 1 x up; r 0.5: -0.5 x (-1) x down; r 1: -1 x 2 x (-1)
    // row 1: -1 x (-1) x up; -0.5 x 1 x down: the up and down terms cancel, leaving 2
    const { loss, gradient, stats } = run('tis');
    expect(loss).toBeCloseTo((-up + 0.5 * down + 2 + up - 0.5 * down) / 5, 5);
    // d/dlog p = -clip(r, 0, 1) A / 5
    expectClose(gradient[0]!, [-1 / 5, 0.5 / 5, -2 / 5]);
    expectClose(gradient[1]!, [1 / 5, -0.5 / 5, 0]);
    expect(stats.tis_total_clipfrac).toBe(2); // the two sampled r = 2
  });

  test('cispo: -clip(r, 0.9, 1.1) A log p on every token, the ratio a constant', () => {
    const { loss, gradient, stats } = run('cispo');
    expect(loss).toBeCloseTo((-1.1 * up + 0.9 * down + 2 + 1.1 * up - 0.9 * down) / 5, 5);
    expectClose(gradient[0]!, [-1.1 / 5, 0.9 / 5, -2 / 5]);
    expectClose(gradient[1]!, [1.1 / 5, -0.9 / 5, 0]);
    expect(stats.cispo_total_clipfrac).toBe(4); // all but row 0's r = 1
  });

  test('kimi15: -A log p + 0.1 / 2 (log p - log p_old)^2', () => {
    // vanilla's terms (sum 2) plus 0.05 d^2 on 4 tokens with d = ±ln 2 (row 0's r = 1 adds 0)
    const d = Math.log(2);
    const { loss, gradient } = run('kimi15');
    expect(loss).toBeCloseTo((2 + 0.05 * 4 * d * d) / 5, 5);
    // d/dlog p = (-A + 0.1 d) / 5
    expectClose(gradient[0]!, [(-1 + 0.1 * d) / 5, (1 - 0.1 * d) / 5, -2 / 5]);
    expectClose(gradient[1]!, [(1 + 0.1 * d) / 5, (-1 - 0.1 * d) / 5, 0]);
  });
});

describe('klLoss and entropyLoss', () => {
  test('klLoss aggregates the chosen estimator', () => {
    // d = 0.5, -1 (row 0) and 2 (row 1; its second token not sampled); mse = d^2 / 2
    const logp = t2([
      [-1, -2],
      [-1, -1],
    ]);
    const ref = t2([
      [-1.5, -1],
      [-3, 0],
    ]);
    const mask = t2([
      [1, 1],
      [1, 0],
    ]);
    const norms = { tokens: 3, sequences: 2, sumNormScale: 2 };
    // (0.125 + 0.5 + 2) / 3
    expect(read(klLoss(logp, ref, mask, 'mse', 'token-mean', norms))).toBeCloseTo(2.625 / 3, 5);
    // rows: (0.5 - 1) / 2 = -0.25 and 2; / 2
    expect(read(klLoss(logp, ref, mask, 'kl', 'seq-mean-token-mean', norms))).toBeCloseTo(0.875, 5);
    // a scope drops its outsiders' terms but still divides by the whole response:
    // only row 0's first token is in scope: 0.125 / 3, and rows (0.5 / 2, 0) / 2
    const scope = t2([
      [1, 0],
      [0, 0],
    ]);
    expect(read(klLoss(logp, ref, mask, 'mse', 'token-mean', norms, scope))).toBeCloseTo(0.125 / 3, 5);
    expect(read(klLoss(logp, ref, mask, 'kl', 'seq-mean-token-mean', norms, scope))).toBeCloseTo(0.125, 5);
    tf.dispose([logp, ref, mask, scope]);
  });

  test('entropyLoss aggregates the entropy', () => {
    const entropy = t2([
      [1, 3],
      [5, 7],
    ]);
    const mask = t2([
      [1, 1],
      [1, 0],
    ]);
    const norms = { tokens: 3, sequences: 2, sumNormScale: 2 };
    expect(read(entropyLoss(entropy, mask, 'token-mean', norms))).toBeCloseTo(9 / 3, 5);
    expect(read(entropyLoss(entropy, mask, 'seq-mean-token-mean', norms))).toBeCloseTo((2 + 5) / 2, 5);
    const scope = t2([
      [0, 1],
      [1, 0],
    ]);
    expect(read(entropyLoss(entropy, mask, 'token-mean', norms, scope))).toBeCloseTo(8 / 3, 5);
    expect(read(entropyLoss(entropy, mask, 'seq-mean-token-mean', norms, scope))).toBeCloseTo((3 / 2 + 5) / 2, 5);
    tf.dispose([entropy, mask, scope]);
  });
});

describe('valueLoss', () => {
  // V, V_old, R per token; the last token is not sampled; value clip 0.5
  //   V 2,   V_old 1, R 1: plain 1,    clip(2) = 1.5 -> 0.25:  max 1
  //   V 2,   V_old 1, R 3: plain 1,    clip(2) = 1.5 -> 2.25:  max 2.25, clipped
  //   V 0.8, V_old 1, R 0: plain 0.64, inside the clip -> 0.64: max 0.64
  const values = [[2, 2, 0.8, 100]];
  const oldValues = [[1, 1, 1, 0]];
  const returns = [[1, 3, 0, 0]];
  const mask = [[1, 1, 1, 0]];
  const norms: LossNorms = { tokens: 3, sequences: 1, sumNormScale: 4 };

  const run = (clip: number | null) => {
    const [v, o, r, m] = [values, oldValues, returns, mask].map(t2) as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
    const result = valueLoss(v, o, r, m, clip, 'token-mean', norms);
    const gradient = tf.grad((x: tf.Tensor) => valueLoss(x, o, r, m, clip, 'token-mean', norms).loss)(v);
    const out = { loss: read(result.loss), stats: readNamed(result.stats), gradient: Array.from(gradient.dataSync()) };
    tf.dispose([v, o, r, m, gradient]);
    return out;
  };

  test('with value clip: 0.5 x agg(max(plain, clipped))', () => {
    const { loss, stats, gradient } = run(0.5);
    expect(loss).toBeCloseTo((0.5 * (1 + 2.25 + 0.64)) / 3, 5);
    expectClose([stats.clipped!, stats.prediction!], [1, 2 + 2 + 0.8]); // clipped tokens, sum of predictions
    // d/dV of 0.5 (V - R)^2 / 3 = (V - R) / 3; 0 where the clipped branch wins (V is out of V_old ± 0.5)
    expectClose(gradient, [1 / 3, 0, 0.8 / 3, 0]);
  });

  test('without value clip: 0.5 x agg((V - R)^2)', () => {
    const { loss, stats, gradient } = run(null);
    expect(loss).toBeCloseTo((0.5 * (1 + 1 + 0.64)) / 3, 5);
    expectClose([stats.clipped!, stats.prediction!], [0, 4.8]);
    expectClose(gradient, [1 / 3, -1 / 3, 0.8 / 3, 0]);
  });
});
