/**
 * Causal grouped-query attention of a whole sequence (a training or scoring pass, a prefill) as
 * two wasm kernels computed on the host with the system BLAS: the forward pass and its gradient.
 * As tfjs ops, attention is a dozen kernels per layer over [batch, heads, length, length] tensors
 * (scale, mask, softmax, transposes, and in the backward pass their gradients), each a pass over
 * the heap; here it is, per sequence and head, BLAS products on strided views of the operands
 * where they lie (the scale and the mask folded into them), and the wasm backend's own softmax
 * and elementwise product over all rows at once.
 *
 *   S = q k^T scale + mask;  P = softmax(S);  O = P v
 *   dV = P^T dO;  dP = dO v^T;  dS = P (dP - rowsum(dO O)) scale;  dq = dS k;  dk = dS^T q
 *
 * (rowsum(dP P) = rowsum(dO O), since O = P v.) The mask is the model's additive one, causal: a
 * block of 64 queries multiplies only the keys up to its last query (later ones have probability
 * exactly 0, as exp(-1e9) is), which skips about 40% of the products at 256 positions; a row that
 * sees no key at all gets a softmax over every key, as with the tfjs ops, and its block all keys.
 * Every product is one sequence's, so a sequence's result never depends on its batch.
 */
import type { KernelConfig, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { ptr } from 'bun:ffi';
import { tf } from '../tf';
import { blasInUse, blasSharedWithAnotherThread } from './matmul';
import { allocate, freeTemp, stockKernel, wasmOffset } from './wasm_heap';

const FORWARD = 'AgenticCausalAttention';
const BACKWARD = 'AgenticCausalAttentionGrad';

/** Whether the host kernels may serve; a setting rather than a constant so tests and benchmarks can compare them with tfjs's ops. */
export const hostKernels = { enabled: true };

/** Whether causalAttention runs here: the wasm backend with a system BLAS. */
export function causalAttentionAvailable(): boolean {
  return hostKernels.enabled && tf.getBackend() === 'wasm' && blasInUse() !== null;
}

/**
 * Mixed values [batch * length, heads * head dim] of queries q [batch, length, heads, head dim]
 * over keys and values [batch, length, kv heads, head dim], with the additive `mask` [batch or
 * 1, 1, 1, length, length]; differentiable in q, k and v.
 */
export function causalAttention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor): tf.Tensor2D {
  const op = tf.customGrad((qIn, kIn, vIn, save) => {
    const [q, k, v] = [qIn, kIn, vIn] as tf.Tensor[];
    const [out, probs] = tf.engine().runKernel(FORWARD, { q: q!, k: k!, v: v!, mask }, {}) as tf.Tensor[];
    (save as tf.GradSaveFunc)([q!, k!, v!, out!, probs!]);
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [qs, ks, vs, os, ps] = saved as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
      return tf.engine().runKernel(BACKWARD, { dy, q: qs, k: ks, v: vs, out: os, probs: ps }, {}) as tf.Tensor[];
    };
    return { value: out!, gradFunc };
  });
  return op(q, k, v) as tf.Tensor2D;
}

/** The shapes, and where one sequence's head starts in q (or out) and in k and v, in floats. */
function layout(q: TensorInfo, k: TensorInfo) {
  const [batch, length, heads, headDim] = q.shape as [number, number, number, number];
  const kvHeads = k.shape[2]!;
  const [qRow, kvRow] = [heads * headDim, kvHeads * headDim];
  const groups = heads / kvHeads;
  return {
    batch,
    length,
    heads,
    headDim,
    qRow,
    kvRow,
    qAt: (s: number, h: number) => s * length * qRow + h * headDim,
    kvAt: (s: number, h: number) => s * length * kvRow + Math.floor(h / groups) * headDim,
  };
}

