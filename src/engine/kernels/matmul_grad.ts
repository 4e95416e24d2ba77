/**
 * The gradient of BatchMatMul, for every backend, with broadcast batch axes summed back.
 *
 * tfjs 4.22's own gradient returns each input's gradient at the broadcast batch shape, so
 * backprop throws for x[B,T,D] @ W[D,N] (a linear layer over a batch of sequences) and for
 * grouped-query attention (query heads against shared key/value heads). This one reduces the
 * gradient to the input's shape, as TensorFlow does.
 */
import * as tf from '@tensorflow/tfjs-core';
// tfjs's gradients first, so that ours (registered later) replaces its BatchMatMul one.
import '@tensorflow/tfjs-core/dist/register_all_gradients';

/** `grad` summed over the axes along which `shape` was broadcast to reach it. */
function sumToShape(grad: tf.Tensor, shape: number[]): tf.Tensor {
  if (tf.util.arraysEqual(grad.shape, shape)) return grad;
  const axes = tf.broadcast_util.getReductionAxes(shape, grad.shape);
  return tf.reshape(axes.length ? tf.sum(grad, axes) : grad, shape);
}

export const batchMatMulGradConfig: tf.GradConfig = {
  kernelName: 'BatchMatMul',
  inputsToSave: ['a', 'b'],
  gradFunc: (dy, saved, attrs) => {
    const [a, b] = saved as [tf.Tensor, tf.Tensor];
    const { transposeA, transposeB } = attrs as unknown as { transposeA: boolean; transposeB: boolean };
    const g = dy as tf.Tensor;
    const mm = (x: tf.Tensor, y: tf.Tensor, tx: boolean, ty: boolean) => tf.matMul(x, y, tx, ty);
    // d(op_a(A) op_b(B)) for each combination of transposes
    const [da, db] =
      !transposeA && !transposeB
        ? [() => mm(g, b, false, true), () => mm(a, g, true, false)]
        : !transposeA && transposeB
          ? [() => mm(g, b, false, false), () => mm(g, a, true, false)]
          : transposeA && !transposeB
            ? [() => mm(b, g, false, true), () => mm(a, g, false, false)]
            : [() => mm(b, g, true, true), () => mm(g, a, true, true)];
    return { a: () => sumToShape(da(), a.shape), b: () => sumToShape(db(), b.shape) };
  },
};

let registered = false;

/** Registers the gradient above in place of tfjs's (global, all backends); idempotent. */
export function installMatMulGradient(): void {
  if (registered) return;
  tf.registerGradient(batchMatMulGradConfig);
  registered = true;
}
