/**
 * Batched generation with a KV cache, as a running batch that sequences join and leave.
 *
 * The cache holds, per block, keys and values [batch, kv heads, columns, head dim], right
 * aligned: every row ends at the last column, and a row with a shorter history has masked
 * padding on its left. A joining group is prefilled on its own (left-padded to its longest
 * prompt) and stacked onto the running batch, padding whichever side is shorter; a finished
 * row is dropped by gathering the others, and columns that are padding for every row are
 * trimmed. Each row keeps its own position ids, so padding never shifts RoPE.
 */
import { withRowStableMatMuls } from '../engine/kernels/matmul';
import { tf } from '../engine/tf';
import type { Rng } from '../engine/rng';
import { AgenticError } from '../errors';
import type { LayerKV, Qwen2Model } from './qwen2';
import { sampleToken, temperatureAfter, type SamplingParams } from './sampling';

export interface GenerationRequest {
  /** The caller's handle for this sequence (an episode id, say). */
  id: string | number;
  promptIds: readonly number[];
  sampling: SamplingParams;
  maxNewTokens: number;
  /** The sequence's own random stream; the same stream gives the same tokens in any batch. */
  rng: Rng;
  stopTokenIds?: readonly number[];
  /** Generation stops once the decoded new text contains one of these (needs `decode`). */
  stopStrings?: readonly string[];
  /**
   * Keys and values already computed for the first `past.length` prompt ids (from an earlier
   * result's `cache`); only the rest of the prompt is prefilled. Not consumed: the caller
   * disposes it after `join` returns.
   */
  past?: { length: number; kv: readonly LayerKV[] };
  /** Return the sequence's keys and values with its result (see GenerationResult.cache). */
  keepCache?: boolean;
}

/** A sequence's keys and values, [1, kv heads, ids, head dim] per layer, for the ids fed so far. */
export interface CachedPrefix {
  /** The ids these keys and values belong to: the prompt and every generated id but the last. */
  ids: number[];
  kv: LayerKV[];
}

/** Why a sequence ended; 'left' is a sequence removed by `leave` before it finished. */
export type FinishReason = 'stop_token' | 'stop_string' | 'length' | 'context' | 'left';

export interface GenerationResult {
  id: string | number;
  /** Generated ids (a stop token included; text after a stop string is kept in ids). */
  tokens: number[];
  /** Sampling log-prob of each generated token (see Sampled.logProb). */
  logProbs: number[];
  finishReason: FinishReason;
  /** With `keepCache`: the sequence's cache, to reuse for a later prompt that extends it. The caller disposes it. */
  cache?: CachedPrefix;
}

export interface DecodeOptions {
  /** Turns ids into text for stop strings. */
  decode?: (ids: readonly number[]) => string;
  /** Most positions (prompt + generated) a row may reach; default max_position_embeddings. */
  maxLength?: number;
}

interface Row {
  request: GenerationRequest;
  /** First cache column that holds this row's history. */
  start: number;
  /** Position id of the next token to feed. */
  position: number;
  /** The sampled token not yet fed to the model. */
  pending: number;
  tokens: number[];
  logProbs: number[];
}

export class DecodeBatch {
  private rows: Row[] = [];
  private cache: LayerKV[] | null = null;
  private readonly maxLength: number;

  constructor(
    private readonly model: Qwen2Model,
    private readonly options: DecodeOptions = {},
  ) {
    this.maxLength = options.maxLength ?? model.config.max_position_embeddings;
  }

  /** Sequences currently generating. */
  get size(): number {
    return this.rows.length;
  }

  get ids(): Array<string | number> {
    return this.rows.map((r) => r.request.id);
  }

  /**
   * Prefills the prompts and samples each one's first token. Returns the sequences that
   * finished already (a stop token first, or max_new_tokens 1); the rest join the batch.
   */
  async join(requests: readonly GenerationRequest[]): Promise<GenerationResult[]> {
    if (requests.length === 0) return [];
    const seen = new Set<string | number>();
    for (const r of requests) {
      this.checkRequest(r);
      if (seen.has(r.id)) throw new AgenticError(`generation ${r.id}: the id appears twice in one join`);
      seen.add(r.id);
    }
    const finished: GenerationResult[] = [];
    for (const chunk of prefillChunks(requests, this.model.config.num_attention_heads)) finished.push(...(await this.prefill(chunk)));
    return finished;
  }