/** Byte addresses of tensors' floats in the heap; take it after the last allocation (growing the heap moves it). */
function addresses(backend: BackendWasm) {
  const heap = (backend.wasm as unknown as { HEAPU8: Uint8Array }).HEAPU8;
  const base = ptr(heap);
  return (t: TensorInfo, floats = 0) => base + wasmOffset(backend, t) + 4 * floats;
}

/** Queries per block: a block computes with the keys up to its last query only (causality). */
const QUERY_BLOCK = 64;

/** [first query, queries] of each block of a sequence of `length`. */
function queryBlocks(length: number): Array<[number, number]> {
  const blocks: Array<[number, number]> = [];
  for (let from = 0; from < length; from += QUERY_BLOCK) blocks.push([from, Math.min(QUERY_BLOCK, length - from)]);
  return blocks;
}

/**
 * The keys a block of queries has probabilities for: up to its last query, or all of them when
 * one of its rows saw no key (a uniform softmax over every key: its last probability is not 0).
 */
function keysSeen(p: Float32Array, block: number, from: number, rows: number, length: number): number {
  for (let t = from; t < from + rows && t < length - 1; t++) if (p[block + t * length + length - 1] !== 0) return length;
  return from + rows;
}

const forward: KernelFunc = ({ inputs, backend: b }) => {
  const backend = b as BackendWasm;
  const { q, k, v, mask } = inputs as Record<'q' | 'k' | 'v' | 'mask', TensorInfo>;
  const blas = blasInUse()!;
  const { batch, length: T, heads, headDim, qRow, kvRow, qAt, kvAt } = layout(q, k);
  const scale = 1 / Math.sqrt(headDim);
  // each head's scores start as the mask and gain q k^T scale in BLAS (beta 1)
  const scores = allocate(backend, [batch, heads, T, T]);
  let probs: TensorInfo;
  try {
    const at = addresses(backend);
    const [masked, m] = [backend.typedArrayFromHeap(scores), backend.typedArrayFromHeap(mask)] as Float32Array[];
    for (let s = 0; s < batch; s++) {
      const maskAt = (mask.shape[0] === 1 ? 0 : s) * T * T;
      for (let h = 0; h < heads; h++) {
        const block = (s * heads + h) * T * T;
        masked!.set(m!.subarray(maskAt, maskAt + T * T), block);
        // a block of queries scores the keys up to its last one; the later ones keep the mask
        for (const [from, rows] of queryBlocks(T)) {
          const [qFrom, keys] = [at(q, qAt(s, h) + from * qRow), from + rows];
          blas.gemm(false, true, rows, keys, headDim, scale, qFrom, qRow, at(k, kvAt(s, h)), kvRow, 1, at(scores, block + from * T), T);
        }
      }
    }
    probs = stockKernel('Softmax', backend, { logits: scores }, { dim: 3 });
  } finally {
    freeTemp(backend, scores);
  }
  const out = allocate(backend, [batch * T, qRow]);
  const at = addresses(backend);
  const p = backend.typedArrayFromHeap(probs) as Float32Array;
  for (let s = 0; s < batch; s++) {
    for (let h = 0; h < heads; h++) {
      const block = (s * heads + h) * T * T;
      for (const [from, rows] of queryBlocks(T)) {
        const keys = keysSeen(p, block, from, rows, T);
        blas.gemm(false, false, rows, headDim, keys, 1, at(probs, block + from * T), T, at(v, kvAt(s, h)), kvRow, 0, at(out, qAt(s, h) + from * qRow), qRow);
      }
    }
  }
  return [out, probs];
};

