import { describe, expect, test } from 'bun:test';
import * as tf from '@tensorflow/tfjs-core';
import { checkMatMul, startBackend } from '../../src/engine/backend';

describe('tfjs backends', () => {
  test('wasm (the embedded default) starts and multiplies correctly, leaving no tensors behind', async () => {
    const listeners = process.listeners('uncaughtException').length;
    await startBackend('wasm');
    expect(tf.getBackend()).toBe('wasm');
    // the emscripten glue's own crash handlers are removed again
    expect(process.listeners('uncaughtException').length).toBe(listeners);
    const before = tf.memory().numTensors;
    await checkMatMul();
    expect(tf.memory().numTensors).toBe(before);
  });

  test('cpu starts too, and the two agree', async () => {
    const product = async () => {
      const a = tf.tensor2d([0.5, -1, 2, 3, 4, -0.25], [2, 3]);
      const out = tf.matMul(a, a, false, true);
      const values = Array.from(await out.data());
      tf.dispose([a, out]);
      return values;
    };
    await startBackend('wasm');
    const onWasm = await product();
    await startBackend('cpu');
    expect(tf.getBackend()).toBe('cpu');
    const onCpu = await product();
    onWasm.forEach((v, i) => expect(v).toBeCloseTo(onCpu[i]!, 5));
  });
});
