/**
 * The model on the embedded default backend: wasm (with our rerouted matMuls, segment sums and
 * threads) must agree with the cpu reference on logits, gradients and generated tokens.
 */
import { describe, expect, test } from 'bun:test';
import { startBackend } from '../../src/engine/backend';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { generate } from '../../src/model/generate';
import { Qwen2Model } from '../../src/model/qwen2';
import { GREEDY } from '../../src/model/sampling';
import { tinyConfig } from './tiny';

async function lossAndGrads(model: Qwen2Model, ids: Int32Array, targets: Int32Array) {
  const t = tf.tensor2d(ids, [2, 6], 'int32');
  const { value, grads } = tf.variableGrads(
    () =>
      tf.tidy(() => {
        const { hidden } = model.forward(t);
        const { logProbs, entropy } = model.tokenStats(hidden, targets, { chunkRows: 5 });
        return logProbs.mean().add(entropy.mean().mul(0.1)) as tf.Scalar;
      }),
    model.variables,
  );
  const loss = (await value.data())[0]!;
  const gradients = await Promise.all(model.variables.map(async (v) => Array.from(await grads[v.name]!.data())));
  tf.dispose([t, value, ...Object.values(grads)]);
  return { loss, gradients };
}

describe('the model on wasm agrees with cpu', () => {
  test('loss, every gradient, and greedy generation', async () => {
    const rng = Rng.fromSeed(1, 'wasm-test');
    const ids = Int32Array.from({ length: 12 }, () => rng.int(37));
    const targets = Int32Array.from({ length: 12 }, () => rng.int(37));
    const results = [];
    const tokens = [];
    for (const backend of ['cpu', 'wasm'] as const) {
      await startBackend(backend);
      const model = Qwen2Model.random(tinyConfig(), { seed: 2 });
      const before = tf.memory().numTensors;
      results.push(await lossAndGrads(model, ids, targets));
      const [out] = await generate(model, [{ id: 0, promptIds: Array.from(ids.subarray(0, 5)), sampling: GREEDY, maxNewTokens: 8, rng }]);
      tokens.push(out!.tokens);
      expect(tf.memory().numTensors).toBe(before);
      model.dispose();
    }
    const [cpu, wasm] = results;
    expect(wasm!.loss).toBeCloseTo(cpu!.loss, 4);
    cpu!.gradients.forEach((g, i) => {
      const scale = Math.max(1e-3, ...g.map(Math.abs));
      const worst = Math.max(...g.map((v, j) => Math.abs(v - wasm!.gradients[i]![j]!)));
      expect(worst / scale).toBeLessThan(1e-4);
    });
    expect(tokens[1]).toEqual(tokens[0]!);
  });
});
