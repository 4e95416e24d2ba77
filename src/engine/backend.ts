/**
 * Starting a tfjs backend. The wasm backend is the embedded default: its three .wasm files are
 * imported as files, so `bun build --compile` embeds them and the binary runs offline anywhere.
 * cpu is tfjs's plain JavaScript backend; webgpu (./webgpu.ts) and tensorflow (./tensorflow.ts)
 * are loaded only when asked for. A backend that fails to start is an error, never a silent
 * switch to another, and every start ends with a matMul whose answer is known.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import wasmPlain from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm' with { type: 'file' };
import wasmSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm' with { type: 'file' };
import wasmThreaded from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm' with { type: 'file' };
import type { BackendName, WebGpuAdapterChoice } from './names';
import type { AdapterDescription } from './webgpu';
import { AgenticError } from '../errors';
import { describeBlas, findBlas } from './blas';
import { installWasmKernels } from './kernels';
import { shareBlasWithAnotherThread, useBlas } from './kernels/matmul';
import { installMatMulGradient } from './kernels/matmul_grad';
import { describeSpin, spinChoice } from './kernels/spin_policy';
import { useWasmThreads, wasmThreadsWanted, type WasmThreadChoice } from './kernels/wasm_threads';

export type { BackendName } from './names';

export interface BackendOptions {
  /** How webgpu picks its adapter (the `webgpu_adapter` key); auto when absent. */
  webgpuAdapter?: WebGpuAdapterChoice;
  /** wasm threads when it is the first start (AGENTIC_WASM_THREADS still wins when set); absent: one per available core. */
  wasmThreads?: WasmThreadChoice;
  /** wasm threads whatever AGENTIC_WASM_THREADS says (the rollout worker of an asynchronous run takes one). */
  wasmThreadsExactly?: WasmThreadChoice;
  /** Who computes wasm's matmuls (the `blas` key; AGENTIC_BLAS wins when set): auto when absent. */
  blas?: string;
}

export interface StartedBackend {
  name: BackendName;
  /** What computes, when there is a choice: the webgpu adapter, the tensorflow package, wasm's threads. */
  detail?: string;
  /** wasm: who computes the matmuls (a system BLAS, or XNNPACK). */
  matmuls?: string;
  /** webgpu: the adapter, with its features and limits. */
  adapter?: AdapterDescription;
}

/** What the wasm backend was started with (its thread count and matmuls are fixed by the first start). */
let wasmDetail: string | undefined;
let wasmMatmuls: string | undefined;

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

/** What running without a system BLAS costs, measured on the default run (docs/engine.md, "The main-job benchmark"). */
const WITHOUT_BLAS = 'no system BLAS found: the default run takes about twice as long as with OpenBLAS; apt-get install libopenblas0-pthread';

/**
 * Routes wasm's matmuls to the system BLAS the choice names (./blas.ts), or leaves them to
 * XNNPACK; says which. BLAS gets as many threads as the wasm pool: the two take turns (one op at a
 * time), so neither oversubscribes the cores. The rollout worker of an asynchronous run
 * (wasmThreadsExactly) leaves the library's thread count, which is per process, to the trainer's
 * start, and marks the library shared (no kernel then changes the count for a moment).
 */
function chooseMatmuls(options: BackendOptions, threads: number): { description: string; onBlas: boolean } {
  const choice = process.env.AGENTIC_BLAS ?? options.blas ?? 'auto';
  const library = findBlas(choice);
  if (library && !options.wasmThreadsExactly) library.setThreads(threads);
  // the rollout worker's thread shares the library with the trainer's for as long as it lives
  if (library && options.wasmThreadsExactly) shareBlasWithAnotherThread();
  useBlas(library);
  if (library) return { description: `${describeBlas(library)} (blas=${choice})`, onBlas: true };
  return { description: choice === 'none' ? 'XNNPACK (blas=none)' : `XNNPACK (${WITHOUT_BLAS})`, onBlas: false };
}

