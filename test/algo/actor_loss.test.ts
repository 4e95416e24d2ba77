/** actor_train's loss on a micro-batch: the total and its parts by name, on a case small enough to work by hand. */
import { beforeAll, describe, expect, test } from 'bun:test';
import { actorLoss, type ActorLossInput, type ActorLossOptions } from '../../src/algo/actor_loss';
import { COMMON_POLICY_STAT_NAMES, type LossNorms, PG_VARIANTS } from '../../src/algo/loss';
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { expectClose } from './close';

beforeAll(async () => {
  await startBackend('wasm');
});

// One row of three tokens, the last not sampled; token-mean over the two sampled ones.
//   token 0: log p -1, old -1   (r 1),        A 1, ref -1.5  (log p - ref 0.5),  entropy 2
//   token 1: log p -2, old -2.5 (r e^0.5),    A 3, ref -2.25 (log p - ref 0.25), entropy 4
// ppo with clip 0.2: token 0 gives -1; token 1's r is above 1.2 with A > 0, so it is clipped to
// -1.2 x 3 = -3.6. pg_loss = (-1 - 3.6) / 2 = -2.3. The KL loss (estimator kl: log p - ref) is
// (0.5 + 0.25) / 2 = 0.375, the entropy (2 + 4) / 2 = 3.
const NORMS: LossNorms = { tokens: 2, sequences: 1, sumNormScale: 1 };
const OPTIONS: ActorLossOptions = {
  pgVariant: 'ppo',
  policy: { clipLow: 0.2, clipHigh: 0.2, dualClip: null, aggMode: 'token-mean', topr: { positiveWeight: 1, negativeWeight: 1 } },
  klLoss: { coef: 0.5, type: 'kl' },
  entropyCoef: 0.1,
};
const row = (...values: number[]) => tf.tensor2d([values]);

/** The case's inputs (scopes and reference as asked), the loss's value and parts read back, the gradient along log p. */
function run(o: ActorLossOptions = OPTIONS, extra: { ref?: boolean; klScope?: number[]; entropyScope?: number[] } = {}) {
  const before = tf.memory().numTensors;
  const constants = {
    oldLogProbs: row(-1, -2.5, -3),
    advantages: row(1, 3, 7),
    mask: row(1, 1, 0),
    entropy: row(2, 4, 9),
    refLogProbs: extra.ref === false ? null : row(-1.5, -2.25, 0),
    weights: null,
    scores: null,
    klScope: extra.klScope ? row(...extra.klScope) : null,
    entropyScope: extra.entropyScope ? row(...extra.entropyScope) : null,
  };
  const logProbs = row(-1, -2, -3);
  const input = (x: tf.Tensor): ActorLossInput => ({ ...constants, logProbs: x });
  const result = actorLoss(input(logProbs), o, NORMS);
  const gradient = tf.grad((x: tf.Tensor) => actorLoss(input(x), o, NORMS).loss)(logProbs);
  const out = {
    loss: result.loss.dataSync()[0]!,
    parts: Object.fromEntries(Object.entries(result.parts).map(([name, x]) => [name, x.dataSync()[0]!])),
    gradient: Array.from(gradient.dataSync()),
  };
  tf.dispose([result.loss, ...Object.values(result.parts), gradient, logProbs, ...Object.values(constants).filter((x) => x !== null)]);
  expect(tf.memory().numTensors).toBe(before);
  return out;
}

describe('actorLoss', () => {
  test('names its parts: the policy statistics, then the terms, the log-prob gap and the tokens', () => {
    expect(Object.keys(run().parts)).toEqual([...COMMON_POLICY_STAT_NAMES, ...PG_VARIANTS.ppo.stats, 'pg_loss', 'kl_loss', 'entropy', 'logprob_gap', 'tokens']);
  });

  test('each part against the hand-worked case', () => {
    const { parts } = run();
    const r = Math.exp(0.5);
    expect(parts.pg_loss).toBeCloseTo(-2.3, 5);
    expect(parts.kl_loss).toBeCloseTo(0.375, 5);
    expect(parts.entropy).toBeCloseTo(3, 5);
    expect(parts.logprob_gap).toBeCloseTo(0.5, 5); // |0| + |0.5|
    expect(parts.tokens).toBe(2);
    expectClose(
      COMMON_POLICY_STAT_NAMES.map((name) => parts[name]!),
      [1 + r, 0.5 * 0.25, 0.5, r, 1],
    );
    expect(parts.clipfrac).toBe(1);
    expect(parts.dual_clipfrac).toBe(0);
  });

  test('loss = pg_loss + kl_loss_coef x kl_loss - entropy_loss_coef x entropy', () => {
    const { loss, gradient } = run();
    expect(loss).toBeCloseTo(-2.3 + 0.5 * 0.375 - 0.1 * 3, 5);
    // d/dlog p: -r A / 2 on the unclipped token, 0 on the clipped one; the KL adds 0.5 x 1 / 2 on each
    // sampled token; the entropy is an input, with no gradient along log p
    expectClose(gradient, [-0.5 + 0.25, 0.25, 0]);
  });

  test('without a reference or a KL coefficient the KL part is 0 and out of the loss', () => {
    for (const { loss, parts } of [run(OPTIONS, { ref: false }), run({ ...OPTIONS, klLoss: null })]) {
      expect(parts.kl_loss).toBe(0);
      expect(loss).toBeCloseTo(-2.3 - 0.1 * 3, 5);
    }
  });

  test('a scope keeps only its tokens in the KL loss and the bonus; the aggregate still divides by every sampled token', () => {
    const { loss, parts } = run(OPTIONS, { klScope: [1, 0, 0], entropyScope: [0, 1, 0] });
    expect(parts.kl_loss).toBeCloseTo(0.5 / 2, 5);
    // the reported entropy is the whole response's; the bonus only token 1's: 4 / 2
    expect(parts.entropy).toBeCloseTo(3, 5);
    expect(loss).toBeCloseTo(-2.3 + 0.5 * 0.25 - 0.1 * 2, 5);
  });

  test('topr reads the scores and names its own statistic', () => {
    const o: ActorLossOptions = { ...OPTIONS, pgVariant: 'topr' };
    const input: ActorLossInput = {
      logProbs: row(-1, -2, -3),
      entropy: row(2, 4, 9),
      oldLogProbs: row(-1, -2.5, -3),
      advantages: row(1, 3, 7),
      mask: row(1, 1, 0),
      refLogProbs: null,
      weights: null,
      scores: tf.tensor2d([[1]]),
      klScope: null,
      entropyScope: null,
    };
    const { loss, parts } = actorLoss(input, o, NORMS);
    // a positive row: plain REINFORCE, -A log p: (1 x 1 + 3 x 2) / 2
    expect(parts.pg_loss!.dataSync()[0]).toBeCloseTo(3.5, 5);
    expect(Object.keys(parts)).toContain('topr_negative_total_clipfrac');
    tf.dispose([loss, ...Object.values(parts), ...Object.values(input).filter((x) => x !== null)]);
  });
});
