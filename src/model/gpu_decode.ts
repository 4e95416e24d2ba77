/**
 * Generation on the GPU, for the webgpu backend: prefill and decode run as WGSL programs
 * (../engine/wgsl/programs.ts) on the model's weights where tfjs keeps them, the KV cache lives in
 * GPU pages, and the next token is sampled on the GPU. A step reads back only each sequence's
 * token and its log-prob (and the logits of a row the host must sample: top-k, top-p or top
 * alternatives), one read a step.
 *
 * The KV cache is paged, as vLLM's PagedAttention: two pools (keys, values) of pages of
 * PAGE_SIZE positions for every layer; a sequence owns a list of pages, gains one when it fills
 * its last, and gives them back when it ends. A full pool grows by doubling, copied in place on
 * the GPU: pages keep their numbers. A prefill is a feed of many tokens per sequence: every token
 * row writes its keys and values at its position, then attends over its own sequence's positions
 * up to its own; a decode step is the same feed with one token per sequence. So prefill and
 * decode are the same programs, and since every program computes a row from its own inputs in a
 * fixed order, a sequence's tokens and log-probs are the same bits alone or beside others.
 *
 * It computes what Qwen2Model.forward computes (the Qwen2, Qwen3 and Llama blocks, LoRA adapters
 * included), in float32.
 */
import {
  ATTENTION_SLOTS,
  GATHER_ROWS,
  kvCopyProgram,
  matMulProgram,
  PAGED_ATTENTION,
  RMS_NORM,
  ROPE,
  ROPE_KV_WRITE,
  SAMPLE,
  SWIGLU,
  type Program,
} from '../engine/wgsl/programs';
import { f32, grid, WgslRunner } from '../engine/wgsl/runner';
import { tf } from '../engine/tf';
import { AgenticError } from '../errors';
import { loraScale, type Projection } from './lora';
import type { Block, Qwen2Model } from './qwen2';
import { rotaryAngles } from './rope';
import type { LayerKV } from './sequence_cache';

/** Positions per page of the KV cache. */
const PAGE_SIZE = 16;
/** Most token rows one pass computes; a longer prefill runs in passes, later ones attending to what earlier ones wrote. */
const PASS_ROWS = 2048;

/** A sequence's place in the KV cache: its pages and how many positions they hold. */
export class GpuSequence {
  pages: number[] = [];
  length = 0;
}

/** How a sequence's next token is chosen: greedily, by inverse CDF at the host's uniform draw `u`, or on the host from its logits. */
export type RowPlan = { mode: 'greedy' } | { mode: 'sample'; temperature: number; u: number } | { mode: 'host' };

/** A sequence's next token and its log-prob, or (plan 'host') its logits to sample from. */
export type RowOutcome = { token: number; logProb: number } | { logits: Float32Array };

const MATMUL = matMulProgram({});
const MATMUL_BIAS = matMulProgram({ bias: true });
const MATMUL_ACCUMULATE = matMulProgram({ accumulate: true });
const MATMUL_GATED = matMulProgram({ gated: true });
const MATMUL_HEAD = matMulProgram({ transposed: true });
const KV_FILL = kvCopyProgram(true);
const KV_GATHER = kvCopyProgram(false);

/** The activations of one pass, sized for `rows` token rows and `samples` sampled sequences. */
/** Where a pass's info buffer holds its ids, its sampled rows and its page table, and the table's width. */
interface PassOffsets {
  idsAt: number;
  lastAt: number;
  tableAt: number;
  maxPages: number;
}

interface Workspace {
  rows: number;
  samples: number;
  x: GPUBuffer;
  h: GPUBuffer;
  q: GPUBuffer;
  k: GPUBuffer;
  v: GPUBuffer;
  /** Qwen3's q or k after its per-head norm. */
  normed: GPUBuffer;
  /** The rotated queries. */
  rotated: GPUBuffer;
  attended: GPUBuffer;
  gate: GPUBuffer;
  up: GPUBuffer;
  /** x A of a LoRA adapter, [rows, rank]. */
  low: GPUBuffer;
  last: GPUBuffer;
  lastNormed: GPUBuffer;
  logits: GPUBuffer;
  sampled: GPUBuffer;
  info: GPUBuffer;
  angles: GPUBuffer;
  plan: GPUBuffer;
}

