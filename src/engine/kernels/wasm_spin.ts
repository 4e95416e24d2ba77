/**
 * The threaded wasm build with its thread pool's spin bound read from memory, so that the process
 * can choose at run time how long a waiting thread polls before it sleeps (./spin_policy.ts).
 *
 * XNNPACK's pool (pthreadpool) has each thread busy-wait up to 1,000,000 polls before it sleeps on
 * a futex: the main thread for its workers to finish an operation, each worker for the next one.
 * Alone on its cores that saves a wake-up per operation. Beside another process it is a collapse:
 * a spinning thread keeps the core that the thread it waits for needs, for a whole time slice per
 * operation (docs/engine.md). The bound is a compile-time constant of the pool, so this module
 * rewrites the module's bytes before it is instantiated: each `i32.const 1000000` that starts a
 * spin becomes an atomic load of the word at SPIN_BOUND_ADDRESS, which every thread shares. The
 * file must be exactly tfjs-backend-wasm 4.22.0's (its sha256), and each place must hold the
 * constant.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** sha256 of tfjs-backend-wasm-threaded-simd.wasm in tfjs-backend-wasm 4.22.0 (package.json pins it). */
const THREADED_WASM_SHA256 = 'c052228d4bef185c27bbe59a9e029570c78bbb9f08b3cb46b597851650373de2';
/**
 * Byte offsets of `i32.const 1000000` (41 c0 84 3d) in that file: the bound of pthreadpool's
 * three spin loops (waiting for workers, and a worker waiting for a command, two forms), each
 * followed by `local.set` and a loop of atomic loads that counts down by 5 to exactly 0.
 */
const SPIN_BOUND_OFFSETS = [374963, 375144, 375796];
const STOCK_BOUND = [0x41, 0xc0, 0x84, 0x3d];
const CODE_SECTION = 10;

/**
 * The shared word the rewritten loops read their bound from. The module's static data begins at
 * 1024 (its first passive segment is copied there); the words below are emscripten's unused null
 * page, so nothing else reads or writes this one (wasm_threads.ts checks it is 0 before use).
 */
export const SPIN_BOUND_ADDRESS = 512;

/** `i32.const SPIN_BOUND_ADDRESS; i32.atomic.load align=2 offset=0`: the bound, read when a wait begins. */
const LOAD_BOUND = [0x41, ...unsignedLeb(SPIN_BOUND_ADDRESS), 0xfe, 0x10, 0x02, 0x00];

function unsignedLeb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

function readLeb(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let byte: number;
  do {
    byte = bytes[at++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return { value, next: at };
}

/**
 * The pool's waits poll this many times before sleeping. The loop subtracts 5 and stops at exactly
 * 0, so a bound that is not a multiple of 5 would wrap and spin for billions of polls.
 */
export function spinBoundOf(polls: number): number {
  return Math.max(5, Math.round(polls / 5) * 5);
}

/**
 * The threaded module's bytes with every spin bound read from SPIN_BOUND_ADDRESS. The rewritten
 * loads are longer than the constants, so the function bodies holding them, and the code section,
 * are written again with their new sizes; nothing else moves. Throws when the file is not the one
 * this was written for.
 */
export function adjustableSpinWasm(file: string): Uint8Array {
  const bytes = new Uint8Array(readFileSync(file));
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== THREADED_WASM_SHA256)
    throw new Error(`${file} is not tfjs-backend-wasm 4.22.0's threaded module (sha256 ${sha.slice(0, 12)}...): its spin-waits cannot be adjusted`);
  for (const offset of SPIN_BOUND_OFFSETS) {
    if (STOCK_BOUND.some((b, i) => bytes[offset + i] !== b)) throw new Error(`${file}: no spin bound at byte ${offset}`);
  }
  // find the code section (sections follow the 8-byte header as id, size, contents)
  let at = 8;
  let section = { start: 0, end: 0, headerStart: 0 };
  while (at < bytes.length) {
    const id = bytes[at]!;
    const size = readLeb(bytes, at + 1);
    if (id === CODE_SECTION) {
      section = { headerStart: at, start: size.next, end: size.next + size.value };
      break;
    }
    at = size.next + size.value;
  }
  if (section.end === 0) throw new Error(`${file}: no code section`);
  const count = readLeb(bytes, section.start);
  const body: number[] = [...unsignedLeb(count.value)];
  let cursor = count.next;
  let rewritten = 0;
  for (let f = 0; f < count.value; f++) {
    const size = readLeb(bytes, cursor);
    const start = size.next;
    const end = start + size.value;
    const sites = SPIN_BOUND_OFFSETS.filter((o) => o >= start && o < end);
    if (sites.length === 0) {
      for (let i = cursor; i < end; i++) body.push(bytes[i]!);
    } else {
      const code: number[] = [];
      let from = start;
      for (const site of sites) {
        for (let i = from; i < site; i++) code.push(bytes[i]!);
        code.push(...LOAD_BOUND);
        from = site + STOCK_BOUND.length;
      }
      for (let i = from; i < end; i++) code.push(bytes[i]!);
      body.push(...unsignedLeb(code.length), ...code);
      rewritten += sites.length;
    }
    cursor = end;
  }
  if (rewritten !== SPIN_BOUND_OFFSETS.length || cursor !== section.end) throw new Error(`${file}: its code section is not laid out as expected`);
  const head = bytes.subarray(0, section.headerStart);
  const tail = bytes.subarray(section.end);
  const sectionHeader = [CODE_SECTION, ...unsignedLeb(body.length)];
  const out = new Uint8Array(head.length + sectionHeader.length + body.length + tail.length);
  out.set(head, 0);
  out.set(sectionHeader, head.length);
  out.set(body, head.length + sectionHeader.length);
  out.set(tail, head.length + sectionHeader.length + body.length);
  return out;
}
