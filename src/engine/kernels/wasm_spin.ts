/**
 * The threaded wasm build with its thread pool's spin-waits bounded, so that idle threads sleep
 * instead of holding a core.
 *
 * XNNPACK's pool (pthreadpool) has each thread busy-wait up to 1,000,000 polls before it sleeps on
 * a futex: the main thread for its workers to finish an operation, each worker for the next one.
 * Alone on its cores that saves a wake-up per operation. Beside another process it is a collapse:
 * a spinning thread keeps the core that the thread it waits for needs, for a whole time slice per
 * operation. Two engines of two threads on two cores ran at 0.19x (training) and 0.10x
 * (generation) of their speed alone (docs/engine.md). The bound is a compile-time constant of the
 * pool, so this module rewrites it in the module's bytes before it is instantiated: the file must
 * be exactly tfjs-backend-wasm 4.22.0's (its sha256), and each place must hold the constant.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** sha256 of tfjs-backend-wasm-threaded-simd.wasm in tfjs-backend-wasm 4.22.0 (package.json pins it). */
const THREADED_WASM_SHA256 = 'c052228d4bef185c27bbe59a9e029570c78bbb9f08b3cb46b597851650373de2';
/**
 * Byte offsets of `i32.const 1000000` (41 c0 84 3d) in that file: the bound of pthreadpool's
 * three spin loops (waiting for workers, and a worker waiting for a command, two forms), each
 * followed by `local.set` and a loop of atomic loads.
 */
const SPIN_BOUND_OFFSETS = [374963, 375144, 375796];
const STOCK_BOUND = [0x41, 0xc0, 0x84, 0x3d];

/** Polls before a waiting thread sleeps: about a microsecond, enough to catch back-to-back operations. */
export const WASM_SPIN_POLLS = 1000;

/** `value` as a 3-byte LEB128 (padded, as the wasm binary format allows), the stock constant's width. */
function leb128ThreeBytes(value: number): number[] {
  if (!Number.isInteger(value) || value < 1 || value >= 2 ** 21) throw new Error(`spin bound ${value} does not fit three LEB128 bytes`);
  return [(value & 0x7f) | 0x80, ((value >> 7) & 0x7f) | 0x80, (value >> 14) & 0x7f];
}

/**
 * The threaded module's bytes with the pool's spin bound set to `polls` (not 0: the loop counts
 * down and would wrap). Throws when the file is not the one this was written for.
 */
export function boundedSpinWasm(file: string, polls = WASM_SPIN_POLLS): Uint8Array {
  const bytes = new Uint8Array(readFileSync(file));
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== THREADED_WASM_SHA256)
    throw new Error(`${file} is not tfjs-backend-wasm 4.22.0's threaded module (sha256 ${sha.slice(0, 12)}...): its spin-waits cannot be bounded`);
  const bound = leb128ThreeBytes(polls);
  for (const offset of SPIN_BOUND_OFFSETS) {
    if (STOCK_BOUND.some((b, i) => bytes[offset + i] !== b)) throw new Error(`${file}: no spin bound at byte ${offset}`);
    bytes.set(bound, offset + 1);
  }
  return bytes;
}
