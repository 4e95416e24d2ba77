/**
 * Batched generation with a KV cache, as a running batch that sequences join and leave.
 *
 * A joining group is prefilled together (left-padded to its longest prompt, padding masked, each
 * row with its own position ids so padding never shifts RoPE); each row then keeps its own keys
 * and values in a SequenceCache that decode steps extend in place (./sequence_cache.ts). A decode
 * step feeds every row its last sampled token: the projections and the MLP run as one batch,
 * attention per row over its own cache (./cached_attention.ts). Rows join and leave without
 * touching each other's caches, and a row's tokens never depend on what shares its batch.
 */
import { withRowStableMatMuls } from '../engine/kernels/matmul';
import { tf } from '../engine/tf';
import type { Rng } from '../engine/rng';
import { AgenticError } from '../errors';
import type { Qwen2Model } from './qwen2';
import { GpuDecoder, GpuSequence, type RowOutcome, type RowPlan } from './gpu_decode';
import { decodeOnHost, hostDecoder } from './host_decode';
import { SequenceCache, type CacheShape, type LayerKV } from './sequence_cache';
import { type Alternative, sampleToken, temperatureAfter, topAlternatives, type SamplingParams } from './sampling';

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
  /** Also return this many most likely tokens of every step (an inference server's top log-probs); 0 or absent: none. */
  topAlternatives?: number;
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
  /** With `topAlternatives`: each step's most likely tokens (see topAlternatives). */
  alternatives?: Alternative[][];
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
  /** Keys and values of every id fed so far (on the host, or in GPU pages); its length is the position of the next. */
  cache: SequenceCache | GpuSequence;
  /** The sampled token not yet fed to the model. */
  pending: number;
  tokens: number[];
  logProbs: number[];
  /** With the request's topAlternatives. */
  alternatives?: Alternative[][];
}

export class DecodeBatch {
  private rows: Row[] = [];
  private readonly maxLength: number;
  private readonly cacheShape: CacheShape;
  /** On the webgpu backend, generation runs on the GPU (./gpu_decode.ts). */
  private readonly gpu: GpuDecoder | null;

  constructor(
    private readonly model: Qwen2Model,
    private readonly options: DecodeOptions = {},
  ) {
    this.maxLength = options.maxLength ?? model.config.max_position_embeddings;
    const c = model.config;
    this.cacheShape = { layers: c.num_hidden_layers, kvHeads: c.num_key_value_heads, headDim: c.head_dim };
    this.gpu = tf.getBackend() === 'webgpu' ? new GpuDecoder(model) : null;
  }

  /** Sequences currently generating. */
  get size(): number {
    return this.rows.length;
  }

  get ids(): Array<string | number> {
    return this.rows.map((r) => r.request.id);
  }

  /** GPU buffers generation holds on webgpu (the KV pages, the workspace) and their bytes; none elsewhere. */
  get gpuMemory(): { buffers: number; bytes: number } {
    return this.gpu?.memory ?? { buffers: 0, bytes: 0 };
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
    if (this.gpu) return this.prefillOnGpu(this.gpu, requests);
    const finished: GenerationResult[] = [];
    for (const chunk of prefillChunks(requests, this.model.config.num_attention_heads)) finished.push(...(await this.prefill(chunk)));
    return finished;
  }

  /** Prefills on the GPU: every prompt in one feed (cached prefixes first copied into their pages), each row sampled there. */
  private async prefillOnGpu(gpu: GpuDecoder, requests: readonly GenerationRequest[]): Promise<GenerationResult[]> {
    const joining: Row[] = requests.map((request) => ({ request, cache: new GpuSequence(), pending: -1, tokens: [], logProbs: [] }));
    for (const row of joining) if (row.request.past) await gpu.adopt(row.cache as GpuSequence, row.request.past);
    const ids = joining.map((row) => row.request.promptIds.slice(row.cache.length));
    return this.settle(
      joining,
      await gpu.feed(
        joining.map((row) => row.cache as GpuSequence),
        ids,
        joining.map((row) => this.planFor(row)),
      ),
    );
  }