  /** Prefills one chunk of joining requests and stacks the unfinished ones onto the batch. */
  private async prefill(requests: readonly GenerationRequest[]): Promise<GenerationResult[]> {
    // Row b feeds prompt[kept[b]..] after `kept[b]` cached columns. Every row feeds `width` ids,
    // reusing fewer cached columns where its new part is shorter, so each row stays one
    // contiguous run of columns (right aligned, padding on the left).
    const width = Math.max(...requests.map((r) => r.promptIds.length - (r.past?.length ?? 0)));
    const kept = requests.map((r) => (r.past ? Math.max(0, r.promptIds.length - width) : 0));
    const pastWidth = Math.max(...kept);
    const columns = pastWidth + width;
    const n = requests.length;
    const ids = new Int32Array(n * width);
    const keyMask = new Uint8Array(n * columns);
    const positions = new Int32Array(n * width);
    requests.forEach((r, b) => {
      const fed = r.promptIds.length - kept[b]!;
      const offset = width - fed;
      for (let t = 0; t < fed; t++) {
        ids[b * width + offset + t] = r.promptIds[kept[b]! + t]!;
        positions[b * width + offset + t] = kept[b]! + t;
      }
      keyMask.fill(1, b * columns + columns - r.promptIds.length, (b + 1) * columns);
    });
    const past = pastWidth > 0 ? pastBlock(requests, kept, pastWidth) : undefined;
    const idsTensor = tf.tensor2d(ids, [n, width], 'int32');
    let forward: ReturnType<Qwen2Model['forward']>;
    try {
      forward = withRowStableMatMuls(() => this.model.forward(idsTensor, { keyMask, positions, past }));
    } finally {
      idsTensor.dispose();
      if (past) disposeKv(past);
    }
    const { hidden, present } = forward;
    const logits = lastLogits(this.model, hidden);
    hidden.dispose();
    const values = (await logits.data()) as Float32Array;
    logits.dispose();

    const joining: Row[] = requests.map((request) => ({
      request,
      start: columns - request.promptIds.length,
      position: request.promptIds.length,
      pending: -1,
      tokens: [],
      logProbs: [],
    }));
    const { finished, keep, kept: staying } = this.sampleAll(joining, values, present, () => 0);
    if (staying || keep.length === 0) disposeKv(present);
    if (keep.length > 0)
      this.append(
        keep.map((b) => joining[b]!),
        staying ?? present,
        columns,
      );
    return finished;
  }

  /** Feeds every row its pending token and samples the next; returns the rows that finished. */
  async step(): Promise<GenerationResult[]> {
    if (!this.cache || this.rows.length === 0) return [];
    const cache = this.cache;
    const n = this.rows.length;
    const columns = this.cache[0]!.k.shape[2] + 1;
    const ids = new Int32Array(n);
    const positions = new Int32Array(n);
    const keyMask = new Uint8Array(n * columns);
    this.rows.forEach((row, b) => {
      ids[b] = row.pending;
      positions[b] = row.position;
      keyMask.fill(1, b * columns + row.start, (b + 1) * columns);
    });
    const idsTensor = tf.tensor2d(ids, [n, 1], 'int32');
    const { hidden, present } = withRowStableMatMuls(() => this.model.forward(idsTensor, { past: cache, positions, keyMask }));
    idsTensor.dispose();
    disposeKv(this.cache);
    this.cache = present;
    const logits = lastLogits(this.model, hidden);
    hidden.dispose();
    const values = (await logits.data()) as Float32Array;
    logits.dispose();

    for (const row of this.rows) row.position += 1;
    // columns left of every staying row's start are padding for all: the compaction drops them
    const { finished, keep, kept } = this.sampleAll(this.rows, values, present, (rows) => this.leftmost(rows));
    if (keep.length === 0) this.dispose();
    else if (kept) this.replaceCache(keep, kept);
    return finished;
  }

