/**
 * A decoder-only transformer of the Qwen2 family: token embedding, N blocks of (RMSNorm ->
 * grouped-query attention with RoPE -> residual, RMSNorm -> SwiGLU MLP -> residual), a final
 * RMSNorm, and either a language-model head (the policy) or a one-scalar value head (the critic).
 * Qwen3 and Llama are the same decoder with small differences (./families.ts): no q/k/v biases,
 * Qwen3's RMSNorm over each head of q and k, Llama 3's scaled RoPE frequencies. Read it top to
 * bottom: weights, then the forward pass, then the heads.
 *
 * Layout choice, for speed on tfjs: linear weights are stored input-major ([in, out]) so every
 * projection is a plain 2-D matMul of [rows, in] by [in, out], the one form XNNPACK runs fast.
 *
 * Beside it: the weights by name, Hugging Face's [out, in] ones and seeded random ones
 * (./hf_weights.ts); rotary embeddings (./rope.ts); attention and token statistics as tfjs ops, in
 * blocks that save memory (./chunked.ts); LoRA adapters on the projections (./lora.ts,
 * ./lora_adapters.ts); and recomputing each block's activations in the backward pass (./recompute.ts).
 */
import { causalAttention, causalAttentionAvailable } from '../engine/kernels/attention';
import { withRowStableMatMuls } from '../engine/kernels/matmul';
import { hostRmsNorm } from '../engine/kernels/rms_norm';
import { hostSwiGlu } from '../engine/kernels/swiglu';
import { tf } from '../engine/tf';
import type { ModelConfig } from './config';
import { AgenticError } from '../errors';
import type { ModelHead } from './hf_folder';
import { baseVariables, hfWeights, randomWeights, weightsFromHf } from './hf_weights';
import { adapterVariables, loraDelta, loraScale, type LayerAdapters, type LoraSpec, type Projection, type SavedModule } from './lora';
import { recomputed } from './recompute';
import { applyRope, defaultPositions, disposeRope, ropeTables, type RopeTables } from './rope';
import { attentionLimits, defaultChunkRows, groupedAttention, tokenStatsOf } from './chunked';
import type { HostTensor } from './safetensors';
import { attendCached } from './cached_attention';
import type { LayerKV, SequenceCache } from './sequence_cache';

export type { ModelHead };

/** One block's weights; linear weights input-major, [in, out]. */
export interface Block {
  inputNorm: tf.Variable;
  q: tf.Variable;
  k: tf.Variable;
  v: tf.Variable;
  /** q, k and v biases (Qwen2 has them; attention_bias false drops them). */
  bias: { q: tf.Variable; k: tf.Variable; v: tf.Variable } | null;
  /** Qwen3's RMSNorm weights over each head of q and of k ([head dim]); null in the other families. */
  qkNorm: { q: tf.Variable; k: tf.Variable } | null;
  o: tf.Variable;
  postNorm: tf.Variable;
  gate: tf.Variable;
  up: tf.Variable;
  down: tf.Variable;
  /** The block's LoRA adapters, by projection (none without LoRA). */
  adapters: LayerAdapters;
}

/** Options of one forward pass through the blocks. */
export interface ForwardOptions {
  /** Position ids for RoPE, [batch * length]; default 0..length-1 after any cached positions. */
  positions?: Int32Array;
  /**
   * Which key positions each row may attend to, [batch * (cached + length)], 1 = visible;
   * default all. Causality is always applied on top.
   */
  keyMask?: Uint8Array;
  /** Keys and values of earlier positions (the KV cache); not consumed. */
  past?: readonly LayerKV[];
  /**
   * Gradient checkpointing: keep only each block's input for the backward pass and recompute the
   * rest there (./recompute.ts). No keys and values are returned (`present` is empty).
   */
  recompute?: boolean;
}

