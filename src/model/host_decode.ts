/**
 * A decode step computed on the host with the system BLAS, for the wasm backend: no tfjs op at
 * all. At a decode step's sizes (a few dozen rows) a tfjs kernel on wasm costs 20-40 µs whatever
 * it computes, and a layer is some forty of them; here a layer is seven BLAS products on the
 * weights where they lie in the wasm heap, and the norms, the rotary embedding, the MLP's gate and
 * the residuals are loops over a few thousand floats. It computes what Qwen2Model.decode computes,
 * op for op (each stored in float32, as the tfjs ops do), and attends the same way
 * (./cached_attention.ts).
 *
 * The products run in calls of exactly a tile's rows, the batch padded to a multiple of it, with a
 * BLAS that gives each row the same bits at any place of the tile (rowStableBlas): a sequence's
 * tokens never depend on what shares its batch. On another backend, without such a BLAS, or for
 * blocks with Qwen3's q/k norms or LoRA adapters, Qwen2Model.decode's tfjs pass serves.
 */
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { ptr } from 'bun:ffi';
import { type RowStableBlas, rowStableBlas } from '../engine/kernels/matmul';
import { rmsNormRows } from '../engine/kernels/rms_norm';
import { wasmOffset } from '../engine/kernels/wasm_heap';
import { tf } from '../engine/tf';
import { attendCached } from './cached_attention';
import type { Qwen2Model } from './qwen2';
import { rotaryAngles } from './rope';
import type { SequenceCache } from './sequence_cache';

/**
 * The BLAS that decodes `model` on the host, or null where Qwen2Model.decode must: another
 * backend, no row-stable BLAS, or a block this file does not compute (Qwen3's q/k norms, LoRA
 * adapters: Qwen2Model.decode applies them).
 */
export function hostDecoder(model: Qwen2Model): RowStableBlas | null {
  if (tf.getBackend() !== 'wasm' || model.blocks.some((b) => b.qkNorm || Object.keys(b.adapters).length > 0)) return null;
  return rowStableBlas();
}

/**
 * Logits [rows, vocab] after feeding ids[r] at positions[r] to each sequence r, whose cache gains
 * the fed id's keys and values (as Qwen2Model.decode, then the language-model head).
 */
export function decodeOnHost(
  { library: blas, tile }: RowStableBlas,
  model: Qwen2Model,
  ids: Int32Array,
  positions: Int32Array,
  caches: readonly SequenceCache[],
): Float32Array {
  const c = model.config;
  const rows = ids.length;
  const padded = Math.ceil(rows / tile) * tile;
  const [hidden, heads, kvHeads, headDim, ffn, vocab] = [
    c.hidden_size,
    c.num_attention_heads,
    c.num_key_value_heads,
    c.head_dim,
    c.intermediate_size,
    c.vocab_size,
  ];
  // Nothing below allocates on the wasm heap, so the weights stay where these views see them.
  const backend = tf.backend() as BackendWasm;
  const heap = (backend.wasm as unknown as { HEAPU8: Uint8Array }).HEAPU8;
  const heapFloats = new Float32Array(heap.buffer, heap.byteOffset, heap.byteLength >> 2);
  const address = (w: tf.Tensor) => ptr(heap) + wasmOffset(backend, w);
  const values = (w: tf.Tensor) => {
    const from = wasmOffset(backend, w) >> 2;
    return heapFloats.subarray(from, from + w.size);
  };
  /** out[padded, n] = a[padded, k] w (w [k, n], or [n, k] stored transposed), a tile's rows a call. */
  const product = (a: Float32Array, w: tf.Tensor, n: number, k: number, out: Float32Array, transposed = false) => {
    const [aAt, wAt, outAt] = [ptr(a), address(w), ptr(out)];
    for (let r = 0; r < padded; r += tile) blas.sgemm(false, transposed, tile, n, k, aAt + 4 * r * k, wAt, outAt + 4 * r * n);
  };
  const norm = (x: Float32Array, weight: tf.Tensor, out: Float32Array) => rmsNormRows(x, values(weight), out, rows, hidden, c.rms_norm_eps);

  const x = new Float32Array(padded * hidden);
  const embedding = values(model.embed);
  ids.forEach((id, r) => x.set(embedding.subarray(id * hidden, (id + 1) * hidden), r * hidden));
  const { cos, sin } = rotaryAngles(positions, c);
  const h = new Float32Array(padded * hidden);
  const q = new Float32Array(padded * heads * headDim);
  const k = new Float32Array(padded * kvHeads * headDim);
  const v = new Float32Array(padded * kvHeads * headDim);
  const projected = new Float32Array(padded * hidden);
  const gate = new Float32Array(padded * ffn);
  const up = new Float32Array(padded * ffn);
  for (const cache of caches) cache.reserve(cache.length + 1);
  model.blocks.forEach((block, layer) => {
    norm(x, block.inputNorm, h);
    product(h, block.q, heads * headDim, hidden, q);
    product(h, block.k, kvHeads * headDim, hidden, k);
    product(h, block.v, kvHeads * headDim, hidden, v);
    if (block.bias) {
      addRows(q, values(block.bias.q), rows);
      addRows(k, values(block.bias.k), rows);
      addRows(v, values(block.bias.v), rows);
    }
    rotate(q, cos, sin, rows, heads, headDim);
    rotate(k, cos, sin, rows, kvHeads, headDim);
    caches.forEach((cache, r) => cache.write(layer, k, v, r));
    product(attendCached(q, caches, layer, heads), block.o, hidden, heads * headDim, projected);
    add(x, projected, rows * hidden);
    norm(x, block.postNorm, h);
    product(h, block.gate, ffn, hidden, gate);
    product(h, block.up, ffn, hidden, up);
    for (let i = 0; i < rows * ffn; i++) {
      const g = gate[i]!;
      gate[i] = Math.fround(g * Math.fround(1 / (1 + Math.exp(-g)))) * up[i]!;
    }
    product(gate, block.down, hidden, ffn, projected);
    add(x, projected, rows * hidden);
  });
  for (const cache of caches) cache.advance();
  norm(x, model.finalNorm, h);
  const logits = new Float32Array(padded * vocab);
  product(h, model.lmHead ?? model.embed, vocab, hidden, logits, true);
  return logits.subarray(0, rows * vocab);
}

/** Rotate-half rotary embedding in place on rows of [heads, head dim]: x cos + rotate_half(x) sin. */
function rotate(x: Float32Array, cos: Float32Array, sin: Float32Array, rows: number, heads: number, headDim: number): void {
  const half = headDim / 2;
  for (let r = 0; r < rows; r++) {
    const angles = r * headDim;
    for (let h = 0; h < heads; h++) {
      const at = (r * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const first = x[at + i]!;
        const second = x[at + half + i]!;
        x[at + i] = Math.fround(first * cos[angles + i]!) + Math.fround(-second * sin[angles + i]!);
        x[at + half + i] = Math.fround(second * cos[angles + half + i]!) + Math.fround(first * sin[angles + half + i]!);
      }
    }
  }
}

/** x[r] += bias for each of the first `rows` rows. */
function addRows(x: Float32Array, bias: Float32Array, rows: number): void {
  for (let r = 0; r < rows; r++) for (let i = 0; i < bias.length; i++) x[r * bias.length + i] = x[r * bias.length + i]! + bias[i]!;
}

function add(x: Float32Array, y: Float32Array, size: number): void {
  for (let i = 0; i < size; i++) x[i] = x[i]! + y[i]!;
}