export class GpuDecoder {
  private readonly runner: WgslRunner;
  private keys: GPUBuffer | null = null;
  private values: GPUBuffer | null = null;
  private pages = 0;
  private free: number[] = [];
  private work: Workspace | null = null;
  private readonly pageFloats: number;

  constructor(private readonly model: Qwen2Model) {
    const c = model.config;
    const group = c.num_attention_heads / c.num_key_value_heads;
    if (group * Math.ceil(c.head_dim / 64) > ATTENTION_SLOTS || group * c.head_dim > 1024) {
      throw new AgenticError(
        `webgpu generation: ${group} query heads per kv head of ${c.head_dim} dimensions are more than its attention program holds (${ATTENTION_SLOTS} heads x 64-dimension slices, 1024 values)`,
      );
    }
    // a layer dispatches at most 16 programs (head norms; gate and up apart), and two more for each of seven LoRA adapters
    this.runner = new WgslRunner(c.num_hidden_layers * 30 + 16);
    this.pageFloats = c.num_hidden_layers * c.num_key_value_heads * PAGE_SIZE * c.head_dim;
  }

  /** GPU buffers held (the cache pools, the workspace, the runner's own) and their bytes: flat while sequences come and go within the sizes seen. */
  get memory(): { buffers: number; bytes: number } {
    return this.runner.memory;
  }

  /** Fills a new sequence's first `past.length` positions from a cached prefix (GenerationRequest.past). */
  async adopt(sequence: GpuSequence, past: { length: number; kv: readonly LayerKV[] }): Promise<void> {
    this.reserve([sequence], [past.length]);
    await this.copyKv(KV_FILL, sequence, past.kv, past.length);
    sequence.length = past.length;
  }

  /** A sequence's keys and values as tensors [1, kv heads, length, head dim] per layer; the caller owns them. */
  async toTensors(sequence: GpuSequence): Promise<LayerKV[]> {
    const c = this.model.config;
    const shape: [number, number, number, number] = [1, c.num_key_value_heads, sequence.length, c.head_dim];
    const layers = Array.from({ length: c.num_hidden_layers }, () => ({ k: tf.zeros(shape) as tf.Tensor4D, v: tf.zeros(shape) as tf.Tensor4D }));
    // the new tensors are this function's alone until it returns them: their buffers are written in place
    await this.copyKv(KV_GATHER, sequence, layers, sequence.length);
    return layers;
  }

  /** Gives a sequence's pages back to the pool. */
  release(sequence: GpuSequence): void {
    this.free.push(...sequence.pages);
    sequence.pages = [];
    sequence.length = 0;
  }

  dispose(): void {
    this.runner.dispose();
    this.keys = this.values = this.work = null;
    this.pages = 0;
    this.free = [];
  }

  /**
   * Feeds each sequence its ids after the positions it holds, and chooses the next token after
   * its last one by its plan. The sequences gain the ids' keys and values.
   */
  async feed(sequences: readonly GpuSequence[], ids: readonly (readonly number[])[], plans: readonly RowPlan[]): Promise<RowOutcome[]> {
    this.reserve(
      sequences,
      sequences.map((s, i) => s.length + ids[i]!.length),
    );
    const outcomes: RowOutcome[] = new Array(sequences.length);
    for (const pass of passes(ids.map((row) => row.length))) {
      const sampled = pass.filter((piece) => piece.last);
      const results = await this.pass(
        pass.map((piece) => ({ sequence: sequences[piece.row]!, ids: ids[piece.row]!.slice(piece.from, piece.to), last: piece.last })),
        sampled.map((piece) => plans[piece.row]!),
      );
      sampled.forEach((piece, i) => {
        outcomes[piece.row] = results[i]!;
      });
    }
    return outcomes;
  }

