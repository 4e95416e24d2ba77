/**
 * The training utilities together, on the default wasm backend: the tiny model memorises a few
 * sequences with AdamW, and accumulating micro-batches gives the gradients of the whole batch.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { startBackend } from '../../src/engine/backend';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { AdamW, clipByGlobalNorm, disposeGradients, GradientAccumulator, learningRateAt, lossAndGradients } from '../../src/model/optim';
import { Qwen2Model } from '../../src/model/qwen2';
import { tinyConfig } from './tiny';

beforeAll(async () => {
  await startBackend('wasm');
});

function batchOf(rows: number[][]) {
  const length = rows[0]!.length - 1;
  const ids = tf.tensor2d(Int32Array.from(rows.flatMap((r) => r.slice(0, -1))), [rows.length, length], 'int32');
  const targets = Int32Array.from(rows.flatMap((r) => r.slice(1)));
  return { ids, targets };
}

const meanNll = (model: Qwen2Model, ids: tf.Tensor2D, targets: Int32Array) => () =>
  tf.tidy(() => model.tokenStats(model.forward(ids).hidden, targets).logProbs.mean().neg() as tf.Scalar);

describe('training the tiny model', () => {
  test('AdamW with warmup, cosine decay and clipping memorises four sequences', async () => {
    const rng = Rng.fromSeed(3, 'memorise');
    const rows = Array.from({ length: 4 }, () => Array.from({ length: 9 }, () => rng.int(37)));
    const model = Qwen2Model.random(tinyConfig(), { seed: 4 });
    const optimizer = new AdamW(model.variables, { weightDecay: 0.01 });
    const { ids, targets } = batchOf(rows);
    const before = tf.memory().numTensors;
    const losses: number[] = [];
    for (let step = 0; step < 60; step++) {
      const { loss, gradients } = lossAndGradients(meanNll(model, ids, targets), model.variables);
      const clipped = await clipByGlobalNorm(gradients, 1);
      optimizer.apply(clipped.gradients, learningRateAt(step, { type: 'cosine', peak: 3e-2, totalSteps: 60, warmupSteps: 5 }));
      losses.push((await loss.data())[0]!);
      loss.dispose();
      disposeGradients(gradients);
      disposeGradients(clipped.gradients);
    }
    expect(tf.memory().numTensors).toBe(before);
    expect(losses[0]!).toBeGreaterThan(3); // about ln 37 at the start
    expect(losses.at(-1)!).toBeLessThan(0.1 * losses[0]!);
    tf.dispose(ids);
    optimizer.dispose();
    model.dispose();
    // 60 optimizer steps: about a second alone, several on a loaded machine; no speed is asserted
  }, 30_000);

  test('two accumulated micro-batches give the gradients of the batch they split', async () => {
    const rng = Rng.fromSeed(5, 'accumulate');
    const rows = Array.from({ length: 2 }, () => Array.from({ length: 7 }, () => rng.int(37)));
    const model = Qwen2Model.random(tinyConfig(), { seed: 6 });
    const whole = batchOf(rows);
    const full = lossAndGradients(meanNll(model, whole.ids, whole.targets), model.variables);
    const accumulator = new GradientAccumulator();
    for (const row of rows) {
      const part = batchOf([row]);
      const { loss, gradients } = lossAndGradients(meanNll(model, part.ids, part.targets), model.variables);
      accumulator.add(gradients);
      disposeGradients(gradients);
      tf.dispose([loss, part.ids]);
    }
    const mean = accumulator.take();
    for (const variable of model.variables) {
      const a = await full.gradients.get(variable)!.data();
      const b = await mean.get(variable)!.data();
      const scale = Math.max(1e-6, ...Array.from(a, Math.abs));
      a.forEach((v, i) => expect(Math.abs(v - b[i]!) / scale).toBeLessThan(1e-4));
    }
    disposeGradients(full.gradients);
    disposeGradients(mean);
    tf.dispose([full.loss, whole.ids]);
    model.dispose();
  });
});
