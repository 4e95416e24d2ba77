/**
 * Starting a tfjs backend. The wasm backend is the embedded default: its three .wasm files are
 * imported as files, so `bun build --compile` embeds them and the binary runs offline anywhere.
 * The webgpu and tensorflow backends arrive with the model engine (issue #3).
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import wasmPlain from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm' with { type: 'file' };
import wasmSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm' with { type: 'file' };
import wasmThreaded from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm' with { type: 'file' };
import { AgenticError } from '../errors';
import { installWasmKernels } from './kernels';
import { installMatMulGradient } from './kernels/matmul_grad';
import { useWasmThreads, wasmThreadsWanted } from './kernels/wasm_threads';

export type StartableBackend = 'wasm' | 'cpu';

let wasmPrepared = false;

// tfjs logs a banner ("install our node backend") on first use under Node/Bun; we choose our
// backends deliberately, so keep its console quiet.
tf.env().set('PROD', true);

/**
 * The emscripten glue adds process handlers that rethrow every error with a wasm stack; keep
 * the handlers that were there before the backend started, and drop the glue's.
 */
async function keepingProcessHandlers<T>(start: () => Promise<T>): Promise<T> {
  const events = ['uncaughtException', 'unhandledRejection'] as const;
  const before = Object.fromEntries(events.map((e) => [e, new Set(process.listeners(e))]));
  try {
    return await start();
  } finally {
    for (const event of events) {
      for (const listener of process.listeners(event)) {
        if (!before[event]!.has(listener)) process.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
  }
}

/**
 * Starts (or switches to) a backend. Every backend gets a matMul gradient that handles broadcast
 * batch axes; the wasm backend gets our faster kernels (./kernels), and its thread count is fixed
 * at its first start: `AGENTIC_WASM_THREADS`, else one thread per core.
 */
export async function startBackend(name: StartableBackend): Promise<void> {
  installMatMulGradient();
  if (name === 'wasm' && !wasmPrepared) {
    setWasmPaths({
      'tfjs-backend-wasm.wasm': wasmPlain,
      'tfjs-backend-wasm-simd.wasm': wasmSimd,
      'tfjs-backend-wasm-threaded-simd.wasm': wasmThreaded,
    });
    useWasmThreads(wasmThreadsWanted(), wasmThreaded);
    installWasmKernels();
    wasmPrepared = true;
  }
  const ok = await keepingProcessHandlers(() => tf.setBackend(name));
  if (!ok || tf.getBackend() !== name) throw new AgenticError(`the ${name} backend did not start`);
  await tf.ready();
}

/** Multiplies two known matrices on the current backend and checks the product. */
export async function checkMatMul(): Promise<void> {
  const before = tf.memory().numTensors;
  const a = tf.tensor2d([1, 2, 3, 4, 5, 6], [2, 3]);
  const b = tf.tensor2d([7, 8, 9, 10, 11, 12], [3, 2]);
  const product = tf.matMul(a, b);
  const values = Array.from(await product.data());
  tf.dispose([a, b, product]);
  const expected = [58, 64, 139, 154];
  if (values.some((v, i) => Math.abs(v - expected[i]!) > 1e-4)) {
    throw new AgenticError(`matMul on ${tf.getBackend()} gave [${values.join(', ')}], expected [${expected.join(', ')}]`);
  }
  if (tf.memory().numTensors !== before) throw new AgenticError('the check leaked tensors');
}

export const TFJS_VERSION = tf.version_core;