/** Makes the named backend available to tf.setBackend; returns what it runs on. */
async function register(name: BackendName, options: BackendOptions): Promise<{ detail?: string; adapter?: AdapterDescription }> {
  switch (name) {
    case 'wasm':
      // Our faster kernels (./kernels) replace tfjs's; the thread count is fixed at the first
      // start: AGENTIC_WASM_THREADS, else the caller's, else one thread per available core.
      if (wasmDetail === undefined) {
        setWasmPaths({
          'tfjs-backend-wasm.wasm': wasmPlain,
          'tfjs-backend-wasm-simd.wasm': wasmSimd,
          'tfjs-backend-wasm-threaded-simd.wasm': wasmThreaded,
        });
        const choice = options.wasmThreadsExactly ?? wasmThreadsWanted(process.env, options.wasmThreads);
        const matmuls = chooseMatmuls(options, choice.threads);
        const spin = spinChoice(matmuls.onBlas);
        useWasmThreads(choice.threads, wasmThreaded, spin);
        installWasmKernels();
        wasmMatmuls = matmuls.description;
        wasmDetail = choice.threads === 1 ? `1 thread: ${choice.why}` : `${choice.threads} threads: ${choice.why}; ${describeSpin(spin)}`;
      }
      return { detail: wasmDetail };
    case 'cpu':
      return {};
    case 'webgpu': {
      const webgpu = await import('./webgpu');
      const adapter = await webgpu.registerWebGpu(options.webgpuAdapter ?? 'auto');
      return { detail: webgpu.formatAdapter(adapter), adapter };
    }
    case 'tensorflow': {
      const { registerTensorflow } = await import('./tensorflow');
      return { detail: await registerTensorflow() };
    }
  }
}

/**
 * Starts `name` as tfjs's backend and checks that it computes. All roles of a run share it:
 * tfjs has one active backend per process. Every backend gets a matMul gradient that handles
 * broadcast batch axes (tfjs 4.22's throws for them).
 */
export async function startBackend(name: BackendName, options: BackendOptions = {}): Promise<StartedBackend> {
  installMatMulGradient();
  const { detail, adapter } = await register(name, options);
  if (!tf.findBackendFactory(name)) {
    // the bundler dropped a registration, or the package registered under another name
    throw new AgenticError(`the ${name} backend is not registered in this build of tfjs`);
  }
  const ok = await keepingProcessHandlers(() => tf.setBackend(name));
  if (!ok || tf.getBackend() !== name) throw new AgenticError(`the ${name} backend did not start`);
  await tf.ready();
  if (name === 'wasm') refuseFailedAllocations();
  await checkMatMul();
  const started: StartedBackend = detail === undefined ? { name } : { name, detail };
  if (name === 'wasm' && wasmMatmuls) started.matmuls = wasmMatmuls;
  if (adapter) started.adapter = adapter;
  return started;
}

let allocationsChecked = false;

/**
 * The wasm heap ends at 4 GiB (32-bit addresses). There emscripten's malloc returns 0, which tfjs
 * takes for a tensor's address: it writes over the heap's start, and the run computes garbage or
 * hangs. A failed allocation is an error instead, one line saying what to shrink.
 */
function refuseFailedAllocations(): void {
  if (allocationsChecked) return;
  const wasm = (tf.backend() as unknown as { wasm: { _malloc: (bytes: number) => number; _free: (address: number) => void; HEAPU8: Uint8Array } }).wasm;
  // emscripten's export is a stub that puts the real function in its place on its first call
  wasm._free(wasm._malloc(16));
  const malloc = wasm._malloc;
  wasm._malloc = (bytes: number) => {
    const address = malloc(bytes);
    if (address === 0 && bytes > 0) {
      throw new AgenticError(
        `the wasm heap is full (${(wasm.HEAPU8.buffer.byteLength / 1024 ** 3).toFixed(1)} GiB of at most 4): a tensor of ${(bytes / 2 ** 20).toFixed(0)} MiB did not fit; train on fewer tokens at once, recompute activations (gradient checkpointing), use LoRA, or backend=webgpu`,
      );
    }
    return address;
  };
  allocationsChecked = true;
}

/** `wasm (2 threads: ...; matmuls: OpenBLAS 0.3.21 (...))`: a started backend in one phrase. */
export function describeBackend(started: StartedBackend): string {
  const parts = [started.detail, started.matmuls ? `matmuls: ${started.matmuls}` : undefined].filter(Boolean);
  return parts.length ? `${started.name} (${parts.join('; ')})` : started.name;
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
  if (values.length !== expected.length || values.some((v, i) => !(Math.abs(v - expected[i]!) <= 1e-4))) {
    throw new AgenticError(`the ${tf.getBackend()} backend computes wrong results: matMul gave [${values.join(', ')}], expected [${expected.join(', ')}]`);
  }
  if (tf.memory().numTensors !== before) throw new AgenticError('the check leaked tensors');
}

export const TFJS_VERSION = tf.version_core;
