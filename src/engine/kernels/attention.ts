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
 * (rowsum(dP P) = rowsum(dO O), since O = P v.) The mask is the model's additive one; a row
 * that sees no key at all gets a softmax over every key, as with the tfjs ops. Every product is
 * one sequence's, so a sequence's result never depends on its batch.
 */
import { getKernel, type KernelConfig, type KernelFunc, type TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { ptr } from 'bun:ffi';
import { tf } from '../tf';
import { blasInUse } from './matmul';
import { allocate, freeTemp, wasmOffset } from './wasm_heap';

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
    /** The first head of its group writes the group's dk and dv; the others add to them. */
    firstOfGroup: (h: number) => h % groups === 0,
  };
}

/** Byte addresses of tensors' floats in the heap; take it after the last allocation (growing the heap moves it). */
function addresses(backend: BackendWasm) {
  const heap = (backend.wasm as unknown as { HEAPU8: Uint8Array }).HEAPU8;
  const base = ptr(heap);
  return (t: TensorInfo, floats = 0) => base + wasmOffset(backend, t) + 4 * floats;
}

/** The wasm backend's own kernel `name` (XNNPACK's softmax, vectorised elementwise ops) on heap tensors. */
function stock(name: string, backend: BackendWasm, inputs: Record<string, TensorInfo>, attrs: Record<string, unknown> = {}): TensorInfo {
  return getKernel(name, 'wasm')!.kernelFunc({ inputs, backend, attrs: attrs as never }) as TensorInfo;
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
        blas.gemm(false, true, T, T, headDim, scale, at(q, qAt(s, h)), qRow, at(k, kvAt(s, h)), kvRow, 1, at(scores, block), T);
      }
    }
    probs = stock('Softmax', backend, { logits: scores }, { dim: 3 });
  } finally {
    freeTemp(backend, scores);
  }
  const out = allocate(backend, [batch * T, qRow]);
  const at = addresses(backend);
  for (let s = 0; s < batch; s++) {
    for (let h = 0; h < heads; h++) {
      blas.gemm(false, false, T, headDim, T, 1, at(probs, (s * heads + h) * T * T), T, at(v, kvAt(s, h)), kvRow, 0, at(out, qAt(s, h)), qRow);
    }
  }
  return [out, probs];
};

const backward: KernelFunc = ({ inputs, backend: b }) => {
  const backend = b as BackendWasm;
  const { dy, q, k, v, out, probs } = inputs as Record<'dy' | 'q' | 'k' | 'v' | 'out' | 'probs', TensorInfo>;
  const blas = blasInUse()!;
  const { batch, length: T, heads, headDim, qRow, kvRow, qAt, kvAt, firstOfGroup } = layout(q, k);
  const scale = 1 / Math.sqrt(headDim);
  // dP - rowsum(dO O): each row starts at minus its sum and gains dO v^T in BLAS (beta 1); then
  // dS / scale is one elementwise product with P
  const shifted = allocate(backend, [batch, heads, T, T]);
  let dScores: TensorInfo;
  try {
    const at = addresses(backend);
    const [d, o, rows] = [backend.typedArrayFromHeap(dy), backend.typedArrayFromHeap(out), backend.typedArrayFromHeap(shifted)] as Float32Array[];
    for (let s = 0; s < batch; s++) {
      for (let h = 0; h < heads; h++) {
        const block = (s * heads + h) * T * T;
        for (let t = 0; t < T; t++) {
          const from = qAt(s, h) + t * qRow;
          let dot = 0;
          for (let i = from; i < from + headDim; i++) dot += d![i]! * o![i]!;
          rows!.fill(-Math.fround(dot), block + t * T, block + (t + 1) * T);
        }
        blas.gemm(false, true, T, T, headDim, 1, at(dy, qAt(s, h)), qRow, at(v, kvAt(s, h)), kvRow, 1, at(shifted, block), T);
      }
    }
    dScores = stock('Multiply', backend, { a: probs, b: shifted });
  } finally {
    freeTemp(backend, shifted);
  }
  const dq = allocate(backend, q.shape);
  const dk = allocate(backend, k.shape);
  const dv = allocate(backend, v.shape);
  try {
    const at = addresses(backend);
    for (let s = 0; s < batch; s++) {
      for (let h = 0; h < heads; h++) {
        const block = (s * heads + h) * T * T;
        const beta = firstOfGroup(h) ? 0 : 1;
        blas.gemm(true, false, T, headDim, T, 1, at(probs, block), T, at(dy, qAt(s, h)), qRow, beta, at(dv, kvAt(s, h)), kvRow);
        blas.gemm(false, false, T, headDim, T, scale, at(dScores, block), T, at(k, kvAt(s, h)), kvRow, 0, at(dq, qAt(s, h)), qRow);
        blas.gemm(true, false, T, headDim, T, scale, at(dScores, block), T, at(q, qAt(s, h)), qRow, beta, at(dk, kvAt(s, h)), kvRow);
      }
    }
  } finally {
    freeTemp(backend, dScores);
  }
  return [dq, dk, dv];
};

export const causalAttentionKernels: KernelConfig[] = [
  { kernelName: FORWARD, backendName: 'wasm', kernelFunc: forward },
  { kernelName: BACKWARD, backendName: 'wasm', kernelFunc: backward },
];