const backward: KernelFunc = ({ inputs, backend: b }) => {
  const backend = b as BackendWasm;
  const { dy, q, k, v, out, probs } = inputs as Record<'dy' | 'q' | 'k' | 'v' | 'out' | 'probs', TensorInfo>;
  const blas = blasInUse()!;
  const { batch, length: T, heads, headDim, qRow, kvRow, qAt, kvAt } = layout(q, k);
  const scale = 1 / Math.sqrt(headDim);
  // dP - rowsum(dO O): each row starts at minus its sum and gains dO v^T in BLAS (beta 1); then
  // dS / scale is one elementwise product with P
  const shifted = allocate(backend, [batch, heads, T, T]);
  let dScores: TensorInfo;
  try {
    const at = addresses(backend);
    const [d, o, rows, p] = [dy, out, shifted, probs].map((t) => backend.typedArrayFromHeap(t)) as Float32Array[];
    for (let s = 0; s < batch; s++) {
      for (let h = 0; h < heads; h++) {
        const block = (s * heads + h) * T * T;
        for (let t = 0; t < T; t++) {
          const from = qAt(s, h) + t * qRow;
          let dot = 0;
          for (let i = from; i < from + headDim; i++) dot += d![i]! * o![i]!;
          rows!.fill(-Math.fround(dot), block + t * T, block + (t + 1) * T);
        }
        for (const [from, n] of queryBlocks(T)) {
          const keys = keysSeen(p!, block, from, n, T);
          blas.gemm(false, true, n, keys, headDim, 1, at(dy, qAt(s, h) + from * qRow), qRow, at(v, kvAt(s, h)), kvRow, 1, at(shifted, block + from * T), T);
        }
      }
    }
    dScores = stockKernel('Multiply', backend, { a: probs, b: shifted });
  } finally {
    freeTemp(backend, shifted);
  }
  const dq = allocate(backend, q.shape);
  const dk = allocate(backend, k.shape);
  const dv = allocate(backend, v.shape);
  try {
    const at = addresses(backend);
    const p = backend.typedArrayFromHeap(probs) as Float32Array;
    // every block of queries (of every head of a group) adds to the keys' and values' gradients
    backend.typedArrayFromHeap(dk).fill(0);
    backend.typedArrayFromHeap(dv).fill(0);
    for (let s = 0; s < batch; s++) {
      for (let h = 0; h < heads; h++) {
        const block = (s * heads + h) * T * T;
        for (const [from, n] of queryBlocks(T)) {
          const keys = keysSeen(p, block, from, n, T);
          const [rowsAt, qFrom] = [block + from * T, qAt(s, h) + from * qRow];
          blas.gemm(true, false, keys, headDim, n, 1, at(probs, rowsAt), T, at(dy, qFrom), qRow, 1, at(dv, kvAt(s, h)), kvRow);
          blas.gemm(false, false, n, headDim, keys, scale, at(dScores, rowsAt), T, at(k, kvAt(s, h)), kvRow, 0, at(dq, qFrom), qRow);
          blas.gemm(true, false, keys, headDim, n, scale, at(dScores, rowsAt), T, at(q, qFrom), qRow, 1, at(dk, kvAt(s, h)), kvRow);
        }
      }
    }
  } finally {
    freeTemp(backend, dScores);
  }
  return [dq, dk, dv];
};

/**
 * `kernel` with the library on one thread: its products are small (a block of queries of one
 * head, about a million operations), where waking and joining a second thread costs more than
 * it saves (measured: a layer's forward and backward pass 10-25% faster on 2 busy cores). Not
 * while another thread of the process calls the library too (shareBlasWithAnotherThread): the
 * count is the process's, and changing it under the other thread's products makes their bits
 * depend on timing on some CPUs.
 */
function oneThread(kernel: KernelFunc): KernelFunc {
  return (args) => {
    if (blasSharedWithAnotherThread()) return kernel(args);
    const blas = blasInUse()!;
    const threads = blas.threads();
    blas.setThreads(1);
    try {
      return kernel(args);
    } finally {
      if (threads !== null) blas.setThreads(threads);
    }
  };
}

export const causalAttentionKernels: KernelConfig[] = [
  { kernelName: FORWARD, backendName: 'wasm', kernelFunc: oneThread(forward) },
  { kernelName: BACKWARD, backendName: 'wasm', kernelFunc: oneThread(backward) },
];
