/**
 * The multi-threaded wasm backend under Bun, also inside `bun build --compile`.
 *
 * tfjs never picks its threaded-SIMD build here, for three reasons this module works around:
 * - its feature flag answers "no threads" whenever it sees Node (Bun counts as Node);
 * - its loader hands emscripten `blob:` URLs for the pthread worker script and for the script
 *   each worker evaluates, and Bun's worker_threads refuse `blob:` URLs;
 * - XNNPACK's thread pool defaults to half the logical cores (one thread on two cores).
 * So we register our own factory for the 'wasm' backend: it writes the two scripts to real files
 * in a temporary folder, starts the threaded module with them, and asks for an explicit thread
 * count. This reaches into tfjs-backend-wasm 4.22.0's internals; package.json pins that version.
 *
 * The emscripten glue is embedded as text and evaluated here, on the main thread as in each
 * worker: the bundler of `bun build --compile` keeps one copy per file, so importing it as a
 * module as well would leave no original text for the workers.
 */
import * as tf from '@tensorflow/tfjs-core';
import { BackendWasm, setThreadsCount } from '@tensorflow/tfjs-backend-wasm';
import type threadedFactoryType from '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js';
import { wasmWorkerContents } from '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.worker.js';
import threadedGlue from '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js' with { type: 'text' };
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../errors';
import { availableCores } from '../cores';
import { cwrapOf } from './wasm_heap';
import type { SpinChoice } from './spin_policy';
import { adjustableSpinWasm, SPIN_BOUND_ADDRESS } from './wasm_spin';

/** tfjs-backend-wasm registers 'wasm' with this priority; ours keeps it. */
const WASM_PRIORITY = 2;
const THREADS_ENV = 'AGENTIC_WASM_THREADS';
/** XNNPACK's pool in this build takes at most 8 threads. */
const MAX_THREADS = 8;

export interface WasmThreadChoice {
  threads: number;
  /** Why that many, for the run's start line and `agentic doctor`. */
  why: string;
}

/**
 * Threads for the wasm backend: `AGENTIC_WASM_THREADS` when set (1 = the single-threaded SIMD
 * build), otherwise `fallback` when given (an asynchronous run's trainer leaves a core to its
 * rollout worker), otherwise one per core this process may use (cores.ts); at most 8.
 */
export function wasmThreadsWanted(env: Record<string, string | undefined> = process.env, fallback?: WasmThreadChoice): WasmThreadChoice {
  const raw = env[THREADS_ENV];
  if (raw === undefined || raw.trim() === '') {
    if (fallback) return fallback;
    const cores = availableCores();
    return cores.count > MAX_THREADS
      ? { threads: MAX_THREADS, why: `XNNPACK's most (${cores.count} cores: ${cores.why})` }
      : { threads: cores.count, why: `one per available core (${cores.why})` };
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_THREADS) {
    throw new ConfigError(`${THREADS_ENV}=${raw} is not a thread count: give a whole number from 1 to ${MAX_THREADS}`);
  }
  return { threads: n, why: `${THREADS_ENV}=${n}` };
}

/** Writes `data` to `dir/name` unless an identical file is there; atomic for concurrent starts. */
function writeOnce(dir: string, name: string, data: string | Uint8Array): string {
  const path = join(dir, name);
  if (existsSync(path) && Buffer.from(readFileSync(path)).equals(Buffer.from(data))) return path;
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, data);
  renameSync(partial, path);
  return path;
}

/** The glue's source text (a `type: 'text'` import, whatever TypeScript infers from its path). */
function glueText(): string {
  const glue = threadedGlue as unknown as string;
  if (typeof glue !== 'string') throw new Error('the threaded wasm glue was not embedded as text');
  return glue;
}

/**
 * The worker script and the glue it evaluates, as real files (Bun's workers take no blob: URLs),
 * and the module with its spin bound read from memory (wasm_spin.ts).
 */
function moduleFiles(wasmFile: string): { worker: string; glue: string; wasm: string } {
  // The worker's source lives in a template literal whose `\n` escapes became newlines; restore
  // them so its string literals parse (tfjs's browser loader does the same).
  const worker = wasmWorkerContents.replace(/\n/g, '\\n');
  const glue = glueText();
  const key = Bun.hash(worker + glue).toString(36);
  const dir = join(os.tmpdir(), `agentic-tfjs-wasm-${tf.version_core}-${key}`);
  mkdirSync(dir, { recursive: true });
  return {
    worker: writeOnce(dir, 'tfjs-backend-wasm-threaded-simd.worker.js', worker),
    glue: writeOnce(dir, 'tfjs-backend-wasm-threaded-simd.js', glue),
    wasm: writeOnce(dir, 'tfjs-backend-wasm-threaded-simd.adjustable-spin.wasm', adjustableSpinWasm(wasmFile)),
  };
}

