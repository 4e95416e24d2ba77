/**
 * Attention of one new query per sequence over its cached keys and values: the attention of a
 * decode step, on the host, over each sequence's own SequenceCache. For each sequence and kv head,
 * the query heads of its group score every position (q K^T / sqrt(head dim)), softmax, and mix
 * the values (P V). With a system BLAS in use the two products are `cblas_sgemm` calls on the
 * cache where it lies; without one, plain loops. A sequence's result depends only on its own
 * cache, never on what shares its batch, so generation stays reproducible under continuous
 * batching on either path.
 */
import { ptr } from 'bun:ffi';
import type { Blas } from '../engine/blas';
import { blasInUse } from '../engine/kernels/matmul';
import type { SequenceCache } from './sequence_cache';

/** Scores of one group of query heads, reused across calls (BLAS writes them by address). */
let scratch = new Float32Array(1024);

/**
 * Mixed values [rows, heads, head dim] for queries `q` [rows, heads, head dim], row r attending
 * over positions 0..caches[r].length of `layer` (the cached ones and the one this step wrote).
 */
export function attendCached(q: Float32Array, caches: readonly SequenceCache[], layer: number, heads: number): Float32Array {
  const out = new Float32Array(q.length);
  const blas = blasInUse();
  caches.forEach((cache, row) => {
    const { kvHeads, headDim } = cache.shape;
    const groups = heads / kvHeads;
    const positions = cache.length + 1;
    if (scratch.length < groups * positions) scratch = new Float32Array(Math.max(groups * positions, 2 * scratch.length));
    const group: Group = { q, keys: cache.keys[layer]!, values: cache.values[layer]!, out, at: 0, query: 0, groups, positions, headDim };
    for (let h = 0; h < kvHeads; h++) {
      group.query = (row * heads + h * groups) * headDim;
      group.at = cache.offset(h, 0);
      if (blas) attendBlas(blas, group);
      else attendLoops(group);
    }
  });
  return out;
}

/** One kv head of one sequence: its group of query heads from `query` in q/out, its positions from `at` in keys/values. */
interface Group {
  q: Float32Array;
  keys: Float32Array;
  values: Float32Array;
  out: Float32Array;
  at: number;
  query: number;
  groups: number;
  positions: number;
  headDim: number;
}

function attendBlas(blas: Blas, { q, keys, values, out, at, query, groups, positions, headDim }: Group): void {
  const scores = ptr(scratch);
  blas.sgemm(false, true, groups, positions, headDim, ptr(q) + 4 * query, ptr(keys) + 4 * at, scores);
  for (let g = 0; g < groups; g++) softmaxInPlace(scratch, g * positions, positions, 1 / Math.sqrt(headDim));
  blas.sgemm(false, false, groups, headDim, positions, scores, ptr(values) + 4 * at, ptr(out) + 4 * query);
}

/** The same products as loops, summed in double precision and rounded once to float32. */
function attendLoops({ q, keys, values, out, at, query, groups, positions, headDim }: Group): void {
  for (let g = 0; g < groups; g++) {
    const qAt = query + g * headDim;
    const scores = g * positions;
    for (let s = 0; s < positions; s++) {
      const kAt = at + s * headDim;
      let dot = 0;
      for (let d = 0; d < headDim; d++) dot += q[qAt + d]! * keys[kAt + d]!;
      scratch[scores + s] = dot;
    }
    softmaxInPlace(scratch, scores, positions, 1 / Math.sqrt(headDim));
    const mixed = new Float64Array(headDim);
    for (let s = 0; s < positions; s++) {
      const p = scratch[scores + s]!;
      const vAt = at + s * headDim;
      for (let d = 0; d < headDim; d++) mixed[d] = mixed[d]! + p * values[vAt + d]!;
    }
    out.set(mixed, qAt);
  }
}

/** x[from .. from + n) <- softmax(x * scale), in place. */
function softmaxInPlace(x: Float32Array, from: number, n: number, scale: number): void {
  let max = -Infinity;
  for (let i = from; i < from + n; i++) max = Math.max(max, x[i]! * scale);
  let total = 0;
  for (let i = from; i < from + n; i++) {
    const e = Math.exp(x[i]! * scale - max);
    x[i] = e;
    total += e;
  }
  for (let i = from; i < from + n; i++) x[i] = x[i]! / total;
}
