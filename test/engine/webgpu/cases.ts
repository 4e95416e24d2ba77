/**
 * Computations whose results must not depend on the backend, run the same way on webgpu (in a
 * child process: tfjs has one engine per process) and on cpu. Inputs come from a seeded Rng, so
 * both sides see the same numbers; outputs are read with `await data()` (webgpu cannot dataSync).
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { Rng } from '../../../src/engine/rng';
import { adaptedProjections, parseTarget, type LoraSpec } from '../../../src/model/lora';
import { addAdapters, newAdapters } from '../../../src/model/lora_adapters';
import { AdamW } from '../../../src/model/optim';
import { Qwen2Model } from '../../../src/model/qwen2';
import { tinyConfig } from '../../model/tiny';
import { supervisedStep } from './training';

type Input = (shape: number[]) => tf.Tensor;
type Case = (input: Input) => tf.Tensor | tf.Tensor[] | Promise<tf.Tensor[]>;

const IDS = [1, 5, 9, 33, 2, 30, 7, 7, 0, 12];
const TARGETS = Int32Array.from([5, 9, 33, 2, 30, 7, 0, 12, 3, 4]);

/** The gradients of the policy's mean token log-prob for every trained variable, with the loss first. */
function tokenLogProbGradients(model: Qwen2Model, recompute: boolean): tf.Tensor[] {
  const ids = tf.tensor2d(IDS, [2, 5], 'int32');
  const { value, grads } = tf.variableGrads(
    () => model.tokenStats(model.forward(ids, { recompute }).hidden, TARGETS, { chunkRows: 4 }).logProbs.mean() as tf.Scalar,
    model.trainedVariables,
  );
  return [value, ...model.trainedVariables.map((v) => grads[v.name]!)];
}

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
      const logits = model.logits(model.forward(tf.tensor2d(IDS, [2, 5], 'int32')).hidden);
      return [logits, ...tokenLogProbGradients(model, false)];
    } finally {
      model.dispose();
    }
  },
  qwen2ModelRecomputed: () => {
    // gradient checkpointing: the same loss and model as qwen2Model, each block run again in the backward pass
    const model = Qwen2Model.random(tinyConfig(), { seed: 3 });
    try {
      return tokenLogProbGradients(model, true);
    } finally {
      model.dispose();
    }
  },
  loraGradients: (x) => {
    // adapters on every projection of a frozen model; B drawn rather than zero, else A would get no gradient
    const model = Qwen2Model.random(tinyConfig(), { seed: 5 });
    try {
      const spec: LoraSpec = { rank: 2, alpha: 4, targets: parseTarget('all-linear') };
      const adapters = newAdapters(spec, adaptedProjections(spec, model.config.num_hidden_layers), model, 6);
      addAdapters(model, spec, adapters);
      for (const layer of adapters) for (const adapter of Object.values(layer)) adapter.b.assign(tf.mul(x(adapter.b.shape), 0.1));
      return tokenLogProbGradients(model, false);
    } finally {
      model.dispose();
    }
  },
  adamWSteps: async () => {
    // optimizer steps as the trainer takes them (clipped by global norm, decoupled weight decay): the weights and moments after
    const model = Qwen2Model.random(tinyConfig(), { seed: 4 });
    const optimizer = new AdamW(model.trainedVariables, { weightDecay: 0.1 });
    try {
      const gradNorms = [];
      for (let step = 0; step < 3; step++) gradNorms.push(await supervisedStep(model, optimizer, step));
      const { moments } = await optimizer.state();
      return [
        tf.tensor1d(gradNorms),
        ...model.trainedVariables.map((v) => v.clone()),
        ...moments.flatMap(({ m, v, shape }) => [tf.tensor(m, shape), tf.tensor(v, shape)]),
      ];
    } finally {
      optimizer.dispose();
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
    // a scope of the engine's own rather than tf.tidy, which cannot wait: a training step reads its gradient norm back
    tf.engine().startScope();
    let outputs: tf.Tensor[] = [];
    try {
      const result = await run((shape) =>
        tf.tensor(
          Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
          shape,
        ),
      );
      outputs = Array.isArray(result) ? result : [result];
    } finally {
      tf.engine().endScope(outputs);
    }
    results[name] = await Promise.all(outputs.map(async (t) => Array.from(await t.data())));
    tf.dispose(outputs);
    if (tf.memory().numTensors !== before) throw new Error(`${name} leaked ${tf.memory().numTensors - before} tensors`);
  }
  return results;
}