/** What a model is made of; views (./lora_adapters.ts) share some of it with their base. */
export interface ModelParts {
  embed: tf.Variable;
  blocks: Block[];
  finalNorm: tf.Variable;
  lmHead: tf.Variable | null;
  valueHead: { w: tf.Variable; b: tf.Variable } | null;
}

export class Qwen2Model {
  readonly embed: tf.Variable;
  readonly blocks: Block[];
  readonly finalNorm: tf.Variable;
  /** [vocab, hidden] like the embedding; null when tied to it or when this is a critic. */
  readonly lmHead: tf.Variable | null;
  /** The critic's value head: [hidden, 1] and a bias. */
  readonly valueHead: { w: tf.Variable; b: tf.Variable } | null;
  /** What the LoRA adapters are (./lora.ts); null without them. */
  lora: LoraSpec | null = null;
  /**
   * The base's own values of the modules a LoRA run trains whole (spec.modulesToSave): frozen
   * copies taken when the adapters came, which the base (./lora_adapters.ts's withoutAdapters)
   * uses. Owned by the model that trains them; views share them.
   */
  baseModules: { embed?: tf.Variable; lmHead?: tf.Variable } = {};

  /** Built by random and fromWeights, and as a view of another model's parts by ./lora_adapters.ts. */
  constructor(
    readonly config: ModelConfig,
    readonly head: ModelHead,
    parts: ModelParts,
    /** The variables this object frees on dispose: null for all of them, or a view's own (views share the base). */
    private owned: tf.Variable[] | null,
  ) {
    this.embed = parts.embed;
    this.blocks = parts.blocks;
    this.finalNorm = parts.finalNorm;
    this.lmHead = parts.lmHead;
    this.valueHead = parts.valueHead;
  }

  // -------------------------------------------------------------------------------------------
  // Construction and weights

  /** Seeded random initialisation (normal, std 0.02; norms at 1; biases at 0), the same on every machine. */
  static random(config: ModelConfig, options: { seed: number; head?: ModelHead; trainable?: boolean }): Qwen2Model {
    const head = options.head ?? 'lm';
    return Qwen2Model.adopt(config, head, randomWeights(config, head, options.seed), options.trainable ?? true);
  }

  /**
   * Builds a model from Hugging Face tensors (./hf_weights.ts: names and [out, in] layout of
   * Qwen2ForCausalLM and its Qwen3 and Llama siblings, or the ...ForTokenClassification with one
   * label for a critic). A critic made from a policy checkpoint starts its value head at random (seeded).
   */
  static fromWeights(
    config: ModelConfig,
    hf: ReadonlyMap<string, HostTensor>,
    options: { head?: ModelHead; trainable?: boolean; seed?: number; source?: string } = {},
  ): Qwen2Model {
    return Qwen2Model.adopt(config, options.head ?? 'lm', weightsFromHf(config, hf, options), options.trainable ?? true);
  }

  /** A model of variables made from `weights` by its own names (./hf_weights.ts), which it disposes; no adapters yet. */
  private static adopt(config: ModelConfig, head: ModelHead, weights: Map<string, tf.Tensor>, trainable: boolean): Qwen2Model {
    const base = baseVariables(config, head, weights, trainable);
    return new Qwen2Model(config, head, { ...base, blocks: base.blocks.map((b) => ({ ...b, adapters: {} })) }, null);
  }

  /** The weights in Hugging Face names and layout (./hf_weights.ts), read back to the host (the base weights: adapters are ./lora.ts's). */
  async toWeights(): Promise<Map<string, HostTensor>> {
    return hfWeights(this);
  }

  /** Every variable, in a fixed order: the base weights, then the adapters (./lora.ts). */
  get variables(): tf.Variable[] {
    const list: tf.Variable[] = [this.embed];
    for (const b of this.blocks) {
      list.push(b.inputNorm, b.q, b.k, b.v, ...(b.bias ? [b.bias.q, b.bias.k, b.bias.v] : []));
      if (b.qkNorm) list.push(b.qkNorm.q, b.qkNorm.k);
      list.push(b.o, b.postNorm, b.gate, b.up, b.down);
    }
    list.push(this.finalNorm);
    if (this.lmHead) list.push(this.lmHead);
    if (this.valueHead) list.push(this.valueHead.w, this.valueHead.b);
    return [...list, ...adapterVariables(this.adapters)];
  }