  // -------------------------------------------------------------------------------------------

  /** Copies a sequence's first `count` positions between its pages and dense tensors, keys and values of every layer, by `program`. */
  private async copyKv(program: Program, sequence: GpuSequence, layers: readonly LayerKV[], count: number): Promise<void> {
    const c = this.model.config;
    const work = this.workspace(1, 0, sequence.pages.length);
    const columns = layers[0]!.k.shape[2];
    const pairs = layers.map(({ k, v }) => [
      [this.runner.tensorBuffer(k), this.keys!],
      [this.runner.tensorBuffer(v), this.values!],
    ]);
    await this.runner.batch(() => {
      this.runner.write(work.info, Uint32Array.from(sequence.pages));
      pairs.forEach((pair, layer) => {
        for (const buffers of pair) {
          this.runner.run(
            program,
            [...buffers, work.info],
            [...this.pageParams(layer, 0, sequence.pages.length), 0, columns, count],
            grid(Math.ceil((c.num_key_value_heads * count * c.head_dim) / 64)),
          );
        }
      });
    });
  }

  /**
   * One pass: every piece's token rows through the blocks, then the next token of the pieces that
   * end their sequence's feed (`last`), chosen by `plans` in their order.
   */
  private async pass(
    pieces: ReadonlyArray<{ sequence: GpuSequence; ids: readonly number[]; last: boolean }>,
    plans: readonly RowPlan[],
  ): Promise<RowOutcome[]> {
    const c = this.model.config;
    const rows = pieces.reduce((n, piece) => n + piece.ids.length, 0);
    const samples = plans.length;
    const maxPages = Math.max(...pieces.map((piece) => piece.sequence.pages.length));
    const work = this.workspace(rows, samples, pieces.length * maxPages);

    // info: (sequence, position) per row, the ids, the rows sampled, then the page table
    const idsAt = 2 * rows;
    const lastAt = idsAt + rows;
    const tableAt = lastAt + samples;
    const info = new Uint32Array(tableAt + pieces.length * maxPages);
    const positions = new Int32Array(rows);
    let row = 0;
    let sample = 0;
    pieces.forEach((piece, s) => {
      piece.ids.forEach((id, i) => {
        positions[row] = piece.sequence.length + i;
        info.set([s, positions[row]!], 2 * row);
        info[idsAt + row] = id;
        row++;
      });
      if (piece.last) info[lastAt + sample++] = row - 1;
      info.set(piece.sequence.pages, tableAt + s * maxPages);
    });
    const { cos, sin } = rotaryAngles(positions, c);
    const plan = new Float32Array(4 * Math.max(1, samples));
    plans.forEach((p, i) => plan.set(p.mode === 'sample' ? [1, p.temperature, p.u, 0] : [p.mode === 'greedy' ? 0 : 2, 1, 0, 0], 4 * i));

    const r = this.runner;
    const angles = new Float32Array(2 * cos.length);
    angles.set(cos);
    angles.set(sin, cos.length);
    const read = await r.batch(() => {
      r.write(work.info, info);
      r.write(work.angles, angles);
      r.write(work.plan, plan);
      this.record(work, rows, samples, { idsAt, lastAt, tableAt, maxPages });
      if (samples === 0) return;
      r.read(work.sampled, 0, 8 * samples);
      plans.forEach((p, i) => {
        if (p.mode === 'host') r.read(work.logits, 4 * i * c.vocab_size, 4 * c.vocab_size);
      });
    });
    this.advance(pieces);
    if (samples === 0) return [];
    const words = new DataView(read!, 0, 8 * samples);
    let logitsAt = 8 * samples;
    return plans.map((p, i) => {
      if (p.mode !== 'host') return { token: words.getUint32(8 * i, true), logProb: words.getFloat32(8 * i + 4, true) };
      const logits = new Float32Array(read!, logitsAt, c.vocab_size);
      logitsAt += 4 * c.vocab_size;
      return { logits };
    });
  }

