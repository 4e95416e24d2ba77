/**
 * Rows of different lengths, packed into micro-batches a forward pass can take, and the one place
 * where tokens are shifted: a row of n ids is fed as ids[0..n-2], and output position j scores
 * token j + 1. Everything outside this file is aligned with the token ids (index t = token t).
 */
import { tf } from '../engine/tf';
import type { ModelConfig } from '../model/config';

/**
 * Activations (tokens x hidden x layers) one micro-batch may hold: a pass keeps every layer's
 * intermediates until it ends, and a backward pass their gradients too. Attention itself stays
 * bounded whatever the length (the model attends long rows a block of queries at a time).
 */
const ACTIVATION_BUDGET = { forward: 2 ** 23, backward: 2 ** 22 };

export interface MicroBatch {
  /** Indices of the rows, longest first. */
  rows: number[];
  /** Positions fed: the longest row's length minus one. */
  positions: number;
}

/**
 * Splits rows (indices into `lengths`) into micro-batches of at most `maxRows`, fewer when their
 * activations would not fit the wasm heap. Rows are sorted longest first so padding stays small;
 * rows with fewer than two ids (nothing to score) are left out.
 */
export function planMicroBatches(
  indices: readonly number[],
  lengths: readonly number[],
  model: ModelConfig,
  options: { maxRows: number; backward: boolean },
): MicroBatch[] {
  const sorted = indices.filter((i) => lengths[i]! >= 2).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  const budget = options.backward ? ACTIVATION_BUDGET.backward : ACTIVATION_BUDGET.forward;
  const perToken = model.hidden_size * model.num_hidden_layers;
  const batches: MicroBatch[] = [];
  let at = 0;
  while (at < sorted.length) {
    const positions = lengths[sorted[at]!]! - 1;
    const fit = Math.max(1, Math.floor(budget / (perToken * positions)));
    const take = Math.min(options.maxRows, fit, sorted.length - at);
    batches.push({ rows: sorted.slice(at, at + take), positions });
    at += take;
  }
  return batches;
}

/** The fed ids [rows, positions] (right-padded with 0) and the ids they predict, flat. */
export function shiftedIds(batch: MicroBatch, ids: readonly Int32Array[]): { inputs: tf.Tensor2D; targets: Int32Array } {
  const { rows, positions } = batch;
  const inputs = new Int32Array(rows.length * positions);
  const targets = new Int32Array(rows.length * positions);
  rows.forEach((row, b) => {
    const source = ids[row]!;
    inputs.set(source.subarray(0, Math.min(positions, source.length - 1)), b * positions);
    targets.set(source.subarray(1, positions + 1), b * positions);
  });
  return { inputs: tf.tensor2d(inputs, [rows.length, positions], 'int32'), targets };
}

/** Per-token host rows shifted like the targets, [rows * positions]: token j + 1's value at j, `padding` elsewhere. */
function shiftedRows(batch: MicroBatch, values: ReadonlyArray<Float32Array | Uint8Array>, padding: number): Float32Array {
  const { rows, positions } = batch;
  const out = new Float32Array(rows.length * positions).fill(padding);
  rows.forEach((row, b) => {
    const source = values[row]!;
    for (let j = 0; j + 1 < source.length && j < positions; j++) out[b * positions + j] = source[j + 1]!;
  });
  return out;
}

/** A per-token host array as the shifted [rows, positions] float tensor (value of token j + 1 at j; 0 on padding). */
export function shiftedValues(batch: MicroBatch, values: ReadonlyArray<Float32Array | Uint8Array>): tf.Tensor2D {
  return tf.tensor2d(shiftedRows(batch, values, 0), [batch.rows.length, batch.positions]);
}

/**
 * Sampling temperatures: one for every token, or per-token rows aligned with the ids (the
 * temperature each token was sampled at; see samplingTemperatures).
 */
export type Temperatures = number | readonly Float32Array[];

/** Temperatures as tokenStats takes them for a micro-batch: shifted like the targets, 1 on padding. */
export function shiftedTemperatures(batch: MicroBatch, temperatures: Temperatures): number | Float32Array {
  return typeof temperatures === 'number' ? temperatures : shiftedRows(batch, temperatures, 1);
}

/** Back from shifted output [rows, positions] to per-token rows: out[row][j + 1] = data[b, j]. */
export function unshift(batch: MicroBatch, data: Float32Array, into: Float32Array[]): void {
  const { rows, positions } = batch;
  rows.forEach((row, b) => {
    const target = into[row]!;
    for (let j = 0; j + 1 < target.length && j < positions; j++) target[j + 1] = data[b * positions + j]!;
  });
}