  /**
   * The variables training changes, in a fixed order (the optimizer's and the checkpoint's): the
   * adapters when the model has LoRA, else every variable.
   */
  get trainedVariables(): tf.Variable[] {
    return this.lora ? [...Object.values(this.savedModules()), ...adapterVariables(this.adapters)] : this.variables;
  }

  /** The modules a LoRA run trains whole, by PEFT's name (the embedding before the head). */
  savedModules(): Partial<Record<SavedModule, tf.Variable>> {
    const out: Partial<Record<SavedModule, tf.Variable>> = {};
    for (const module of this.lora?.modulesToSave ?? []) out[module] = module === 'embed_tokens' ? this.embed : this.lmHead!;
    return out;
  }

  /** The adapters of each block ({} per block without LoRA). */
  get adapters(): LayerAdapters[] {
    return this.blocks.map((b) => b.adapters);
  }

  /** Whether the two hold the same base weights (a LoRA view of the other, or the other itself). */
  sharesBaseWith(other: Qwen2Model): boolean {
    return this.finalNorm === other.finalNorm;
  }

  get numParameters(): number {
    return this.variables.reduce((n, v) => n + v.size, 0);
  }

  /** Frees `variables` with this model from now on: they joined it after it was built (adapters, base copies). */
  own(variables: tf.Variable[]): void {
    if (this.owned) this.owned.push(...variables);
  }

  /** Disposes `variables`, which leave this model (folded adapters, base copies no longer needed). */
  release(variables: tf.Variable[]): void {
    if (this.owned) this.owned = this.owned.filter((v) => !variables.includes(v));
    tf.dispose(variables);
  }

  dispose(): void {
    tf.dispose(this.owned ?? [...this.variables, ...Object.values(this.baseModules)]);
  }

  // -------------------------------------------------------------------------------------------
  // The forward pass

  /**
   * Final hidden states [batch, length, hidden] for `ids` [batch, length], and the keys and
   * values of all positions (past + these) per block. The caller owns both.
   */
  forward(ids: tf.Tensor2D, options: ForwardOptions = {}): { hidden: tf.Tensor3D; present: LayerKV[] } {
    const [batch, length] = ids.shape;
    const pastLength = options.past?.[0]?.k.shape[2] ?? 0;
    if (options.recompute && options.past) throw new AgenticError('forward: recompute is for training passes, which have no KV cache');
    const positions = options.positions ?? defaultPositions(batch, length, pastLength);
    const result = tf.tidy(() => {
      const tables = ropeTables(positions, this.config);
      const mask = attentionMask(batch, length, pastLength, options.keyMask);
      let x = tf.gather(this.embed, ids) as tf.Tensor3D;
      const present: LayerKV[] = [];
      for (const [i, block] of this.blocks.entries()) {
        if (options.recompute) {
          x = this.recomputedBlock(block, x, tables, mask);
          continue;
        }
        // each block's intermediates go when it ends, not with the whole pass: a 0.5B prefill of
        // 16 x 128 ids held over 2 GiB of them at once and filled the wasm heap
        const [output, k, v] = tf.tidy(() => {
          const { output, kv } = this.block(block, x, tables, mask, options.past?.[i]);
          return [output, kv.k, kv.v];
        }) as [tf.Tensor3D, tf.Tensor4D, tf.Tensor4D];
        x = output;
        present.push({ k, v });
      }
      const hidden = rmsNorm(x, this.finalNorm, this.config.rms_norm_eps);
      return { hidden, present: present.flatMap((kv) => [kv.k, kv.v]) };
    });
    const flat = result.present as tf.Tensor4D[];
    const present = Array.from({ length: flat.length / 2 }, (_, i) => ({ k: flat[2 * i]!, v: flat[2 * i + 1]! }));
    return { hidden: result.hidden as tf.Tensor3D, present };
  }