  /** Removes a sequence before it finishes; returns what it generated so far, or null if unknown. */
  leave(id: string | number): GenerationResult | null {
    const index = this.rows.findIndex((r) => r.request.id === id);
    if (index < 0) return null;
    const row = this.rows[index]!;
    this.keepRows(this.rows.map((_, i) => i).filter((i) => i !== index));
    return { id, tokens: row.tokens, logProbs: row.logProbs, finishReason: 'left' };
  }

  dispose(): void {
    if (this.cache) disposeKv(this.cache);
    this.cache = null;
    this.rows = [];
  }

  // -------------------------------------------------------------------------------------------

  private checkRequest(r: GenerationRequest): void {
    if (r.promptIds.length === 0) throw new AgenticError(`generation ${r.id}: empty prompt`);
    if (r.promptIds.length >= this.maxLength) {
      throw new AgenticError(`generation ${r.id}: prompt of ${r.promptIds.length} tokens leaves no room (max length ${this.maxLength})`);
    }
    if (!Number.isInteger(r.maxNewTokens) || r.maxNewTokens < 1) throw new AgenticError(`generation ${r.id}: max_new_tokens must be an integer of at least 1`);
    if (r.stopStrings?.length && !this.options.decode) throw new AgenticError('stop strings need a decode function');
    if (r.sampling.opening && !this.options.decode) throw new AgenticError('an opening temperature needs a decode function');
    if (r.past) {
      const columns = r.past.kv[0]?.k.shape[2] ?? 0;
      if (!Number.isInteger(r.past.length) || r.past.length < 0 || r.past.length >= r.promptIds.length || r.past.length > columns) {
        throw new AgenticError(
          `generation ${r.id}: a cached prefix of ${r.past.length} ids must be shorter than the prompt (${r.promptIds.length}) and within its cache (${columns})`,
        );
      }
    }
    if (this.rows.some((row) => row.request.id === r.id)) throw new AgenticError(`generation ${r.id}: already in the batch`);
    const vocab = this.model.config.vocab_size;
    if (r.promptIds.some((t) => !Number.isInteger(t) || t < 0 || t >= vocab)) {
      throw new AgenticError(`generation ${r.id}: prompt has token ids outside [0, ${vocab})`);
    }
  }

  /**
   * Samples every row's next token from its logits (row b: values[b * vocab ...]). Returns the
   * results of the rows that finished, with their keys and values where they asked for them
   * (batch row b of `cache`), the indices of the rows that go on, and, when some finished and
   * some go on, the cache of those that go on (from column `keptFrom` on).
   */
  private sampleAll(
    rows: readonly Row[],
    values: Float32Array,
    cache: readonly LayerKV[],
    keptFrom: (keep: readonly number[]) => number,
  ): { finished: GenerationResult[]; keep: number[]; kept: LayerKV[] | null } {
    const vocab = this.model.config.vocab_size;
    const done: Array<{ b: number; result: GenerationResult }> = [];
    const keep: number[] = [];
    rows.forEach((row, b) => {
      const result = this.accept(row, values.subarray(b * vocab, (b + 1) * vocab));
      if (result) done.push({ b, result });
      else keep.push(b);
    });
    const caching = done.filter(({ b }) => rows[b]!.request.keepCache);
    const compact = keep.length > 0 && keep.length < rows.length;
    const picks = caching.map(({ b }) => ({ rows: [b], from: rows[b]!.start }));
    if (compact) picks.push({ rows: keep, from: keptFrom(keep) });
    const kvs = picks.map(({ rows, from }) => selectCache(cache, rows, from));
    caching.forEach((entry, i) => {
      const row = rows[entry.b]!;
      entry.result = { ...entry.result, cache: { ids: [...row.request.promptIds, ...row.tokens.slice(0, -1)], kv: kvs[i]! } };
    });
    return { finished: done.map(({ result }) => result), keep, kept: compact ? kvs[caching.length]! : null };
  }

