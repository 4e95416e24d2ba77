import { describe, expect, test } from 'bun:test';
import * as tf from '@tensorflow/tfjs-core';
import { MathBackendCPU } from '@tensorflow/tfjs-backend-cpu';
import { checkMatMul, startBackend } from '../../src/engine/backend';
import { findTensorflowPackage, registerTensorflow } from '../../src/engine/tensorflow';
import { AgenticError } from '../../src/errors';
import { scratch, restoreBackendAfterFile } from '../helpers';

restoreBackendAfterFile();

describe('tfjs backends', () => {
  test('wasm (the embedded default) starts and multiplies correctly, leaving no tensors behind', async () => {
    const listeners = process.listeners('uncaughtException').length;
    const started = await startBackend('wasm');
    expect(started.name).toBe('wasm');
    // the start line says how many threads and why
    expect(started.detail).toMatch(/^(1 thread|\d+ threads): .+/);
    expect(tf.getBackend()).toBe('wasm');
    // the emscripten glue's own crash handlers are removed again
    expect(process.listeners('uncaughtException').length).toBe(listeners);
    const before = tf.memory().numTensors;
    await checkMatMul();
    expect(tf.memory().numTensors).toBe(before);
  });

  test('an allocation the wasm heap cannot make is one error saying so, not an address of 0', async () => {
    await startBackend('wasm');
    // what tfjs asks of it for every tensor; no heap of 32-bit addresses holds 4 GiB less 16 bytes
    const wasm = (tf.backend() as unknown as { wasm: { _malloc: (bytes: number) => number } }).wasm;
    expect(() => wasm._malloc(2 ** 32 - 16)).toThrow(/^the wasm heap is full \(\d+\.\d GiB of at most 4\): a tensor of 4096 MiB did not fit; /);
    await checkMatMul();
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

  test('the self-check rejects a backend that computes garbage', async () => {
    // a cpu backend whose matMul kernel returns zeros, as Dawn's Null adapter does
    tf.registerBackend('zeros', () => new MathBackendCPU());
    tf.registerKernel({
      kernelName: tf.BatchMatMul,
      backendName: 'zeros',
      kernelFunc: ({ backend }) => (backend as MathBackendCPU).makeTensorInfo([2, 2], 'float32', new Float32Array(4)),
    });
    try {
      await tf.setBackend('zeros');
      const check = checkMatMul();
      await expect(check).rejects.toThrow(AgenticError);
      await expect(check).rejects.toThrow('the zeros backend computes wrong results: matMul gave [0, 0, 0, 0], expected [58, 64, 139, 154]');
    } finally {
      await startBackend('cpu');
      tf.removeBackend('zeros');
    }
  });
});

describe('the tensorflow backend (tfjs-node), which agentic does not ship', () => {
  const oneLine = (error: unknown) => {
    expect(error).toBeInstanceOf(AgenticError);
    expect((error as Error).message).not.toContain('\n');
    return (error as Error).message;
  };

  test('not installed: one line saying how to install it, that it needs the network, and that wasm is the default', async () => {
    const cwd = scratch();
    expect(findTensorflowPackage(cwd)).toBeNull();
    const message = oneLine(await registerTensorflow(cwd).catch((e: unknown) => e));
    expect(message).toStartWith('the tensorflow backend needs @tensorflow/tfjs-node-gpu or @tensorflow/tfjs-node, and neither is installed: ');
    expect(message).toContain('bun add @tensorflow/tfjs-node');
    expect(message).toContain('downloads libtensorflow, so it needs network access');
    expect(message).toEndWith('or use backend=wasm, the embedded default');
    // and startBackend fails the same way, without switching to another backend
    await startBackend('cpu');
    await expect(startBackend('tensorflow')).rejects.toThrow('neither is installed');
    expect(tf.getBackend()).toBe('cpu');
  });

  test('installed but unbuilt (its install script was blocked): one line naming the package and the cause', async () => {
    // what `bun add @tensorflow/tfjs-node` leaves when the script that fetches libtensorflow did not run
    const cwd = scratch({
      'node_modules/@tensorflow/tfjs-node/package.json': JSON.stringify({ name: '@tensorflow/tfjs-node', version: '4.22.0', main: 'dist/index.js' }),
      'node_modules/@tensorflow/tfjs-node/dist/index.js': "require('../lib/napi-v8/tfjs_binding.node');\n",
    });
    expect(findTensorflowPackage(cwd)?.name).toBe('@tensorflow/tfjs-node');
    const message = oneLine(await registerTensorflow(cwd).catch((e: unknown) => e));
    expect(message).toMatch(/^@tensorflow\/tfjs-node is installed but did not load \(.*tfjs_binding\.node.*\); its install script must have run/);
    expect(message).toContain('bun pm trust');
  });
});