  /**
   * Prefills one chunk of joining requests, all feeding the same number of ids after the same
   * number of cached ones (prefillChunks): no row is padded, so each row's keys, values and
   * logits are what it would get alone. The unfinished ones join the batch.
   */
  private async prefill(requests: readonly GenerationRequest[]): Promise<GenerationResult[]> {
    const cached = requests[0]!.past?.length ?? 0;
    const columns = requests[0]!.promptIds.length;
    const width = columns - cached;
    const n = requests.length;
    const ids = new Int32Array(n * width);
    requests.forEach((r, b) => ids.set(r.promptIds.slice(cached), b * width));
    const positions = Int32Array.from({ length: n * width }, (_, i) => cached + (i % width));
    const past = cached > 0 ? pastBlock(requests, cached) : undefined;
    const idsTensor = tf.tensor2d(ids, [n, width], 'int32');
    let forward: ReturnType<Qwen2Model['forward']>;
    try {
      forward = withRowStableMatMuls(() => this.model.forward(idsTensor, { positions, past }), width);
    } finally {
      idsTensor.dispose();
      if (past) disposeKv(past);
    }
    const { hidden, present } = forward;
    const logits = lastLogits(this.model, hidden);
    hidden.dispose();
    let values: Float32Array;
    let hostKv: Array<{ k: Float32Array; v: Float32Array }>;
    try {
      values = (await logits.data()) as Float32Array;
      hostKv = await Promise.all(present.map(async ({ k, v }) => ({ k: (await k.data()) as Float32Array, v: (await v.data()) as Float32Array })));
    } finally {
      logits.dispose();
      disposeKv(present);
    }
    const joining: Row[] = requests.map((request, b) => {
      const length = request.promptIds.length;
      // room for the whole response up front: growing copies the cache
      const capacity = Math.min(this.maxLength, length + request.maxNewTokens);
      const cache = SequenceCache.fromBatch(this.cacheShape, hostKv, columns, b, 0, length, capacity);
      return { request, cache, pending: -1, tokens: [], logProbs: [] };
    });
    return this.sampleAll(joining, values);
  }

  /** Feeds every row its pending token and samples the next; returns the rows that finished. */
  async step(): Promise<GenerationResult[]> {
    if (this.rows.length === 0) return [];
    const rows = this.rows;
    if (this.gpu) {
      const outcomes = await this.gpu.feed(
        rows.map((row) => row.cache as GpuSequence),
        rows.map((row) => [row.pending]),
        rows.map((row) => this.planFor(row)),
      );
      this.rows = [];
      return this.settle(rows, outcomes);
    }
    const ids = Int32Array.from(rows, (row) => row.pending);
    const positions = Int32Array.from(rows, (row) => row.cache.length);
    const values = await decodeLogits(
      this.model,
      ids,
      positions,
      rows.map((row) => row.cache as SequenceCache),
    );
    this.rows = [];
    return this.sampleAll(rows, values);
  }

  /** Removes a sequence before it finishes; returns what it generated so far, or null if unknown. */
  leave(id: string | number): GenerationResult | null {
    const row = this.rows.find((r) => r.request.id === id);
    if (!row) return null;
    this.rows = this.rows.filter((r) => r !== row);
    if (row.cache instanceof GpuSequence) this.gpu!.release(row.cache);
    return { ...this.generated(row), finishReason: 'left' };
  }