  /** Samples a row's next token; returns its result when that ends it. */
  private accept(row: Row, logits: Float32Array): GenerationResult | null {
    const sampling = this.samplingFor(row);
    const { token, logProb } = sampleToken(logits, sampling, row.request.rng);
    row.tokens.push(token);
    row.logProbs.push(logProb);
    row.pending = token;
    const reason = this.finishReason(row, token);
    return reason ? { id: row.request.id, tokens: row.tokens, logProbs: row.logProbs, finishReason: reason } : null;
  }

  /** The request's sampling, at its opening's temperature where the text so far asks for it. */
  private samplingFor(row: Row): SamplingParams {
    const sampling = row.request.sampling;
    if (!sampling.opening || !sampling.doSample) return sampling;
    const temperature = temperatureAfter(this.options.decode!(row.tokens), sampling);
    return temperature === sampling.temperature ? sampling : { ...sampling, temperature };
  }

  private finishReason(row: Row, token: number): FinishReason | null {
    const r = row.request;
    if (r.stopTokenIds?.includes(token)) return 'stop_token';
    if (r.stopStrings?.length) {
      const text = this.options.decode!(row.tokens);
      if (r.stopStrings.some((s) => text.includes(s))) return 'stop_string';
    }
    if (row.tokens.length >= r.maxNewTokens) return 'length';
    if (row.position + 1 >= this.maxLength) return 'context';
    return null;
  }

  /** Stacks prefilled rows (their cache `width` columns wide) onto the running batch. */
  private append(rows: Row[], cache: LayerKV[], width: number): void {
    if (!this.cache) {
      this.cache = cache;
      this.rows = rows;
      return;
    }
    const columns = this.cache[0]!.k.shape[2];
    const total = Math.max(columns, width);
    const old = this.cache;
    this.cache = tf.tidy(() =>
      old.map((layer, i) => {
        const added = cache[i]!;
        return {
          k: tf.concat([padLeft(layer.k, total - columns), padLeft(added.k, total - width)], 0) as tf.Tensor4D,
          v: tf.concat([padLeft(layer.v, total - columns), padLeft(added.v, total - width)], 0) as tf.Tensor4D,
        };
      }),
    );
    tf.dispose([...flatten(old), ...flatten(cache)]);
    for (const row of this.rows) row.start += total - columns;
    for (const row of rows) row.start += total - width;
    this.rows.push(...rows);
  }

  private keepRows(keep: number[]): void {
    if (!this.cache) return;
    if (keep.length === 0) {
      this.dispose();
      return;
    }
    this.replaceCache(keep, selectCache(this.cache, keep, this.leftmost(keep)));
  }

  /** The first cache column any of rows `keep` uses. */
  private leftmost(keep: readonly number[]): number {
    return Math.min(...keep.map((b) => this.rows[b]!.start));
  }

  /** The batch becomes rows `keep` with `cache`, whose columns start at the leftmost of them. */
  private replaceCache(keep: readonly number[], cache: LayerKV[]): void {
    const trim = this.leftmost(keep);
    if (this.cache) disposeKv(this.cache);
    this.cache = cache;
    this.rows = keep.map((b) => this.rows[b]!);
    for (const row of this.rows) row.start -= trim;
  }
}

/** Generates for all requests to completion, batching them together. */
export async function generate(model: Qwen2Model, requests: readonly GenerationRequest[], options: DecodeOptions = {}): Promise<GenerationResult[]> {
  const batch = new DecodeBatch(model, options);
  const results = new Map<string | number, GenerationResult>();
  try {
    for (const done of await batch.join(requests)) results.set(done.id, done);
    while (batch.size > 0) for (const done of await batch.step()) results.set(done.id, done);
  } finally {
    batch.dispose();
  }
  return requests.map((r) => results.get(r.id)!);
}

/**
 * Most attention scores (rows x heads x width^2) one prefill may hold at once: 2^24 floats, 64 MB.
 * Many long prompts joining together would otherwise need more than the wasm heap can give
 * (64 FrozenLake contexts of 400 ids are 170 MB of scores per layer).
 */
const PREFILL_SCORE_BUDGET = 2 ** 24;

/**
 * Joining requests in chunks that fit the budget, with similar numbers of ids to feed together
 * (less padding and recomputation). A row's scores are (ids fed) x (its whole prompt).
 */
