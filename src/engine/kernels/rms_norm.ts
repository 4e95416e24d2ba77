/**
 * RMSNorm of a training or scoring pass as two wasm kernels computed on the host: the forward
 * pass and its gradient. As tfjs ops a norm is six kernels forward (square, mean, add, rsqrt, two
 * products) and a dozen backward, two of them sums over every row that tfjs-wasm transposes first;
 * here each is one or two loops over the rows, and every row is its own (no row depends on its
 * batch). With r = 1 / sqrt(mean(x^2) + eps) per row and g = dy w:
 *
 *   y = x r w;  dx = r g - x r^3 mean(g x);  dw = sum over rows of dy x r
 *
 * The forward loop is the one host decoding uses (../../model/host_decode.ts), so a prefill and
 * the decode steps after it normalise alike.
 */
import type { KernelConfig, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { tf } from '../tf';
import { allocate } from './wasm_heap';

const FORWARD = 'AgenticRmsNorm';
const BACKWARD = 'AgenticRmsNormGrad';

/**
 * out = x / sqrt(mean(x^2) + eps) * weight per row of `size`, rounded to float32 where the tfjs ops
 * round; each row's 1 / sqrt(mean(x^2) + eps) goes to `scales` when given.
 */
export function rmsNormRows(x: Float32Array, weight: Float32Array, out: Float32Array, rows: number, size: number, eps: number, scales?: Float32Array): void {
  for (let r = 0; r < rows; r++) {
    const at = r * size;
    let squares = 0;
    for (let i = 0; i < size; i++) squares += Math.fround(x[at + i]! * x[at + i]!);
    const scale = Math.fround(1 / Math.sqrt(Math.fround(Math.fround(squares / size) + eps)));
    if (scales) scales[r] = scale;
    for (let i = 0; i < size; i++) out[at + i] = Math.fround(x[at + i]! * scale) * weight[i]!;
  }
}

/** RMSNorm over the last axis of `x` with `weight` [size]; differentiable in both. Runs where ./attention.ts's causalAttentionAvailable(). */
export function hostRmsNorm(x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor {
  const size = x.shape.at(-1)!;
  const op = tf.customGrad((xIn, wIn, save) => {
    const [rows, w] = [(xIn as tf.Tensor).reshape([-1, size]), wIn as tf.Tensor];
    const [y, scales] = tf.engine().runKernel(FORWARD, { x: rows, w }, { eps }) as tf.Tensor[];
    (save as tf.GradSaveFunc)([rows, w, scales!]);
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [xs, ws, ss] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
      const [dx, dw] = tf.engine().runKernel(BACKWARD, { dy: dy.reshape([-1, size]), x: xs, w: ws, scales: ss }, {}) as tf.Tensor[];
      return [dx!.reshape(x.shape), dw!];
    };
    return { value: y!.reshape(x.shape), gradFunc };
  });
  return op(x, weight);
}

const forward: KernelFunc = ({ inputs, backend: b, attrs }) => {
  const backend = b as BackendWasm;
  const { x, w } = inputs as Record<'x' | 'w', TensorInfo>;
  const [rows, size] = x.shape as [number, number];
  const y = allocate(backend, [rows, size]);
  const scales = allocate(backend, [rows]);
  const [xs, ws, ys, ss] = [x, w, y, scales].map((t) => backend.typedArrayFromHeap(t)) as Float32Array[];
  rmsNormRows(xs!, ws!, ys!, rows, size, (attrs as unknown as { eps: number }).eps, ss);
  return [y, scales];
};

const backward: KernelFunc = ({ inputs, backend: b }) => {
  const backend = b as BackendWasm;
  const { dy, x, w, scales } = inputs as Record<'dy' | 'x' | 'w' | 'scales', TensorInfo>;
  const [rows, size] = x.shape as [number, number];
  const dx = allocate(backend, [rows, size]);
  const dw = allocate(backend, [size]);
  const [d, xs, ws, ss, dxs, dws] = [dy, x, w, scales, dx, dw].map((t) => backend.typedArrayFromHeap(t)) as Float32Array[];
  // the weight's gradient sums over every row: in doubles, rounded once
  const weightSums = new Float64Array(size);
  for (let r = 0; r < rows; r++) {
    const at = r * size;
    const scale = ss![r]!;
    let dot = 0;
    for (let i = 0; i < size; i++) {
      dot += d![at + i]! * ws![i]! * xs![at + i]!;
      weightSums[i]! += d![at + i]! * xs![at + i]! * scale;
    }
    const correction = (scale * scale * scale * dot) / size;
    for (let i = 0; i < size; i++) dxs![at + i] = scale * d![at + i]! * ws![i]! - xs![at + i]! * correction;
  }
  dws!.set(weightSums);
  return [dx, dw];
};

export const rmsNormKernels: KernelConfig[] = [
  { kernelName: FORWARD, backendName: 'wasm', kernelFunc: forward },
  { kernelName: BACKWARD, backendName: 'wasm', kernelFunc: backward },
];