type Factory = typeof threadedFactoryType;
type WasmModule = Awaited<ReturnType<Factory>>;

const POOL = 'var pthreadPoolSize=8;';

/**
 * The glue's module factory for `threads` threads, evaluated from its text as CommonJS:
 * - its `require('os')` reports twice as many cores: the module caps XNNPACK's pool at half the
 *   cores it sees (assuming two hyperthreads per core), reading them once as it instantiates;
 * - it preloads `threads` workers rather than 8 (the main thread is one of the pool's threads,
 *   so one is spare). Workers cannot start later while the main thread waits on them.
 */
function threadedFactory(threads: number): Factory {
  const realRequire = createRequire(import.meta.url);
  const fakeOs = { ...os, cpus: () => Array.from({ length: 2 * threads }, () => os.cpus()[0]!) };
  const require = (name: string) => (name === 'os' ? fakeOs : realRequire(name));
  const source = glueText();
  if (!source.includes(POOL)) throw new Error('the threaded wasm glue is not the one this code was written for (tfjs-backend-wasm 4.22.0)');
  const module = { exports: {} as Factory };
  new Function('module', 'exports', 'require', '__filename', '__dirname', source.replace(POOL, `var pthreadPoolSize=${threads};`))(
    module,
    module.exports,
    require,
    undefined,
    undefined,
  );
  return module.exports;
}

/**
 * Sets the pool's shared spin bound (spin_policy.ts). Called before the pool starts: the word must
 * still be 0, or something else of the module uses it.
 */
function setPoolSpin(wasm: WasmModule, spin: SpinChoice): void {
  const heap = new Int32Array((wasm as unknown as { HEAP32: Int32Array }).HEAP32.buffer);
  const index = SPIN_BOUND_ADDRESS / 4;
  if (Atomics.load(heap, index) !== 0) throw new Error(`the wasm module uses the word at ${SPIN_BOUND_ADDRESS} that holds its spin bound`);
  Atomics.store(heap, index, spin.polls);
}

/** Starts the threaded module and builds a BackendWasm on it, as tfjs's own init would. */
async function startThreaded(wasmFile: string, threads: number, spin: SpinChoice): Promise<BackendWasm> {
  const files = moduleFiles(wasmFile);
  const wasm: WasmModule = await new Promise((resolve, reject) => {
    threadedFactory(threads)({
      locateFile: (path: string) => (path.endsWith('.worker.js') ? files.worker : path.endsWith('.wasm') ? files.wasm : path),
      mainScriptUrlOrBlob: files.glue,
      onAbort: (message: string) => reject(new Error(`the threaded wasm module aborted: ${message}`)),
    }).then(resolve, reject);
  });
  const cwrap = cwrapOf(wasm);
  wasm.tfjs = {
    init: cwrap('init', null, []),
    initWithThreadsCount: cwrap('init_with_threads_count', null, ['number']),
    getThreadsCount: cwrap('get_threads_count', 'number', []),
    registerTensor: cwrap('register_tensor', null, ['number', 'number', 'number']),
    disposeData: cwrap('dispose_data', null, ['number']),
    dispose: cwrap('dispose', null, []),
  } as WasmModule['tfjs'];
  setPoolSpin(wasm, spin);
  setThreadsCount(threads);
  const backend = new BackendWasm(wasm);
  // The pool's threads wait for work forever; they must not keep the process alive.
  const pthreads = (wasm as unknown as { PThread: { runningWorkers: { unref(): void }[]; unusedWorkers: { unref(): void }[] } }).PThread;
  for (const worker of [...pthreads.runningWorkers, ...pthreads.unusedWorkers]) worker.unref();
  return backend;
}

/**
 * Makes the next start of the 'wasm' backend use `threads` threads (the threaded-SIMD build) when
 * `threads` > 1; with 1 it keeps tfjs's own single-threaded SIMD start. Call before the backend
 * starts; the wasm file comes from `wasmFile` (embedded in the binary). Should the threaded start
 * fail (say, no writable temporary folder), a one-line warning says why and the single-threaded
 * backend starts instead.
 */
export function useWasmThreads(threads: number, wasmFile: string, spin: SpinChoice): void {
  // Once started, the backend holds tensors: never swap it out from under them. (The engine's
  // registry, not tf.findBackend: that one starts the stock backend as a side effect.)
  if (threads <= 1 || 'wasm' in tf.engine().registry) return;
  const stock = tf.engine().registryFactory['wasm'];
  if (!stock) throw new Error('tfjs-backend-wasm did not register the wasm backend');
  tf.removeBackend('wasm');
  tf.registerBackend(
    'wasm',
    async () => {
      try {
        return await startThreaded(wasmFile, threads, spin);
      } catch (error) {
        process.stderr.write(`warning: the wasm backend runs single-threaded: ${(error as Error).message.split('\n')[0]}\n`);
        return stock.factory();
      }
    },
    WASM_PRIORITY,
  );
}