  /**
   * Records one pass's dispatches: the embedding of each row's id, the blocks, and, for the sampled
   * rows, the final norm, the head and the sampler.
   */
  private record(work: Workspace, rows: number, samples: number, at: PassOffsets): void {
    const r = this.runner;
    const { hidden_size: hidden, vocab_size: vocab } = this.model.config;
    r.run(GATHER_ROWS, [r.tensorBuffer(this.model.embed), work.info, work.x], [hidden, rows, at.idsAt], elementwise(rows * hidden));
    this.model.blocks.forEach((block, layer) => this.recordBlock(work, block, layer, rows, at));
    if (samples === 0) return;
    r.run(GATHER_ROWS, [work.x, work.info, work.last], [hidden, samples, at.lastAt], elementwise(samples * hidden));
    this.norm(work.last, this.model.finalNorm, work.lastNormed, hidden, samples);
    const head = this.model.lmHead ?? this.model.embed;
    r.run(
      MATMUL_HEAD,
      [work.lastNormed, r.tensorBuffer(head), work.logits],
      [samples, vocab, hidden, f32(1)],
      [Math.ceil(vocab / 32), Math.ceil(samples / 32)],
    );
    r.run(SAMPLE, [work.logits, work.plan, work.sampled], [vocab, samples], grid(samples));
  }

  /** Records one block's dispatches over every row: each row's keys and values go to its pages before any row attends. */
  private recordBlock(work: Workspace, block: Block, layer: number, rows: number, at: PassOffsets): void {
    const c = this.model.config;
    const r = this.runner;
    const [hidden, heads, kvHeads, headDim, ffn] = [c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.intermediate_size];
    // Qwen3 normalises each head of q and k before rotating it
    const headNormed = (x: GPUBuffer, into: GPUBuffer, count: number, headNorm: tf.Tensor | undefined) => {
      if (!headNorm) return x;
      this.norm(x, headNorm, into, headDim, rows * count);
      return into;
    };
    const pages = this.pageParams(layer, at.tableAt, at.maxPages);
    this.norm(work.x, block.inputNorm, work.h, hidden, rows);
    this.linear(block, 'q', work.h, work.q, rows, hidden, heads * headDim, block.bias?.q);
    this.linear(block, 'k', work.h, work.k, rows, hidden, kvHeads * headDim, block.bias?.k);
    this.linear(block, 'v', work.h, work.v, rows, hidden, kvHeads * headDim, block.bias?.v);
    r.run(
      ROPE,
      [headNormed(work.q, work.normed, heads, block.qkNorm?.q), work.angles, work.rotated],
      [heads, headDim, rows],
      elementwise(rows * heads * headDim),
    );
    r.run(
      ROPE_KV_WRITE,
      [headNormed(work.k, work.normed, kvHeads, block.qkNorm?.k), work.angles, work.v, this.keys!, this.values!, work.info],
      [...pages, rows],
      elementwise(rows * kvHeads * headDim),
    );
    r.run(
      PAGED_ATTENTION,
      [work.rotated, this.keys!, this.values!, work.info, work.attended],
      [...pages, heads, rows, f32(1 / Math.sqrt(headDim))],
      grid(rows * kvHeads),
    );
    this.linear(block, 'o', work.attended, work.x, rows, heads * headDim, hidden, undefined, true);
    this.norm(work.x, block.postNorm, work.h, hidden, rows);
    if (block.adapters.gate || block.adapters.up) {
      // adapters add to each product before the gate: the products one at a time
      this.linear(block, 'gate', work.h, work.gate, rows, hidden, ffn);
      this.linear(block, 'up', work.h, work.up, rows, hidden, ffn);
      r.run(SWIGLU, [work.gate, work.up], [rows * ffn], elementwise(rows * ffn));
    } else {
      r.run(
        MATMUL_GATED,
        [work.h, r.tensorBuffer(block.gate), work.gate, r.tensorBuffer(block.up)],
        [rows, ffn, hidden, f32(1)],
        [Math.ceil(ffn / 32), Math.ceil(rows / 32)],
      );
    }
    this.linear(block, 'down', work.gate, work.x, rows, ffn, hidden, undefined, true);
  }