  /**
   * One block whose activations are recomputed in the backward pass (./recompute.ts): the RoPE
   * tables and the mask go with the block's input, since the forward pass frees them before the
   * backward pass runs; the gradients go to the variables the block trains.
   */
  private recomputedBlock(block: Block, x: tf.Tensor3D, rope: RopeTables, mask: tf.Tensor): tf.Tensor3D {
    const trained = new Set(this.trainedVariables);
    const weights = [block.inputNorm, block.q, block.k, block.v, ...(block.bias ? [block.bias.q, block.bias.k, block.bias.v] : [])];
    if (block.qkNorm) weights.push(block.qkNorm.q, block.qkNorm.k);
    weights.push(block.o, block.postNorm, block.gate, block.up, block.down, ...adapterVariables([block.adapters]));
    const run = (input: tf.Tensor, [cosQ, sinQ, cosK, sinK, rotation, m]: tf.Tensor[]) =>
      this.block(block, input as tf.Tensor3D, { cosQ, sinQ, cosK, sinK, rotation } as RopeTables, m!, undefined).output;
    return recomputed(
      run,
      x,
      weights.filter((w) => trained.has(w)),
      [rope.cosQ, rope.sinQ, rope.cosK, rope.sinK, rope.rotation, mask],
    ) as tf.Tensor3D;
  }

  /**
   * Final hidden states [rows, hidden] after feeding one id per sequence (a decode step): row r
   * feeds ids[r] at positions[r] and attends over caches[r], which gains the fed id's keys and
   * values in place. Attention runs on the host (./cached_attention.ts): no cache tensor is
   * concatenated, padded or gathered. The products take row-stable matMuls (generation batches
   * whatever rows are ready: a row's bits must not depend on them). The caller owns the result.
   */
  async decode(ids: Int32Array, positions: Int32Array, caches: readonly SequenceCache[]): Promise<tf.Tensor2D> {
    const rows = ids.length;
    if (positions.length !== rows || caches.length !== rows)
      throw new AgenticError(`decode: ${rows} ids, ${positions.length} positions, ${caches.length} caches`);
    for (const cache of caches) cache.reserve(cache.length + 1);
    const rope = ropeTables(positions, this.config);
    let x = tf.tidy(() => tf.gather(this.embed, tf.tensor2d(ids, [rows, 1], 'int32')) as tf.Tensor3D);
    try {
      for (const [layer, block] of this.blocks.entries()) {
        const { q, k, v } = withRowStableMatMuls(() => tf.tidy(() => this.projections(block, x, rope)));
        let read: Float32Array[];
        try {
          read = (await Promise.all([q.data(), k.data(), v.data()])) as Float32Array[];
        } finally {
          tf.dispose([q, k, v]);
        }
        const [queries, keys, values] = read;
        caches.forEach((cache, row) => cache.write(layer, keys!, values!, row));
        const attended = attendCached(queries!, caches, layer, this.config.num_attention_heads);
        const next = withRowStableMatMuls(() => tf.tidy(() => this.blockOutput(block, x, tf.tensor2d(attended, [rows, attended.length / rows]))));
        x.dispose();
        x = next;
      }
      for (const cache of caches) cache.advance();
      return tf.tidy(() => rmsNorm(x, this.finalNorm, this.config.rms_norm_eps).reshape([rows, -1]) as tf.Tensor2D);
    } finally {
      x.dispose();
      disposeRope(rope);
    }
  }

