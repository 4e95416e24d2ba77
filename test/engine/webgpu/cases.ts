/**
 * Computations whose results must not depend on the backend, run the same way on webgpu (in a
 * child process: tfjs has one engine per process) and on cpu. Inputs come from a seeded Rng, so
 * both sides see the same numbers; outputs are read with `await data()` (webgpu cannot dataSync).
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { Rng } from '../../../src/engine/rng';
import { Qwen2Model } from '../../../src/model/qwen2';
import { tinyConfig } from '../../model/tiny';

type Case = (input: (shape: number[]) => tf.Tensor) => tf.Tensor | tf.Tensor[];

export const CASES: Record<string, Case> = {
  matMul: (x) => tf.matMul(x([5, 7]), x([7, 3])),
  matMulTransposeA: (x) => tf.matMul(x([7, 5]), x([7, 3]), true, false),
  matMulTransposeB: (x) => tf.matMul(x([5, 7]), x([3, 7]), false, true),
  matMulTransposeBoth: (x) => tf.matMul(x([7, 5]), x([3, 7]), true, true),
  batchMatMul: (x) => tf.matMul(x([2, 3, 4, 6]), x([2, 3, 6, 5])),
  batchMatMulTransposeB: (x) => tf.matMul(x([2, 3, 4, 6]), x([2, 3, 5, 6]), false, true),
  // more parts than one shader may bind (10 storage buffers on Dawn's defaults): gradients of a tied embedding meet it
  addNMany: (x) => tf.addN(Array.from({ length: 23 }, () => x([4, 5]))),
  softmax: (x) => tf.softmax(x([4, 9])),
  logSoftmax: (x) => tf.logSoftmax(x([4, 9])),
  gather: (x) => tf.gather(x([10, 4]), tf.tensor1d([3, 0, 9, 3, 7], 'int32')),
  rmsNorm: (x) => {
    const h = x([3, 8]);
    return tf.mul(h, tf.rsqrt(tf.add(tf.mean(tf.square(h), -1, true), 1e-6)));
  },
  concatSlice: (x) => {
    // the rotate-half step of rotary embeddings
    const h = x([2, 3, 8]);
    return tf.concat([tf.neg(tf.slice(h, [0, 0, 4], [-1, -1, 4])), tf.slice(h, [0, 0, 0], [-1, -1, 4])], -1);
  },
  twoLayerGradients: (x) => {
    const input = x([6, 5]);
    const w1 = x([5, 8]);
    const w2 = x([8, 4]);
    const targets = tf.oneHot(tf.tensor1d([0, 3, 1, 2, 3, 0], 'int32'), 4);
    const loss = (a: tf.Tensor, b: tf.Tensor) => {
      const hidden = tf.tanh(tf.matMul(input, a));
      const normed = tf.mul(hidden, tf.rsqrt(tf.add(tf.mean(tf.square(hidden), -1, true), 1e-6)));
      return tf.neg(tf.sum(tf.mul(tf.logSoftmax(tf.matMul(normed, b)), targets)));
    };
    const { value, grads } = tf.valueAndGrads(loss)([w1, w2]);
    return [value, ...grads];
  },
  qwen2Model: () => {
    // The whole policy: logits, and the gradients of a token log-prob loss for every weight.
    const model = Qwen2Model.random(tinyConfig(), { seed: 3 });
    try {
      const ids = tf.tensor2d([1, 5, 9, 33, 2, 30, 7, 7, 0, 12], [2, 5], 'int32');
      const targets = Int32Array.from([5, 9, 33, 2, 30, 7, 0, 12, 3, 4]);
      const logits = model.logits(model.forward(ids).hidden);
      const { value, grads } = tf.variableGrads(
        () => model.tokenStats(model.forward(ids).hidden, targets, { chunkRows: 4 }).logProbs.mean() as tf.Scalar,
        model.variables,
      );
      return [logits, value, ...model.variables.map((v) => grads[v.name]!)];
    } finally {
      model.dispose();
    }
  },
};

/** Runs every case on the active backend; returns each output's values. Leaves no tensors behind. */
export async function runCases(seed = 7): Promise<Record<string, number[][]>> {
  const results: Record<string, number[][]> = {};
  for (const [name, run] of Object.entries(CASES)) {
    const rng = Rng.fromSeed(seed, name);
    const before = tf.memory().numTensors;
    const outputs = tf.tidy(() => {
      const result = run((shape) =>
        tf.tensor(
          Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
          shape,
        ),
      );
      return Array.isArray(result) ? result : [result];
    });
    results[name] = await Promise.all(outputs.map(async (t) => Array.from(await t.data())));
    tf.dispose(outputs);
    if (tf.memory().numTensors !== before) throw new Error(`${name} leaked ${tf.memory().numTensors - before} tensors`);
  }
  return results;
}