  dispose(): void {
    this.rows = [];
    this.gpu?.dispose();
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
   * Samples every row's next token from its logits (row b: values[b * vocab ...]); the rows that
   * go on join the batch, the others return their results (with their keys and values as tensors
   * where they asked for them).
   */
  private sampleAll(rows: readonly Row[], values: Float32Array): GenerationResult[] {
    const vocab = this.model.config.vocab_size;
    const finished: GenerationResult[] = [];
    rows.forEach((row, b) => {
      const result = this.accept(row, values.subarray(b * vocab, (b + 1) * vocab));
      if (!result) this.rows.push(row);
      else if (!row.request.keepCache) finished.push(result);
      else finished.push({ ...result, cache: { ids: [...row.request.promptIds, ...row.tokens.slice(0, -1)], kv: (row.cache as SequenceCache).toTensors() } });
    });
    return finished;
  }

  /**
   * What the GPU gave each row (its token, or its logits where the host samples): the rows that go
   * on join the batch; the others give their pages back and return their results.
   */
  private async settle(rows: readonly Row[], outcomes: readonly RowOutcome[]): Promise<GenerationResult[]> {
    const finished: GenerationResult[] = [];
    for (const [b, row] of rows.entries()) {
      const outcome = outcomes[b]!;
      const result = 'logits' in outcome ? this.accept(row, outcome.logits) : this.record(row, outcome.token, outcome.logProb);
      const sequence = row.cache as GpuSequence;
      if (!result) {
        this.rows.push(row);
        continue;
      }
      if (row.request.keepCache) {
        const ids = [...row.request.promptIds, ...row.tokens.slice(0, -1)];
        finished.push({ ...result, cache: { ids, kv: await this.gpu!.toTensors(sequence) } });
      } else finished.push(result);
      this.gpu!.release(sequence);
    }
    return finished;
  }

  /**
   * How the GPU chooses a row's next token: greedily, or at a uniform drawn here from the row's own
   * stream (as sampleToken draws it); on the host from its logits where top-k, top-p or top
   * alternatives apply.
   */
  private planFor(row: Row): RowPlan {
    const sampling = this.samplingFor(row);
    if (!sampling.doSample || sampling.temperature === 0) return (row.request.topAlternatives ?? 0) > 0 ? { mode: 'host' } : { mode: 'greedy' };
    const truncated = (sampling.topK > 0 && sampling.topK < this.model.config.vocab_size) || sampling.topP < 1;
    if (truncated || (row.request.topAlternatives ?? 0) > 0) return { mode: 'host' };
    return { mode: 'sample', temperature: sampling.temperature, u: row.request.rng.float() };
  }

  /** Samples a row's next token; returns its result when that ends it. */
  private accept(row: Row, logits: Float32Array): GenerationResult | null {
    const sampling = this.samplingFor(row);
    const { token, logProb } = sampleToken(logits, sampling, row.request.rng);
    const alternatives = row.request.topAlternatives ?? 0;
    if (alternatives > 0) (row.alternatives ??= []).push(topAlternatives(logits, sampling, alternatives));
    return this.record(row, token, logProb);
  }

  /** Takes a row's next token; returns its result when that ends it. */
  private record(row: Row, token: number, logProb: number): GenerationResult | null {
    row.tokens.push(token);
    row.logProbs.push(logProb);
    row.pending = token;
    const reason = this.finishReason(row, token);
    return reason ? { ...this.generated(row), finishReason: reason } : null;
  }

  private generated(row: Row): Omit<GenerationResult, 'finishReason'> {
    return { id: row.request.id, tokens: row.tokens, logProbs: row.logProbs, ...(row.alternatives ? { alternatives: row.alternatives } : {}) };
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
    if (row.cache.length + 1 >= this.maxLength) return 'context';
    return null;
  }
}

/** A decode step's logits [rows, vocab]: on the host with a row-stable BLAS (./host_decode.ts), else through tfjs. */
async function decodeLogits(model: Qwen2Model, ids: Int32Array, positions: Int32Array, caches: readonly SequenceCache[]): Promise<Float32Array> {
  const host = hostDecoder(model);
  if (host) return decodeOnHost(host, model, ids, positions, caches);
  const hidden = await model.decode(ids, positions, caches);
  const logits = lastLogits(model, hidden);
  hidden.dispose();
  try {
    return (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
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
 * Joining requests in chunks of equal shape (the same number of cached ids and of ids to feed),
 * so no row is padded and none depends on the others, each chunk within the budget.
 */
export function prefillChunks(requests: readonly GenerationRequest[], heads: number): GenerationRequest[][] {
  const shapes = new Map<string, GenerationRequest[]>();
  for (const request of requests) {
    const shape = `${request.past?.length ?? 0}/${request.promptIds.length}`;
    shapes.set(shape, [...(shapes.get(shape) ?? []), request]);
  }
  const chunks: GenerationRequest[][] = [];
  for (const same of shapes.values()) {
    const { promptIds, past } = same[0]!;
    // a row's scores are (ids fed) x (its whole prompt)
    const perRow = heads * (promptIds.length - (past?.length ?? 0)) * promptIds.length;
    const size = Math.max(1, Math.floor(PREFILL_SCORE_BUDGET / perRow));
    for (let i = 0; i < same.length; i += size) chunks.push(same.slice(i, i + size));
  }
  return chunks;
}

/** The first `cached` columns of every request's past, stacked: [requests, kv heads, cached, head dim] per layer. */
function pastBlock(requests: readonly GenerationRequest[], cached: number): LayerKV[] {
  return tf.tidy(() => {
    const layers = requests[0]!.past!.kv.length;
    const stacked = (layer: number, key: 'k' | 'v') =>
      tf.concat(
        requests.map((r) => r.past!.kv[layer]![key].slice([0, 0, 0, 0], [1, -1, cached, -1])),
        0,
      ) as tf.Tensor4D;
    return Array.from({ length: layers }, (_, layer) => ({ k: stacked(layer, 'k'), v: stacked(layer, 'v') }));
  });
}

/** Logits [batch, vocab] of the last position of hidden states [batch, length, hidden] or [batch, hidden]. */
function lastLogits(model: Qwen2Model, hidden: tf.Tensor3D | tf.Tensor2D): tf.Tensor2D {
  return withRowStableMatMuls(() =>
    tf.tidy(() => {
      const last = hidden.rank === 2 ? hidden : hidden.slice([0, hidden.shape[1]! - 1, 0], [hidden.shape[0], 1, -1]);
      return model.logits(last.reshape([hidden.shape[0], 1, -1]) as tf.Tensor3D).reshape([hidden.shape[0], -1]) as tf.Tensor2D;
    }),
  );
}

/** Frees every tensor of a cache. */
export function disposeKv(cache: readonly LayerKV[]): void {
  tf.dispose(flatten(cache));
}

function flatten(cache: readonly LayerKV[]): tf.Tensor[] {
  return cache.flatMap((layer) => [layer.k, layer.v]);
}