  private block(block: Block, x: tf.Tensor3D, rope: RopeTables, mask: tf.Tensor, past: LayerKV | undefined): { output: tf.Tensor3D; kv: LayerKV } {
    const [batch, length] = x.shape;
    const { q, k: kNew, v: vNew } = this.projections(block, x, rope);
    const toHeads = (t: tf.Tensor) => t.transpose([0, 2, 1, 3]) as tf.Tensor4D;
    const k = past ? (tf.concat([past.k, toHeads(kNew)], 2) as tf.Tensor4D) : toHeads(kNew);
    const v = past ? (tf.concat([past.v, toHeads(vNew)], 2) as tf.Tensor4D) : toHeads(vNew);
    // without a cache and within the limit of whole scores, on the host in two kernels (../engine/kernels/attention.ts)
    const whole = !past && batch * this.config.num_attention_heads * length * length <= attentionLimits.scores;
    const attended = whole && causalAttentionAvailable() ? causalAttention(q, kNew, vNew, mask) : groupedAttention(q, k, v, mask, batch, length, this.config);
    return { output: this.blockOutput(block, x, attended), kv: { k, v } };
  }

  /**
   * The block's attention inputs from x [batch, length, hidden]: rotated queries [batch, length,
   * heads, head dim], rotated keys and values [batch, length, kv heads, head dim]. Three matMuls
   * rather than one fused one: splitting a fused output by columns costs more on wasm than the
   * matMuls themselves.
   */
  private projections(block: Block, x: tf.Tensor3D, rope: RopeTables): { q: tf.Tensor4D; k: tf.Tensor4D; v: tf.Tensor4D } {
    const c = this.config;
    const [batch, length, hidden] = x.shape;
    const h = rmsNorm(x, block.inputNorm, c.rms_norm_eps).reshape([batch * length, hidden]);
    // Qwen3 normalises each head of q and k (rows of head_dim) before rotating it
    const headNorm = (t: tf.Tensor, weight: tf.Variable | undefined) => (weight ? rmsNorm(t.reshape([-1, c.head_dim]), weight, c.rms_norm_eps) : t);
    return {
      q: applyRope(headNorm(this.linear(block, 'q', h, block.bias?.q), block.qkNorm?.q), rope.cosQ, rope.sinQ, rope.rotation, [
        batch,
        length,
        c.num_attention_heads,
        c.head_dim,
      ]),
      k: applyRope(headNorm(this.linear(block, 'k', h, block.bias?.k), block.qkNorm?.k), rope.cosK, rope.sinK, rope.rotation, [
        batch,
        length,
        c.num_key_value_heads,
        c.head_dim,
      ]),
      v: this.linear(block, 'v', h, block.bias?.v).reshape([batch, length, c.num_key_value_heads, c.head_dim]) as tf.Tensor4D,
    };
  }

  /** x W (+ bias) for one of the block's projections, plus its LoRA update when it has an adapter (./lora.ts). */
  private linear(block: Block, projection: Projection, x: tf.Tensor, bias?: tf.Variable): tf.Tensor {
    const y = bias ? tf.matMul(x as tf.Tensor2D, block[projection]).add(bias) : tf.matMul(x as tf.Tensor2D, block[projection]);
    const adapter = block.adapters[projection];
    return adapter ? y.add(loraDelta(x, adapter, loraScale(this.lora!))) : y;
  }

  /** The block's output from its input x and the mixed values [batch * length, heads * head dim]: the residuals and the SwiGLU MLP. */
  private blockOutput(block: Block, x: tf.Tensor3D, attended: tf.Tensor): tf.Tensor3D {
    const [batch, length, hidden] = x.shape;
    const afterAttention = x.add(this.linear(block, 'o', attended).reshape([batch, length, hidden]));
    const h = rmsNorm(afterAttention, block.postNorm, this.config.rms_norm_eps).reshape([batch * length, hidden]);
    const gated = swiGlu(this.linear(block, 'gate', h), this.linear(block, 'up', h));
    const mlp = this.linear(block, 'down', gated).reshape([batch, length, hidden]);
    return afterAttention.add(mlp) as tf.Tensor3D;
  }

  // -------------------------------------------------------------------------------------------
  // Heads

