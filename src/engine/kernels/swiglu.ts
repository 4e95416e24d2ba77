/**
 * The SwiGLU gate of the MLP, silu(gate) * up, as two wasm kernels: the forward pass and its
 * gradient. As tfjs ops it is three kernels forward and ten backward, each a pass over [rows,
 * intermediate] (the widest activations of a block); here the forward pass is the same three
 * (the same bits) and keeps the sigmoid, and the backward pass is one loop on the host. With
 * s = sigmoid(gate):
 *
 *   out = gate s up;  d up = dy gate s;  d gate = dy up s (1 + gate (1 - s))
 */
import type { KernelConfig, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { tf } from '../tf';
import { allocate, freeTemp, stockKernel } from './wasm_heap';

const FORWARD = 'AgenticSwiGlu';
const BACKWARD = 'AgenticSwiGluGrad';

/** silu(gate) * up, elementwise; differentiable in both. Runs where ./attention.ts's causalAttentionAvailable(). */
export function hostSwiGlu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  const op = tf.customGrad((gateIn, upIn, save) => {
    const [g, u] = [gateIn as tf.Tensor, upIn as tf.Tensor];
    const [out, sigmoid] = tf.engine().runKernel(FORWARD, { g, u }, {}) as tf.Tensor[];
    (save as tf.GradSaveFunc)([g, u, sigmoid!]);
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [gs, us, ss] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
      return tf.engine().runKernel(BACKWARD, { dy, g: gs, u: us, s: ss }, {}) as tf.Tensor[];
    };
    return { value: out!, gradFunc };
  });
  return op(gate, up);
}

// the forward pass is the same three kernels as tfjs's ops (a loop here is slower than the
// backend's vectorised ones); what it saves is the sigmoid, for a backward pass of one loop
const forward: KernelFunc = ({ inputs, backend: b }) => {
  const backend = b as BackendWasm;
  const { g, u } = inputs as Record<'g' | 'u', TensorInfo>;
  const s = stockKernel('Sigmoid', backend, { x: g });
  const silu = stockKernel('Multiply', backend, { a: g, b: s });
  try {
    return [stockKernel('Multiply', backend, { a: silu, b: u }), s];
  } finally {
    freeTemp(backend, silu);
  }
};

const backward: KernelFunc = ({ inputs, backend: b }) => {
  const backend = b as BackendWasm;
  const { dy, g, u, s } = inputs as Record<'dy' | 'g' | 'u' | 's', TensorInfo>;
  const dg = allocate(backend, g.shape);
  const du = allocate(backend, u.shape);
  const [d, gs, us, ss, dgs, dus] = [dy, g, u, s, dg, du].map((t) => backend.typedArrayFromHeap(t)) as Float32Array[];
  const n = gs!.length;
  for (let i = 0; i < n; i++) {
    const gate = gs![i]!;
    const sigmoid = ss![i]!;
    const grad = d![i]!;
    dus![i] = grad * gate * sigmoid;
    dgs![i] = grad * us![i]! * sigmoid * (1 + gate * (1 - sigmoid));
  }
  return [dg, du];
};

export const swiGluKernels: KernelConfig[] = [
  { kernelName: FORWARD, backendName: 'wasm', kernelFunc: forward },
  { kernelName: BACKWARD, backendName: 'wasm', kernelFunc: backward },
];
