/**
 * Gradient checkpointing (Chen et al. 2016) for one block: the forward pass keeps only the block's
 * input, and the backward pass runs the block again under its own gradient tape to get the
 * gradients of the input and of the block's trained weights. A training pass then holds one
 * block's activations at a time instead of every block's, for one more forward pass of each block.
 *
 * tfjs has no recompute of its own: this is a custom gradient (tf.customGrad) whose gradient
 * function computes the block's vector-Jacobian product with a nested `gradients` call. The
 * recomputed forward runs the same kernels on the same inputs, and its backward walks the block's
 * operations in the same order as the tape of an ordinary pass, so the gradients are the same
 * numbers as without checkpointing.
 */
import { tf } from '../engine/tf';

/** tfjs keeps the tape of a gradient computation in engine state that a nested one replaces. */
interface TapeHolder {
  state: { activeTape: unknown };
}

/**
 * `block(x, constants)`, with its activations recomputed in the backward pass. `weights` are the
 * variables whose gradients the caller wants (the block's trained ones); `constants` are tensors the
 * block reads that the forward pass frees before the backward pass runs (RoPE tables, a mask), so
 * they are kept with the input until then.
 */
export function recomputed(
  block: (x: tf.Tensor, constants: tf.Tensor[]) => tf.Tensor,
  x: tf.Tensor,
  weights: tf.Variable[],
  constants: tf.Tensor[],
): tf.Tensor {
  const op = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const save = args.pop() as tf.GradSaveFunc;
    const input = args[0] as tf.Tensor;
    save([input, ...constants]);
    const value = tf.tidy(() => block(input, constants));
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [savedInput, ...savedConstants] = saved as [tf.Tensor, ...tf.Tensor[]];
      // The outer backward pass still needs its tape (it frees the tape's saved tensors when it
      // ends); the nested pass starts a tape of its own in its place and leaves null behind.
      const { state } = tf.engine() as unknown as TapeHolder;
      const outerTape = state.activeTape;
      try {
        const { value: again, grads } = tf.engine().gradients(() => block(savedInput, savedConstants), [savedInput, ...weights], dy, true);
        again.dispose();
        return grads.map((g, i) => g ?? tf.zerosLike(i === 0 ? savedInput : weights[i - 1]!));
      } finally {
        state.activeTape = outerTape;
      }
    };
    return { value, gradFunc };
  });
  return op(x, ...weights);
}