  /** Logits [batch, length, vocab] from hidden states. Memory grows with vocab: prefer tokenStats for training. */
  logits(hidden: tf.Tensor3D): tf.Tensor3D {
    const [batch, length, size] = hidden.shape;
    return tf.tidy(() => tf.matMul(hidden.reshape([batch * length, size]), this.outputEmbedding(), false, true).reshape([batch, length, -1]));
  }

  /**
   * Log-probabilities of `targets` and the entropy of the next-token distribution at every
   * position ([batch, length] each), computed a chunk of rows at a time so the [rows, vocab]
   * logits never exist for the whole batch, in the forward pass or the backward (./chunked.ts).
   */
  tokenStats(hidden: tf.Tensor3D, targets: Int32Array, options: { temperature?: number | Float32Array; chunkRows?: number } = {}) {
    const [batch, length] = hidden.shape;
    if (targets.length !== batch * length) throw new AgenticError(`tokenStats: ${targets.length} targets for ${batch}x${length} positions`);
    const temperature = options.temperature ?? 1;
    if (typeof temperature !== 'number' && temperature.length !== batch * length) {
      throw new AgenticError(`tokenStats: ${temperature.length} temperatures for ${batch}x${length} positions`);
    }
    return tokenStatsOf(hidden, this.outputEmbedding(), targets, temperature, options.chunkRows ?? defaultChunkRows(this.config.vocab_size));
  }

  /** The critic's value per position, [batch, length]. */
  values(hidden: tf.Tensor3D): tf.Tensor2D {
    if (!this.valueHead) throw new AgenticError('this model has no value head (it was built as a policy)');
    const { w, b } = this.valueHead;
    const [batch, length, size] = hidden.shape;
    return tf.tidy(() =>
      tf
        .matMul(hidden.reshape([batch * length, size]), w)
        .add(b)
        .reshape([batch, length]),
    );
  }

  private outputEmbedding(): tf.Tensor2D {
    if (this.head !== 'lm') throw new AgenticError('this model has no language-model head (it was built as a critic)');
    return (this.lmHead ?? this.embed) as tf.Tensor2D;
  }
}

// ---------------------------------------------------------------------------------------------
// Pieces of the forward pass

// RMSNorm and the SwiGLU gate run on the host where attention does (../engine/kernels/rms_norm.ts, swiglu.ts)
function rmsNorm(x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor {
  if (causalAttentionAvailable()) return hostRmsNorm(x, weight, eps);
  return tf.tidy(() => x.mul(tf.rsqrt(tf.square(x).mean(-1, true).add(eps))).mul(weight));
}

function swiGlu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  if (causalAttentionAvailable()) return hostSwiGlu(gate, up);
  return tf.mul(gate.mul(tf.sigmoid(gate)), up);
}

const LOG_MASKED = -1e9;

/**
 * Additive attention mask [batch or 1, 1, 1, length, past + length]: query t sees key s when
 * s <= past + t and the key is not padding. Rows that see nothing get a uniform softmax over
 * masked keys instead of NaN (their outputs are padding and never read).
 */
function attentionMask(batch: number, length: number, past: number, keyMask: Uint8Array | undefined): tf.Tensor {
  const keys = past + length;
  if (keyMask && keyMask.length !== batch * keys) {
    throw new AgenticError(`attention mask has ${keyMask.length} entries for ${batch}x${keys} keys`);
  }
  const rows = keyMask ? batch : 1;
  const mask = new Float32Array(rows * length * keys);
  for (let b = 0; b < rows; b++) {
    for (let t = 0; t < length; t++) {
      const base = (b * length + t) * keys;
      for (let s = 0; s < keys; s++) {
        const visible = s <= past + t && (!keyMask || keyMask[b * keys + s] !== 0);
        if (!visible) mask[base + s] = LOG_MASKED;
      }
    }
  }
  return tf.tensor(mask, [rows, 1, 1, length, keys]);
}