  /** RMS norm of `count` rows of `width` (with the weight `w`) into `out`. */
  private norm(x: GPUBuffer, w: tf.Tensor, out: GPUBuffer, width: number, count: number): void {
    this.runner.run(RMS_NORM, [x, this.runner.tensorBuffer(w), out], [width, count, f32(this.model.config.rms_norm_eps)], grid(count));
  }

  /**
   * out = x W (+ bias) for a projection, or out += x W (`accumulate`, a residual); then its LoRA
   * adapter's update out += scale (x A) B, as Qwen2Model.linear adds it.
   */
  private linear(
    block: Block,
    projection: Projection,
    x: GPUBuffer,
    out: GPUBuffer,
    rows: number,
    k: number,
    n: number,
    bias?: tf.Tensor,
    accumulate = false,
  ): void {
    const r = this.runner;
    const w = r.tensorBuffer(block[projection]);
    const groups: [number, number] = [Math.ceil(n / 32), Math.ceil(rows / 32)];
    if (accumulate) r.run(MATMUL_ACCUMULATE, [x, w, out], [rows, n, k, f32(1)], groups);
    else if (bias) r.run(MATMUL_BIAS, [x, w, out, r.tensorBuffer(bias)], [rows, n, k, f32(1)], groups);
    else r.run(MATMUL, [x, w, out], [rows, n, k, f32(1)], groups);
    const adapter = block.adapters[projection];
    if (!adapter) return;
    const rank = adapter.a.shape[1]!;
    r.run(MATMUL, [x, r.tensorBuffer(adapter.a), this.work!.low], [rows, rank, k, f32(1)], [Math.ceil(rank / 32), Math.ceil(rows / 32)]);
    r.run(MATMUL_ACCUMULATE, [this.work!.low, r.tensorBuffer(adapter.b), out], [rows, n, rank, f32(loraScale(this.model.lora!))], groups);
  }

  /** The page parameters every paged program starts with (PAGE_PARAMS in programs.ts). */
  private pageParams(layer: number, table: number, maxPages: number): number[] {
    const c = this.model.config;
    return [c.num_hidden_layers, layer, c.num_key_value_heads, c.head_dim, PAGE_SIZE, maxPages, table];
  }

  private advance(pieces: ReadonlyArray<{ sequence: GpuSequence; ids: readonly number[] }>): void {
    for (const piece of pieces) piece.sequence.length += piece.ids.length;
  }

  /** Gives each sequence pages for `lengths[i]` positions, growing the pools when too few are free. */
  private reserve(sequences: readonly GpuSequence[], lengths: readonly number[]): void {
    const wanted = sequences.map((s, i) => Math.max(0, Math.ceil(lengths[i]! / PAGE_SIZE) - s.pages.length));
    const needed = wanted.reduce((a, b) => a + b, 0);
    if (needed > this.free.length) this.grow(this.pages + needed - this.free.length);
    sequences.forEach((s, i) => s.pages.push(...this.free.splice(this.free.length - wanted[i]!, wanted[i]!)));
  }