export function prefillChunks(requests: readonly GenerationRequest[], heads: number): GenerationRequest[][] {
  const fed = (r: GenerationRequest) => r.promptIds.length - (r.past?.length ?? 0);
  const byLength = [...requests].sort((a, b) => fed(a) - fed(b) || a.promptIds.length - b.promptIds.length);
  const chunks: GenerationRequest[][] = [];
  let chunk: GenerationRequest[] = [];
  let widest = 0;
  let longest = 0;
  for (const request of byLength) {
    const w = Math.max(widest, fed(request));
    const l = Math.max(longest, request.promptIds.length);
    // a row feeding far more ids than the chunk's first would make every row recompute that many
    const unlike = chunk.length > 0 && fed(request) > 2 * fed(chunk[0]!) + 32;
    if (chunk.length > 0 && (unlike || (chunk.length + 1) * heads * w * l > PREFILL_SCORE_BUDGET)) {
      chunks.push(chunk);
      chunk = [];
      widest = 0;
      longest = 0;
    }
    chunk.push(request);
    widest = Math.max(widest, fed(request));
    longest = Math.max(longest, request.promptIds.length);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** The cached columns rows reuse (row b: the first kept[b] of its past), left-padded to `width` and stacked. */
function pastBlock(requests: readonly GenerationRequest[], kept: readonly number[], width: number): LayerKV[] {
  return tf.tidy(() => {
    const layers = requests.find((r) => r.past)!.past!.kv.length;
    const rowOf = (b: number, layer: number, key: 'k' | 'v'): tf.Tensor4D => {
      const r = requests[b]!;
      if (!r.past || kept[b] === 0) {
        const like = requests.find((q) => q.past)!.past!.kv[layer]![key];
        return tf.zeros([1, like.shape[1], width, like.shape[3]]) as tf.Tensor4D;
      }
      const source = r.past.kv[layer]![key];
      const used = source.slice([0, 0, 0, 0], [1, -1, kept[b]!, -1]) as tf.Tensor4D;
      return padLeft(used, width - kept[b]!);
    };
    return Array.from({ length: layers }, (_, layer) => ({
      k: tf.concat(
        requests.map((_, b) => rowOf(b, layer, 'k')),
        0,
      ) as tf.Tensor4D,
      v: tf.concat(
        requests.map((_, b) => rowOf(b, layer, 'v')),
        0,
      ) as tf.Tensor4D,
    }));
  });
}

function lastLogits(model: Qwen2Model, hidden: tf.Tensor3D): tf.Tensor2D {
  return withRowStableMatMuls(() =>
    tf.tidy(() => {
      const [batch, length, size] = hidden.shape;
      const last = hidden.slice([0, length - 1, 0], [batch, 1, size]);
      return model.logits(last as tf.Tensor3D).reshape([batch, -1]) as tf.Tensor2D;
    }),
  );
}

function padLeft(x: tf.Tensor4D, columns: number): tf.Tensor4D {
  if (columns === 0) return x.clone();
  return tf.pad(x, [
    [0, 0],
    [0, 0],
    [columns, 0],
    [0, 0],
  ]);
}

/** Frees every tensor of a cache. */
export function disposeKv(cache: readonly LayerKV[]): void {
  tf.dispose(flatten(cache));
}

/** New tensors holding rows `rows` of every layer's keys and values, from column `from` on. */
function selectCache(cache: readonly LayerKV[], rows: readonly number[], from: number): LayerKV[] {
  return tf.tidy(() => {
    const index = tf.tensor1d(Int32Array.from(rows), 'int32');
    const columns = from > 0 ? tf.range(from, cache[0]!.k.shape[2], 1, 'int32') : null;
    const pick = (x: tf.Tensor4D) => {
      const picked = tf.gather(x, index, 0) as tf.Tensor4D;
      return columns ? (tf.gather(picked, columns, 2) as tf.Tensor4D) : picked;
    };
    return cache.map((layer) => ({ k: pick(layer.k), v: pick(layer.v) }));
  });
}

function flatten(cache: readonly LayerKV[]): tf.Tensor[] {
  return cache.flatMap((layer) => [layer.k, layer.v]);
}
