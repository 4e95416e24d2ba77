/**
 * Each row's log-probability of its target and the entropy of its next-token distribution, from
 * hidden states against an output embedding, as two wasm kernels computed on the host with the
 * system BLAS: the forward pass and its gradient. As tfjs ops this is some thirty kernels over
 * [rows, vocab] logits (log-softmax, exp, one-hot, products and sums, and their gradients); here,
 * a chunk of rows at a time, the logits are one BLAS product, the probabilities the wasm
 * backend's own softmax, and the rest one or two loops over the chunk without an exp:
 *
 *   z = h e^T / temperature;  p = softmax(z);  lse = z_j - log p_j (j the row's argmax)
 *   log p(target) = z_target - lse;  H = lse - sum p z
 *   dz = (onehot - p) g_logp - p (z - lse + H) g_H, over the temperature;  dh = dz e;  de = dz^T h
 *
 * The logits are recomputed in the backward pass, so no [rows, vocab] matrix outlives its chunk.
 * A target outside the vocabulary gets log-probability 0 (as a one-hot of it would).
 */
import type { KernelConfig, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { ptr } from 'bun:ffi';
import type { Blas } from '../blas';
import { tf } from '../tf';
import { blasInUse } from './matmul';
import { allocate, freeTemp, stockKernel, wasmOffset } from './wasm_heap';

const FORWARD = 'AgenticTokenStats';
const BACKWARD = 'AgenticTokenStatsGrad';

/** How token statistics are taken: the host kernel here and the model's tfjs form share it. */
export interface TokenStatsOptions {
  /** One temperature, or the one each row's token was sampled at. */
  temperature: number | Float32Array;
  chunkRows: number;
  /** Whether the embedding gets a gradient (false when it is frozen). */
  embeddingGradient: boolean;
}

/**
 * [rows, 2] = (log p(target), entropy) per row of `hidden` [rows, size] against `embedding`
 * [vocab, size], at one temperature or one per row; differentiable in hidden, and in the
 * embedding when `embeddingGradient`. Runs where ./attention.ts's causalAttentionAvailable().
 */
export function hostTokenStats(hidden: tf.Tensor2D, embedding: tf.Tensor2D, targets: Int32Array, options: TokenStatsOptions): tf.Tensor2D {
  const rows = hidden.shape[0];
  const { temperature, chunkRows, embeddingGradient } = options;
  const inverse = typeof temperature === 'number' ? new Float32Array(rows).fill(1 / temperature) : temperature.map((t) => 1 / t);
  const targetIds = tf.tensor1d(targets, 'int32');
  const scales = tf.tensor1d(inverse, 'float32');
  const op = tf.customGrad((...args: unknown[]) => {
    const save = args.pop() as tf.GradSaveFunc;
    const h = args[0] as tf.Tensor;
    const e = (embeddingGradient ? args[1] : embedding) as tf.Tensor;
    save([h, e, targetIds, scales]);
    const value = tf.engine().runKernel(FORWARD, { h, e, targets: targetIds, scales }, { chunkRows }) as tf.Tensor;
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [hs, es, ts, ss] = saved as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
      const grads = tf.engine().runKernel(BACKWARD, { dy, h: hs, e: es, targets: ts, scales: ss }, { chunkRows, embeddingGradient }) as tf.Tensor[];
      return embeddingGradient ? grads : [grads[0]!];
    };
    return { value, gradFunc };
  });
  try {
    return (embeddingGradient ? op(hidden, embedding) : op(hidden)) as tf.Tensor2D;
  } finally {
    tf.dispose([targetIds, scales]);
  }
}

/** Byte addresses of tensors' floats in the heap; take it after the last allocation (growing the heap moves it). */
function addresses(backend: BackendWasm) {
  const heap = (backend.wasm as unknown as { HEAPU8: Uint8Array }).HEAPU8;
  const base = ptr(heap);
  return (t: TensorInfo, floats = 0) => base + wasmOffset(backend, t) + 4 * floats;
}

interface Chunk {
  start: number;
  rows: number;
  /** The chunk's logits z, then (backward) its dz. */
  z: TensorInfo;
  /** softmax(z). */
  p: TensorInfo;
}

/** z and p of rows [start, start + rows): one BLAS product, the row scales, the wasm backend's softmax. */
function logits(blas: Blas, backend: BackendWasm, h: TensorInfo, e: TensorInfo, scaleTensor: TensorInfo, start: number, rows: number): Chunk {
  const [vocab, size] = e.shape as [number, number];
  const z = allocate(backend, [rows, vocab]);
  const at = addresses(backend);
  blas.gemm(false, true, rows, vocab, size, 1, at(h, start * size), size, at(e), size, 0, at(z), vocab);
  // views after the allocation: growing the single-threaded build's heap detaches views taken before it
  const [values, scales] = [z, scaleTensor].map((t) => backend.typedArrayFromHeap(t)) as [Float32Array, Float32Array];
  for (let r = 0; r < rows; r++) {
    const scale = scales[start + r]!;
    if (scale !== 1) for (let i = r * vocab; i < (r + 1) * vocab; i++) values[i] = values[i]! * scale;
  }
  const p = stockKernel('Softmax', backend, { logits: z }, { dim: 1 });
  return { start, rows, z, p };
}

