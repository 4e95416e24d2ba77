/**
 * Forward passes without gradients over a whole batch: the log-probabilities a model gives the
 * sampled tokens (actor_train's "old" ones, the reference's) and the critic's values. Results are
 * per-token host rows aligned with the ids, 0 where nothing was scored.
 */
import { tf } from '../engine/tf';
import type { Qwen2Model } from '../model/qwen2';
import { planMicroBatches, shiftedIds, shiftedTemperatures, unshift, type MicroBatch, type Temperatures } from './micro_batches';

const SCORING_ROWS = 64;

function scoreRows(
  model: Qwen2Model,
  ids: readonly Int32Array[],
  read: (hidden: tf.Tensor3D, targets: Int32Array, batch: MicroBatch) => tf.Tensor2D,
): Float32Array[] {
  const out = ids.map((row) => new Float32Array(row.length));
  const batches = planMicroBatches(
    ids.map((_, i) => i),
    ids.map((row) => row.length),
    model.config,
    { maxRows: SCORING_ROWS, backward: false },
  );
  for (const batch of batches) {
    const { inputs, targets } = shiftedIds(batch, ids);
    const result = tf.tidy(() => {
      return read(hiddenStates(model, inputs), targets, batch);
    });
    unshift(batch, result.dataSync() as Float32Array, out);
    tf.dispose([inputs, result]);
  }
  return out;
}

/** The last layer's hidden states of a full forward pass; the key-value cache it also builds is dropped. */
export function hiddenStates(model: Qwen2Model, inputs: tf.Tensor2D): tf.Tensor3D {
  const { hidden, present } = model.forward(inputs);
  tf.dispose(present.flatMap((kv) => [kv.k, kv.v]));
  return hidden;
}

/** log p(token t | tokens before t) for every t >= 1, logits divided by token t's temperature. */
export function tokenLogProbs(model: Qwen2Model, ids: readonly Int32Array[], temperatures: Temperatures): Float32Array[] {
  return scoreRows(model, ids, (hidden, targets, batch) => {
    const { logProbs, entropy } = model.tokenStats(hidden, targets, { temperature: shiftedTemperatures(batch, temperatures) });
    entropy.dispose();
    return logProbs;
  });
}

/** The critic's value of the state before each token t >= 1. */
export function tokenValues(critic: Qwen2Model, ids: readonly Int32Array[]): Float32Array[] {
  return scoreRows(critic, ids, (hidden) => critic.values(hidden));
}
