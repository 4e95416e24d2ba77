import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { startBackend } from '../../src/engine/backend';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { lossAndGradients, type Gradients } from '../../src/model/optim';
import { parseTarget, type LoraSpec } from '../../src/model/lora';
import { addAdapters, newAdapters } from '../../src/model/lora_adapters';
import { attentionLimits } from '../../src/model/chunked';
import { Qwen2Model } from '../../src/model/qwen2';
import { tinyConfig } from './tiny';

beforeAll(async () => {
  await startBackend('wasm');
});

const DEFAULT_LIMIT = attentionLimits.scores;
afterEach(() => {
  attentionLimits.scores = DEFAULT_LIMIT;
});

function ids(seed: number, batch: number, length: number): Int32Array {
  const rng = Rng.fromSeed(seed, 'ids');
  return Int32Array.from({ length: batch * length }, () => rng.int(37));
}

/** The gradients of a token-stats loss (log-probs and entropy, as the policy loss uses them), by variable. */
async function gradients(model: Qwen2Model, recompute: boolean): Promise<Float32Array[]> {
  const inputs = tf.tensor2d(ids(1, 3, 7), [3, 7], 'int32');
  const targets = ids(2, 3, 7);
  const weights = tf.tensor2d(
    Float32Array.from({ length: 21 }, (_, i) => Math.sin(i)),
    [3, 7],
  );
  const { loss, gradients } = lossAndGradients(
    () =>
      tf.tidy(() => {
        const { hidden } = model.forward(inputs, { recompute });
        const { logProbs, entropy } = model.tokenStats(hidden, targets, { temperature: 0.8 });
        return tf.sum(tf.mul(logProbs.add(entropy.mul(0.1)), weights)) as tf.Scalar;
      }),
    model.trainedVariables,
  );
  const out = await Promise.all(model.trainedVariables.map(async (v) => (await (gradients as Gradients).get(v)!.data()) as Float32Array));
  tf.dispose([inputs, weights, loss, ...gradients.values()]);
  return out;
}

function withLora(model: Qwen2Model, target: string): Qwen2Model {
  const spec: LoraSpec = { rank: 3, alpha: 6, targets: parseTarget(target) };
  const adapters = newAdapters(
    spec,
    [...Array(model.config.num_hidden_layers)].map(() => ['q', 'v', 'down']),
    model,
    5,
  );
  addAdapters(model, spec, adapters);
  // B starts at zero, which would leave A without a gradient: give B values so both are checked
  for (const layer of adapters) for (const a of Object.values(layer)) a.b.assign(tf.randomNormal(a.b.shape, 0, 0.1, 'float32', 7));
  return model;
}

describe('gradient checkpointing (recompute each block in the backward pass)', () => {
  const cases: Array<[string, () => Qwen2Model]> = [
    ['full fine-tuning, Qwen2 with an untied head', () => Qwen2Model.random(tinyConfig(), { seed: 1 })],
    ['full fine-tuning, Qwen3 with tied embeddings', () => Qwen2Model.random(tinyConfig({ model_type: 'qwen3', tie_word_embeddings: true }), { seed: 2 })],
    ['LoRA adapters on a frozen Llama', () => withLora(Qwen2Model.random(tinyConfig({ model_type: 'llama' }), { seed: 3 }), 'q_proj,v_proj,down_proj')],
  ];
  for (const [name, build] of cases) {
    test(`${name}: the same gradients as without, bit for bit`, async () => {
      const model = build();
      const plain = await gradients(model, false);
      const recomputed = await gradients(model, true);
      expect(plain.length).toBe(model.trainedVariables.length);
      expect(plain.every((g) => g.some((v) => v !== 0))).toBe(true);
      plain.forEach((g, i) => expect(Array.from(recomputed[i]!)).toEqual(Array.from(g)));
      model.dispose();
    });
  }

  test('with blocked attention (long sequences) too, and the tensor count stays flat', async () => {
    attentionLimits.scores = 3 * 4 * 7 * 2;
    const model = Qwen2Model.random(tinyConfig(), { seed: 4 });
    const plain = await gradients(model, false);
    const before = tf.memory().numTensors;
    const recomputed = await gradients(model, true);
    await gradients(model, true);
    expect(tf.memory().numTensors).toBe(before);
    plain.forEach((g, i) => expect(Array.from(recomputed[i]!)).toEqual(Array.from(g)));
    model.dispose();
  });

  test('a pass with a KV cache cannot recompute', () => {
    const model = Qwen2Model.random(tinyConfig(), { seed: 5 });
    const t = tf.tensor2d(ids(3, 1, 2), [1, 2], 'int32');
    const { hidden, present } = model.forward(t);
    expect(() => model.forward(t, { past: present, recompute: true })).toThrow('recompute is for training passes');
    tf.dispose([t, hidden, ...present.flatMap((kv) => [kv.k, kv.v])]);
    model.dispose();
  });
});
