/**
 * The host kernels (causal attention, token stats, RMSNorm and the SwiGLU gate on wasm with a
 * system BLAS, src/engine/kernels/) give what tfjs's ops give: log-probs, entropies and every
 * gradient, over blocks of queries (more than 64 positions), a left-padded row that sees no key at
 * first, per-token temperatures, chunks of rows, a frozen embedding, norms whose weights are not
 * ones, and Qwen3's q/k head norms.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { startBackend } from '../../src/engine/backend';
import { hostKernels } from '../../src/engine/kernels/attention';
import { blasInUse } from '../../src/engine/kernels/matmul';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { Qwen2Model } from '../../src/model/qwen2';
import { ROOT } from '../helpers';
import { tinyConfig } from '../model/tiny';

await startBackend('wasm');

afterEach(() => {
  hostKernels.enabled = true;
});

const [B, T] = [3, 150];

describe.skipIf(!blasInUse())('host kernels on wasm with a system BLAS', () => {
  for (const [frozen, modelType] of [
    [false, 'qwen2'],
    [true, 'qwen2'],
    [false, 'qwen3'],
  ] as const) {
    test(`agree with tfjs's ops, gradients included (${modelType}${frozen ? ', frozen embedding' : ''})`, () => {
      const model = Qwen2Model.random(tinyConfig({ max_position_embeddings: 256, tie_word_embeddings: true, model_type: modelType }), { seed: 5 });
      if (frozen) model.embed.trainable = false;
      const norms = [model.finalNorm, ...model.blocks.flatMap((b) => [b.inputNorm, b.postNorm, ...(b.qkNorm ? [b.qkNorm.q, b.qkNorm.k] : [])])];
      norms.forEach((w, i) => tf.tidy(() => w.assign(w.add(tf.randomNormal(w.shape, 0, 0.3, 'float32', i)))));
      if (modelType === 'qwen3') expect(model.blocks[0]!.qkNorm).not.toBeNull();
      const rng = Rng.fromSeed(2, 'host-kernels');
      const ids = tf.tensor2d(
        Int32Array.from({ length: B * T }, () => rng.int(37)),
        [B, T],
        'int32',
      );
      const targets = Int32Array.from({ length: B * T }, () => rng.int(37));
      const temperature = Float32Array.from({ length: B * T }, () => 0.5 + rng.int(100) / 100);
      // the second row is padded on the left by four positions
      const keyMask = Uint8Array.from({ length: B * T }, (_, i) => (i >= T && i < T + 4 ? 0 : 1));
      const run = (host: boolean) => {
        hostKernels.enabled = host;
        const trained = model.variables.filter((v) => v.trainable);
        const { value, grads } = tf.variableGrads(
          () =>
            tf.tidy(() => {
              const { hidden } = model.forward(ids, { keyMask });
              const { logProbs, entropy } = model.tokenStats(hidden, targets, { temperature, chunkRows: 100 });
              return logProbs
                .mul(tf.tensor2d(keyMask, [B, T], 'float32'))
                .sum()
                .add(entropy.mul(0.3).sum()) as tf.Scalar;
            }),
          trained,
        );
        const out = { loss: value.dataSync()[0]!, grads: trained.map((v) => grads[v.name]!.dataSync() as Float32Array) };
        tf.dispose([value, ...Object.values(grads)]);
        return out;
      };
      const before = tf.memory().numTensors;
      const [ops, host] = [run(false), run(true)];
      expect(tf.memory().numTensors).toBe(before);
      expect(Math.abs(host.loss - ops.loss) / Math.abs(ops.loss)).toBeLessThan(1e-5);
      ops.grads.forEach((g, i) => {
        const scale = Math.max(1e-6, ...Array.from(g, Math.abs));
        let worst = 0;
        g.forEach((x, j) => (worst = Math.max(worst, Math.abs(x - host.grads[i]![j]!) / scale)));
        expect(worst).toBeLessThan(1e-4);
      });
      ids.dispose();
      model.dispose();
    });
  }
});

describe.skipIf(!blasInUse())('host kernels on the single-threaded build', () => {
  test('token stats whose chunk grows the heap read the temperatures after it grew (views taken before are detached)', async () => {
    // a fresh process on one thread: its heap is not shared, so growing it detaches every view;
    // the first chunk's [rows, vocab] logits (64 x 200,000 floats) cannot fit the starting heap
    const script = `
      import { startBackend } from './src/engine/backend';
      import { hostTokenStats } from './src/engine/kernels/token_stats';
      import { tf } from './src/engine/tf';
      await startBackend('wasm');
      const [rows, vocab, size] = [64, 200_000, 8];
      const heapBefore = (tf.backend() as any).wasm.HEAPU8.buffer.byteLength;
      const hidden = tf.randomNormal([rows, size], 0, 1, 'float32', 1) as tf.Tensor2D;
      const embedding = tf.randomNormal([vocab, size], 0, 1, 'float32', 2) as tf.Tensor2D;
      const targets = Int32Array.from({ length: rows }, (_, i) => i * 7);
      const temperature = Float32Array.from({ length: rows }, (_, i) => 0.5 + i / rows);
      const stats = hostTokenStats(hidden, embedding, targets, { temperature, chunkRows: rows, embeddingGradient: false });
      const values = Array.from(await stats.data());
      const heapAfter = (tf.backend() as any).wasm.HEAPU8.buffer.byteLength;
      console.log(JSON.stringify({ grew: heapAfter > heapBefore, finite: values.every(Number.isFinite), values: values.length }));`;
    const child = Bun.spawn([process.execPath, '-e', script], {
      cwd: ROOT,
      env: { ...process.env, AGENTIC_WASM_THREADS: '1' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ grew: true, finite: true, values: 128 });
  });
});
