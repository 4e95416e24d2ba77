/**
 * The updates' metrics, by name and in order, as metrics.jsonl carries them: what the actor, the
 * critic and the supervised step report, on the tiny model, and that an update leaves the tensor
 * count where it found it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { ActorLossOptions } from '../../src/algo/actor_loss';
import type { PgVariantName } from '../../src/algo/names';
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { AdamW } from '../../src/model/optim';
import { Qwen2Model } from '../../src/model/qwen2';
import { type ActorRows, updateActor, updateCritic, type UpdateSchedule, updateSupervised } from '../../src/train/update';
import { tinyConfig } from '../model/tiny';

setDefaultTimeout(120_000);

let model: Qwen2Model;
let critic: Qwen2Model;
beforeAll(async () => {
  await startBackend('wasm');
  model = Qwen2Model.random(tinyConfig(), { seed: 4 });
  critic = Qwen2Model.random(tinyConfig(), { seed: 5, head: 'value' });
});
afterAll(() => {
  model.dispose();
  critic.dispose();
});

const ids = [
  [1, 5, 9, 33, 2, 30],
  [7, 0, 12, 3, 4, 8],
  [2, 2, 17, 36, 11],
].map((row) => Int32Array.from(row));
const masks = [
  [0, 0, 1, 1, 1, 1],
  [0, 0, 0, 1, 1, 1],
  [0, 1, 1, 1, 1],
].map((row) => Uint8Array.from(row));
const perToken = (value: (row: number, t: number) => number) => masks.map((mask, i) => Float32Array.from(mask, (m, t) => (m ? value(i, t) : 0)));

const ROWS: ActorRows = {
  ids,
  masks,
  temperature: 1,
  oldLogProbs: perToken(() => -3.6),
  refLogProbs: perToken(() => -3.5),
  advantages: perToken((i) => [1, -1, 0.5][i]!),
  isWeights: null,
  klScope: null,
  entropyScope: null,
  episodeScores: [1, 0, 0.5],
};

const SCHEDULE: UpdateSchedule = {
  epochs: 1,
  miniBatchRows: 2,
  microBatchRows: 1,
  gradientAccumulationSteps: 2,
  sequenceLength: 6,
  learningRate: 1e-3,
  maxGradNorm: 1,
  shuffleSeed: [3],
  recompute: false,
};

const options = (pgVariant: PgVariantName): ActorLossOptions => ({
  pgVariant,
  policy: { clipLow: 0.2, clipHigh: 0.2, dualClip: null, aggMode: 'seq-mean-token-mean', topr: { positiveWeight: 1, negativeWeight: 1 } },
  klLoss: { coef: 0.1, type: 'k3' },
  entropyCoef: 0.01,
});

/** Runs an update with a fresh optimizer; the tensor count must come back to where it was. */
async function flat<T>(variables: readonly tf.Variable[], update: (optimizer: AdamW) => Promise<T>): Promise<T> {
  const before = tf.memory().numTensors;
  const optimizer = new AdamW(variables);
  const result = await update(optimizer);
  optimizer.dispose();
  expect(tf.memory().numTensors).toBe(before);
  return result;
}

const ACTOR_HEAD = ['actor/pg_loss', 'actor/kl_loss', 'actor/entropy', 'actor/total_loss', 'actor/ratio_mean', 'actor/approxkl', 'actor/policykl'];
const ACTOR_TAIL = [
  'actor/logprob_gap_before_update',
  'actor/ratio_max',
  'actor/ratio_min',
  'actor/grad_norm',
  'actor/lr',
  'actor/optimizer_steps',
  'actor/skipped_steps',
];

describe('the metrics of an update, in order', () => {
  test('the actor: the loss terms, the statistics per token, the variant own ones, the optimizer', async () => {
    const ppo = await flat(model.trainedVariables, (optimizer) => updateActor(model, optimizer, ROWS, SCHEDULE, options('ppo')));
    expect(Object.keys(ppo.metrics)).toEqual([...ACTOR_HEAD, 'actor/clipfrac', 'actor/dual_clipfrac', ...ACTOR_TAIL]);
    expect(ppo.optimizerSteps).toBe(2);
    const topr = await flat(model.trainedVariables, (optimizer) => updateActor(model, optimizer, ROWS, SCHEDULE, options('topr')));
    expect(Object.keys(topr.metrics)).toEqual([
      ...ACTOR_HEAD,
      'actor/topr_negative_total_clipfrac',
      'actor/topr_positive_samples',
      'actor/topr_negative_samples',
      ...ACTOR_TAIL,
    ]);
    expect(topr.metrics['actor/topr_positive_samples']).toBe(2);
    for (const value of Object.values({ ...ppo.metrics, ...topr.metrics })) expect(Number.isFinite(value)).toBe(true);
  });

  test('the critic and the supervised step', async () => {
    const values = perToken(() => 0.1);
    const returns = perToken((i) => i - 1);
    const vf = await flat(critic.trainedVariables, (optimizer) =>
      updateCritic(critic, optimizer, { ids, masks, values, returns }, SCHEDULE, { valueClip: 0.2, aggMode: 'token-mean' }),
    );
    expect(Object.keys(vf.metrics)).toEqual([
      'critic/vf_loss',
      'critic/vf_clipfrac',
      'critic/vpred_mean',
      'critic/grad_norm',
      'critic/lr',
      'critic/skipped_steps',
    ]);
    const sft = await flat(model.trainedVariables, (optimizer) => updateSupervised(model, optimizer, { ids, masks }, SCHEDULE));
    expect(Object.keys(sft.metrics)).toEqual(['sft/loss', 'sft/grad_norm', 'sft/lr', 'sft/optimizer_steps', 'sft/skipped_steps']);
    expect(sft.metrics['sft/loss']).toBeGreaterThan(0);
  });
});