/** The row's log-sum-exp and entropy from its logits z and probabilities p (at `from`, `vocab` long). */
function rowStats(z: Float32Array, p: Float32Array, from: number, vocab: number): { lse: number; entropy: number } {
  let top = from;
  let mean = 0;
  for (let i = from; i < from + vocab; i++) {
    if (z[i]! > z[top]!) top = i;
    mean += p[i]! * z[i]!;
  }
  const lse = z[top]! - Math.log(p[top]!);
  return { lse, entropy: lse - mean };
}

function chunksOf(rows: number, chunkRows: number): Array<[number, number]> {
  const chunks: Array<[number, number]> = [];
  for (let start = 0; start < rows; start += chunkRows) chunks.push([start, Math.min(rows, start + chunkRows) - start]);
  return chunks;
}

const forward: KernelFunc = ({ inputs, backend: b, attrs }) => {
  const backend = b as BackendWasm;
  const { h, e, targets, scales } = inputs as Record<'h' | 'e' | 'targets' | 'scales', TensorInfo>;
  const { chunkRows } = attrs as unknown as { chunkRows: number };
  const blas = blasInUse()!;
  const [rows, vocab] = [h.shape[0]!, e.shape[0]!];
  const out = allocate(backend, [rows, 2]);
  for (const [start, n] of chunksOf(rows, chunkRows)) {
    const chunk = logits(blas, backend, h, e, scales, start, n);
    try {
      const [z, p, ids, stats] = [chunk.z, chunk.p, targets, out].map((t) => backend.typedArrayFromHeap(t)) as [
        Float32Array,
        Float32Array,
        Int32Array,
        Float32Array,
      ];
      for (let r = 0; r < n; r++) {
        const { lse, entropy } = rowStats(z, p, r * vocab, vocab);
        const target = ids[start + r]!;
        stats[2 * (start + r)] = target >= 0 && target < vocab ? z[r * vocab + target]! - lse : 0;
        stats[2 * (start + r) + 1] = entropy;
      }
    } finally {
      freeTemp(backend, chunk.z);
      freeTemp(backend, chunk.p);
    }
  }
  return out;
};

const backward: KernelFunc = ({ inputs, backend: b, attrs }) => {
  const backend = b as BackendWasm;
  const { dy, h, e, targets, scales } = inputs as Record<'dy' | 'h' | 'e' | 'targets' | 'scales', TensorInfo>;
  const { chunkRows, embeddingGradient } = attrs as unknown as { chunkRows: number; embeddingGradient: boolean };
  const blas = blasInUse()!;
  const [rows, size] = h.shape as [number, number];
  const vocab = e.shape[0]!;
  const dh = allocate(backend, [rows, size]);
  const de = embeddingGradient ? allocate(backend, [vocab, size]) : null;
  for (const [index, [start, n]] of chunksOf(rows, chunkRows).entries()) {
    const chunk = logits(blas, backend, h, e, scales, start, n);
    try {
      const [z, p, ids, g, scale] = [chunk.z, chunk.p, targets, dy, scales].map((t) => backend.typedArrayFromHeap(t)) as [
        Float32Array,
        Float32Array,
        Int32Array,
        Float32Array,
        Float32Array,
      ];
      for (let r = 0; r < n; r++) {
        const from = r * vocab;
        const { lse, entropy } = rowStats(z, p, from, vocab);
        const [gLogp, gEntropy, s] = [g[2 * (start + r)]!, g[2 * (start + r) + 1]!, scale[start + r]!];
        // dz overwrites z, element by element
        for (let i = from; i < from + vocab; i++) z[i] = (-p[i]! * gLogp - p[i]! * (z[i]! - lse + entropy) * gEntropy) * s;
        const target = ids[start + r]!;
        if (target >= 0 && target < vocab) z[from + target] = z[from + target]! + gLogp * s;
      }
      const at = addresses(backend);
      blas.gemm(false, false, n, size, vocab, 1, at(chunk.z), vocab, at(e), size, 0, at(dh, start * size), size);
      if (de) blas.gemm(true, false, vocab, size, n, 1, at(chunk.z), vocab, at(h, start * size), size, index === 0 ? 0 : 1, at(de), size);
    } finally {
      freeTemp(backend, chunk.z);
      freeTemp(backend, chunk.p);
    }
  }
  return de ? [dh, de] : [dh];
};

export const tokenStatsKernels: KernelConfig[] = [
  { kernelName: FORWARD, backendName: 'wasm', kernelFunc: forward },
  { kernelName: BACKWARD, backendName: 'wasm', kernelFunc: backward },
];