  /** Grows both pools to at least `pages` pages (doubling), copying what they hold; page numbers stay. */
  private grow(pages: number): void {
    const limit = Math.min(this.runner.device.limits.maxStorageBufferBindingSize, this.runner.device.limits.maxBufferSize);
    // doubling stops at what the adapter binds; past it only what is needed is asked for (and refused)
    const size = Math.max(pages, Math.min(Math.max(2 * this.pages, 8), Math.floor(limit / (4 * this.pageFloats))));
    const bytes = 4 * size * this.pageFloats;
    if (bytes > limit) {
      throw new AgenticError(
        `webgpu: the KV cache for ${size * PAGE_SIZE} positions needs ${(bytes / 2 ** 20).toFixed(0)} MiB per pool, more than this adapter binds (${(limit / 2 ** 20).toFixed(0)} MiB); generate fewer or shorter sequences at once`,
      );
    }
    const keys = this.runner.storage(bytes);
    const values = this.runner.storage(bytes);
    if (this.keys && this.values) {
      this.runner.copyNow(this.keys, keys, 4 * this.pages * this.pageFloats);
      this.runner.copyNow(this.values, values, 4 * this.pages * this.pageFloats);
      this.runner.destroy(this.keys);
      this.runner.destroy(this.values);
    }
    for (let page = size - 1; page >= this.pages; page--) this.free.push(page);
    [this.keys, this.values, this.pages] = [keys, values, size];
  }

  /** The workspace for a pass, regrown (to the next power of two) when a pass outgrows it. */
  private workspace(rows: number, samples: number, tableEntries: number): Workspace {
    const c = this.model.config;
    const infoWords = 4 * rows + samples + tableEntries;
    const old = this.work;
    if (old && old.rows >= rows && old.samples >= samples && old.info.size >= 4 * infoWords) return old;
    const capacity = (n: number, seen: number) => Math.max(seen, 2 ** Math.ceil(Math.log2(Math.max(16, n))));
    const R = capacity(rows, old?.rows ?? 0);
    const S = capacity(samples, old?.samples ?? 0);
    if (old) for (const buffer of Object.values(old)) if (typeof buffer !== 'number') this.runner.destroy(buffer);
    const floats = (n: number) => this.runner.storage(4 * n);
    const rank = Math.max(1, ...this.model.blocks.flatMap((b) => Object.values(b.adapters).map((a) => a!.a.shape[1]!)));
    const qSize = R * c.num_attention_heads * c.head_dim;
    const kvSize = R * c.num_key_value_heads * c.head_dim;
    this.work = {
      rows: R,
      samples: S,
      x: floats(R * c.hidden_size),
      h: floats(R * c.hidden_size),
      q: floats(qSize),
      k: floats(kvSize),
      v: floats(kvSize),
      normed: floats(qSize),
      rotated: floats(qSize),
      attended: floats(qSize),
      gate: floats(R * c.intermediate_size),
      up: floats(R * c.intermediate_size),
      low: floats(R * rank),
      last: floats(S * c.hidden_size),
      lastNormed: floats(S * c.hidden_size),
      logits: floats(S * c.vocab_size),
      sampled: floats(2 * S),
      info: floats(Math.max(4 * R + S + tableEntries, 2 * (old ? old.info.size / 4 : 0))),
      angles: floats(2 * R * c.head_dim),
      plan: floats(4 * S),
    };
    return this.work;
  }
}

/** One pass's share of a sequence's ids, [from, to); `last` where it ends the sequence's feed. */
/** Workgroups of 64 for `size` elements, one each. */
function elementwise(size: number): [number, number] {
  return grid(Math.ceil(size / 64));
}

interface Piece {
  row: number;
  from: number;
  to: number;
  last: boolean;
}

/** Splits feeds of these lengths into passes of at most PASS_ROWS rows, a sequence's ids in order. */
function passes(lengths: readonly number[]): Piece[][] {
  const all: Piece[][] = [];
  let current: Piece[] = [];
  let rows = 0;
  lengths.forEach((length, row) => {
    for (let from = 0; from < length; ) {
      if (rows === PASS_ROWS) {
        all.push(current);
        [current, rows] = [[], 0];
      }
      const to = Math.min(length, from + PASS_ROWS - rows);
      current.push({ row, from, to, last: to === length });
      rows += to - from;
      from = to;
    }
  });
  if (current.length > 0) all.push(current);
  return all;
}
