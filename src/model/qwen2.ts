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
 * `toWeights`/`fromWeights` translate to and from Hugging Face's tensor names and [out, in]
 * layout, so checkpoints are ordinary Hugging Face folders.
 *
 * Memory-saving variants live beside it: LoRA adapters on the projections (./lora.ts), and
 * recomputing each block's activations in the backward pass (./recompute.ts).
 */
import { causalAttention, causalAttentionAvailable } from '../engine/kernels/attention';
import { withRowStableMatMuls } from '../engine/kernels/matmul';
import { hostRmsNorm } from '../engine/kernels/rms_norm';
import { hostSwiGlu } from '../engine/kernels/swiglu';
import { hostTokenStats, type TokenStatsOptions } from '../engine/kernels/token_stats';
import { tf } from '../engine/tf';
import { Rng } from '../engine/rng';
import { llama3Rope, type ModelConfig } from './config';
import { AgenticError } from '../errors';
import { FAMILIES } from './families';
import { expectedWeightShapes, type ModelHead } from './hf_folder';
import {
  adapterVariables,
  canonicalModules,
  copyAdapters,
  loraDelta,
  loraScale,
  type Adapter,
  type LayerAdapters,
  type LoraSpec,
  type Projection,
  type SavedModule,
  type SavedModuleValues,
} from './lora';
import { recomputed } from './recompute';
import type { HostTensor } from './safetensors';
import { attendCached } from './cached_attention';
import type { SequenceCache } from './sequence_cache';

export type { ModelHead };

/** Keys and values of one block for the positions seen so far: [batch, kv heads, positions, head dim]. */
export interface LayerKV {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

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

interface Parts {
  embed: tf.Variable;
  blocks: Block[];
  finalNorm: tf.Variable;
  lmHead: tf.Variable | null;
  valueHead: { w: tf.Variable; b: tf.Variable } | null;
}

const LOG_MASKED = -1e9;

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
   * copies taken when the adapters came, which the base (withoutAdapters) uses. Owned by the
   * model that trains them; views share them.
   */
  private baseModules: { embed?: tf.Variable; lmHead?: tf.Variable } = {};

  private constructor(
    readonly config: ModelConfig,
    readonly head: ModelHead,
    parts: Parts,
    /** The variables this object frees on dispose: all of them, or a view's own (./lora.ts views share the base). */
    private owned: tf.Variable[] | null,
  ) {
    this.embed = parts.embed;
    this.blocks = parts.blocks;
    this.finalNorm = parts.finalNorm;
    this.lmHead = parts.lmHead;
    this.valueHead = parts.valueHead;
  }

  // -------------------------------------------------------------------------------------------
  // Construction and Hugging Face weights

  /** Seeded random initialisation (normal, std 0.02; norms at 1; biases at 0), the same on every machine. */
  static random(config: ModelConfig, options: { seed: number; head?: ModelHead; trainable?: boolean }): Qwen2Model {
    const rng = Rng.fromSeed(options.seed, 'model-init');
    const normal = (shape: number[]) => {
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
      for (let i = 0; i < data.length; i++) data[i] = rng.normal() * 0.02;
      return tf.tensor(data, shape);
    };
    const head = options.head ?? 'lm';
    const { hidden, q, kv, ffn, vocab } = sizes(config);
    const weights = new Map<string, tf.Tensor>();
    weights.set('embed', normal([vocab, hidden]));
    for (let i = 0; i < config.num_hidden_layers; i++) {
      weights.set(`${i}.input_norm`, tf.ones([hidden]));
      weights.set(`${i}.q`, normal([hidden, q]));
      weights.set(`${i}.k`, normal([hidden, kv]));
      weights.set(`${i}.v`, normal([hidden, kv]));
      if (config.attention_bias) {
        weights.set(`${i}.q_bias`, tf.zeros([q]));
        weights.set(`${i}.k_bias`, tf.zeros([kv]));
        weights.set(`${i}.v_bias`, tf.zeros([kv]));
      }
      if (FAMILIES[config.model_type].qkNorm) {
        weights.set(`${i}.q_norm`, tf.ones([config.head_dim]));
        weights.set(`${i}.k_norm`, tf.ones([config.head_dim]));
      }
      weights.set(`${i}.o`, normal([q, hidden]));
      weights.set(`${i}.post_norm`, tf.ones([hidden]));
      weights.set(`${i}.gate`, normal([hidden, ffn]));
      weights.set(`${i}.up`, normal([hidden, ffn]));
      weights.set(`${i}.down`, normal([ffn, hidden]));
    }
    weights.set('final_norm', tf.ones([hidden]));
    if (head === 'lm' && !config.tie_word_embeddings) weights.set('lm_head', normal([vocab, hidden]));
    if (head === 'value') {
      weights.set('value_w', normal([hidden, 1]));
      weights.set('value_b', tf.zeros([1]));
    }
    return Qwen2Model.adopt(config, head, weights, options.trainable ?? true);
  }

  /**
   * Builds a model from Hugging Face tensors (names and [out, in] layout of Qwen2ForCausalLM and
   * its Qwen3 and Llama siblings, or the ...ForTokenClassification with one label for a critic).
   * A critic made from a policy checkpoint starts its value head at random (seeded).
   */
  static fromWeights(
    config: ModelConfig,
    hf: ReadonlyMap<string, HostTensor>,
    options: { head?: ModelHead; trainable?: boolean; seed?: number; source?: string } = {},
  ): Qwen2Model {
    const head = options.head ?? 'lm';
    const source = options.source ?? 'model weights';
    const expected = expectedWeightShapes(config, head);
    const get = (name: string): HostTensor => {
      const tensor = hf.get(name);
      if (!tensor) throw new AgenticError(`${source}: missing tensor ${name}`);
      const want = expected.get(name)!;
      if (tensor.shape.join(',') !== want.join(',')) {
        throw new AgenticError(`${source}: tensor ${name} has shape [${tensor.shape}], expected [${want}]`);
      }
      return tensor;
    };
    const t = (name: string) => {
      const h = get(name);
      return tf.tensor(h.data, h.shape);
    };
    /** HF Linear [out, in] -> ours [in, out]. */
    const linear = (name: string) => tf.tidy(() => t(name).transpose());
    const weights = new Map<string, tf.Tensor>();
    weights.set('embed', t('model.embed_tokens.weight'));
    for (let i = 0; i < config.num_hidden_layers; i++) {
      const p = `model.layers.${i}.`;
      weights.set(`${i}.input_norm`, t(`${p}input_layernorm.weight`));
      for (const x of ['q', 'k', 'v']) {
        weights.set(`${i}.${x}`, linear(`${p}self_attn.${x}_proj.weight`));
        if (config.attention_bias) weights.set(`${i}.${x}_bias`, t(`${p}self_attn.${x}_proj.bias`));
      }
      if (FAMILIES[config.model_type].qkNorm) {
        weights.set(`${i}.q_norm`, t(`${p}self_attn.q_norm.weight`));
        weights.set(`${i}.k_norm`, t(`${p}self_attn.k_norm.weight`));
      }
      weights.set(`${i}.o`, linear(`${p}self_attn.o_proj.weight`));
      weights.set(`${i}.post_norm`, t(`${p}post_attention_layernorm.weight`));
      weights.set(`${i}.gate`, linear(`${p}mlp.gate_proj.weight`));
      weights.set(`${i}.up`, linear(`${p}mlp.up_proj.weight`));
      weights.set(`${i}.down`, linear(`${p}mlp.down_proj.weight`));
    }
    weights.set('final_norm', t('model.norm.weight'));
    if (head === 'lm' && !config.tie_word_embeddings) weights.set('lm_head', t('lm_head.weight'));
    if (head === 'value') {
      if (hf.has('score.weight')) {
        weights.set('value_w', linear('score.weight'));
        weights.set('value_b', hf.has('score.bias') ? t('score.bias') : tf.zeros([1]));
      } else {
        const rng = Rng.fromSeed(options.seed ?? 0, 'value-head-init');
        weights.set(
          'value_w',
          tf.tensor(
            Float32Array.from({ length: config.hidden_size }, () => rng.normal() * 0.02),
            [config.hidden_size, 1],
          ),
        );
        weights.set('value_b', tf.zeros([1]));
      }
    }
    return Qwen2Model.adopt(config, head, weights, options.trainable ?? true);
  }

  private static adopt(config: ModelConfig, head: ModelHead, weights: Map<string, tf.Tensor>, trainable: boolean): Qwen2Model {
    try {
      const take = (name: string): tf.Variable => {
        const tensor = weights.get(name);
        if (!tensor) throw new AgenticError(`model weights: missing ${name}`);
        return tf.variable(tensor, trainable, `${name}_${VARIABLE_ID.next++}`);
      };
      const parts: Parts = {
        embed: take('embed'),
        blocks: Array.from({ length: config.num_hidden_layers }, (_, i) => ({
          inputNorm: take(`${i}.input_norm`),
          q: take(`${i}.q`),
          k: take(`${i}.k`),
          v: take(`${i}.v`),
          bias: config.attention_bias ? { q: take(`${i}.q_bias`), k: take(`${i}.k_bias`), v: take(`${i}.v_bias`) } : null,
          qkNorm: FAMILIES[config.model_type].qkNorm ? { q: take(`${i}.q_norm`), k: take(`${i}.k_norm`) } : null,
          o: take(`${i}.o`),
          postNorm: take(`${i}.post_norm`),
          gate: take(`${i}.gate`),
          up: take(`${i}.up`),
          down: take(`${i}.down`),
          adapters: {},
        })),
        finalNorm: take('final_norm'),
        lmHead: head === 'lm' && !config.tie_word_embeddings ? take('lm_head') : null,
        valueHead: head === 'value' ? { w: take('value_w'), b: take('value_b') } : null,
      };
      return new Qwen2Model(config, head, parts, null);
    } finally {
      tf.dispose([...weights.values()]);
    }
  }

  /** The weights in Hugging Face names and layout, read back to the host (the base weights: adapters are ./lora.ts's). */
  async toWeights(): Promise<Map<string, HostTensor>> {
    const out = new Map<string, HostTensor>();
    const put = async (name: string, tensor: tf.Tensor) => {
      out.set(name, { shape: tensor.shape.slice(), data: (await tensor.data()) as Float32Array });
      tensor.dispose();
    };
    const copy = (v: tf.Variable) => tf.clone(v);
    const linear = (w: tf.Tensor) => tf.tidy(() => w.transpose());
    await put('model.embed_tokens.weight', copy(this.embed));
    for (const [i, block] of this.blocks.entries()) {
      const p = `model.layers.${i}.`;
      await put(`${p}input_layernorm.weight`, copy(block.inputNorm));
      for (const x of ['q', 'k', 'v'] as const) {
        await put(`${p}self_attn.${x}_proj.weight`, linear(block[x]));
        if (block.bias) await put(`${p}self_attn.${x}_proj.bias`, copy(block.bias[x]));
      }
      if (block.qkNorm) {
        await put(`${p}self_attn.q_norm.weight`, copy(block.qkNorm.q));
        await put(`${p}self_attn.k_norm.weight`, copy(block.qkNorm.k));
      }
      await put(`${p}self_attn.o_proj.weight`, linear(block.o));
      await put(`${p}post_attention_layernorm.weight`, copy(block.postNorm));
      await put(`${p}mlp.gate_proj.weight`, linear(block.gate));
      await put(`${p}mlp.up_proj.weight`, linear(block.up));
      await put(`${p}mlp.down_proj.weight`, linear(block.down));
    }
    await put('model.norm.weight', copy(this.finalNorm));
    if (this.lmHead) await put('lm_head.weight', copy(this.lmHead));
    if (this.valueHead) {
      await put('score.weight', linear(this.valueHead.w));
      await put('score.bias', copy(this.valueHead.b));
    }
    return out;
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

  /** The [in, out] of each projection (the shapes of ./lora.ts's adapters). */
  shapeOf(p: Projection): [number, number] {
    const { hidden, q, kv, ffn } = sizes(this.config);
    const shapes: Record<Projection, [number, number]> = {
      q: [hidden, q],
      k: [hidden, kv],
      v: [hidden, kv],
      o: [q, hidden],
      gate: [hidden, ffn],
      up: [hidden, ffn],
      down: [ffn, hidden],
    };
    return shapes[p];
  }

  /**
   * Gives each block its adapters (LoRA, ./lora.ts) and freezes every other weight: from here on
   * only the adapters train, and the modules the spec trains whole (their base values kept aside
   * for withoutAdapters; `modules` loads saved values into them). The model owns them from now on.
   */
  addAdapters(spec: LoraSpec, adapters: LayerAdapters[], modules: SavedModuleValues = {}): void {
    if (this.lora) throw new AgenticError('this model already has LoRA adapters');
    if (adapters.length !== this.blocks.length) throw new AgenticError(`LoRA: ${adapters.length} layers of adapters for ${this.blocks.length} blocks`);
    for (const v of this.variables) v.trainable = false;
    this.blocks.forEach((block, i) => (block.adapters = adapters[i]!));
    this.lora = { ...spec, modulesToSave: canonicalModules(spec.modulesToSave, this.config.tie_word_embeddings) };
    if (this.owned) this.owned.push(...adapterVariables(adapters));
    for (const [module, variable] of Object.entries(this.savedModules()) as Array<[SavedModule, tf.Variable]>) {
      const base = tf.variable(variable, false, `${variable.name}_base_${VARIABLE_ID.next++}`);
      this.baseModules[module === 'embed_tokens' ? 'embed' : 'lmHead'] = base;
      if (this.owned) this.owned.push(base);
      const saved = modules[module];
      if (saved) tf.tidy(() => variable.assign(tf.tensor(saved.data, saved.shape)));
      variable.trainable = true;
    }
  }

  /**
   * Folds the adapters into the weights (W + (alpha / r) A B) and drops them: the model computes
   * the same function as plain weights, every one of them `trainable` or frozen.
   */
  foldAdapters(trainable: boolean): void {
    if (!this.lora) return;
    const scale = loraScale(this.lora);
    for (const block of this.blocks) {
      for (const [p, adapter] of Object.entries(block.adapters) as Array<[Projection, Adapter]>) {
        tf.tidy(() => block[p].assign(block[p].add(tf.matMul(adapter.a, adapter.b).mul(scale))));
      }
      const dropped = adapterVariables([block.adapters]);
      block.adapters = {};
      if (this.owned) this.owned = this.owned.filter((v) => !dropped.includes(v));
      tf.dispose(dropped);
    }
    this.lora = null;
    const bases = Object.values(this.baseModules);
    if (this.owned) this.owned = this.owned.filter((v) => !bases.includes(v));
    tf.dispose(bases);
    this.baseModules = {};
    for (const v of this.variables) v.trainable = trainable;
  }

  /**
   * The same base weights without the adapters, sharing this model's variables (no copy): the
   * reference of a LoRA run is its frozen base. Disposing the view frees nothing.
   */
  withoutAdapters(): Qwen2Model {
    return new Qwen2Model(this.config, this.head, { ...this.baseParts(), blocks: this.blocks.map((b) => ({ ...b, adapters: {} })) }, []);
  }

  /**
   * The same base weights with copies of the adapters and of the whole-trained modules (not
   * trainable): a lagging actor_infer of a LoRA run holds its own over the shared base. Disposing it
   * frees only those copies.
   */
  withAdapterCopies(): Qwen2Model {
    const modules = Object.fromEntries(Object.entries(this.savedModules()).map(([m, v]) => [m, tf.variable(v, false, `${v.name}_copy_${VARIABLE_ID.next++}`)]));
    return this.withAdapters(this.lora!, copyAdapters(this.adapters), modules);
  }

  /**
   * The same base weights with `adapters` (an adapter an inference server loaded, say) and, for
   * the modules the spec trains whole, `modules` (host values, or variables the view takes). The
   * view owns the adapters and those modules: disposing it frees them, not the base.
   */
  withAdapters(spec: LoraSpec, adapters: LayerAdapters[], modules: SavedModuleValues | Partial<Record<SavedModule, tf.Variable>> = {}): Qwen2Model {
    const own = canonicalModules(spec.modulesToSave, this.config.tie_word_embeddings).map((module) => {
      const value = modules[module];
      if (!value) throw new AgenticError(`LoRA: no values for ${module}, which the adapter trains whole`);
      if (value instanceof tf.Variable) return [module, value] as const;
      const tensor = tf.tensor(value.data, value.shape);
      const variable = tf.variable(tensor, false, `${module}_${VARIABLE_ID.next++}`);
      tensor.dispose();
      return [module, variable] as const;
    });
    const chosen = Object.fromEntries(own) as Partial<Record<SavedModule, tf.Variable>>;
    const blocks = this.blocks.map((b, i) => ({ ...b, adapters: adapters[i]! }));
    const base = this.baseParts();
    const parts = { ...base, blocks, embed: chosen.embed_tokens ?? base.embed, lmHead: chosen.lm_head ?? base.lmHead };
    const view = new Qwen2Model(this.config, this.head, parts, [...adapterVariables(adapters), ...Object.values(chosen)]);
    view.lora = { ...spec, modulesToSave: own.map(([m]) => m) };
    view.baseModules = { embed: base.embed, lmHead: base.lmHead ?? undefined };
    return view;
  }

  /** Whether the two hold the same base weights (a LoRA view of the other, or the other itself). */
  sharesBaseWith(other: Qwen2Model): boolean {
    return this.finalNorm === other.finalNorm;
  }

  private parts(): Parts {
    return { embed: this.embed, blocks: this.blocks, finalNorm: this.finalNorm, lmHead: this.lmHead, valueHead: this.valueHead };
  }

  /** The parts with the base's own values of the modules a LoRA run trains whole. */
  private baseParts(): Parts {
    return { ...this.parts(), embed: this.baseModules.embed ?? this.embed, lmHead: this.baseModules.lmHead ?? this.lmHead };
  }

  get numParameters(): number {
    return this.variables.reduce((n, v) => n + v.size, 0);
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
        const { output, kv } = this.block(block, x, tables, mask, options.past?.[i]);
        x = output;
        present.push(kv);
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
    const attended = whole && causalAttentionAvailable() ? causalAttention(q, kNew, vNew, mask) : this.attention(q, k, v, mask, batch, length);
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

  /**
   * Grouped-query attention of queries q [batch, length, heads, head dim] over keys and values
   * [batch, kv heads, keys, head dim]; the mixed values as [batch * length, heads * head dim].
   */
  private attention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor, batch: number, length: number): tf.Tensor {
    const c = this.config;
    const kvHeads = c.num_key_value_heads;
    const groups = c.num_attention_heads / kvHeads;
    const headDim = c.head_dim;
    const keys = k.shape[2];
    // Without copying keys: the query heads that share a kv head are stacked along the row axis,
    // so one batched matMul per kv head serves the whole group.
    const qGrouped = q
      .reshape([batch, length, kvHeads, groups, headDim])
      .transpose([0, 2, 3, 1, 4])
      .reshape([batch, kvHeads, groups * length, headDim]);
    let mixed: tf.Tensor;
    if (batch * c.num_attention_heads * length * keys > attentionLimits.scores) {
      // Long sequences: the [length, keys] scores of a layer would not fit the wasm heap (and
      // a backward pass would keep them for every layer), so attend a block of queries at a time.
      const chunk = Math.max(1, Math.floor(attentionLimits.scores / (batch * c.num_attention_heads * keys)));
      mixed = chunkedAttention(qGrouped.reshape([batch, kvHeads, groups, length, headDim]), k, v, mask, 1 / Math.sqrt(headDim), chunk);
    } else {
      const scores = tf
        .matMul(qGrouped, k, false, true)
        .mul(1 / Math.sqrt(headDim))
        .reshape([batch, kvHeads, groups, length, keys])
        .add(mask);
      mixed = tf.matMul(tf.softmax(scores).reshape([batch, kvHeads, groups * length, keys]), v);
    }
    return mixed
      .reshape([batch, kvHeads, groups, length, headDim])
      .transpose([0, 3, 1, 2, 4])
      .reshape([batch * length, c.num_attention_heads * headDim]);
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
   * logits never exist for the whole batch, in the forward pass or the backward.
   */
  tokenStats(hidden: tf.Tensor3D, targets: Int32Array, options: { temperature?: number | Float32Array; chunkRows?: number } = {}) {
    const [batch, length, size] = hidden.shape;
    if (targets.length !== batch * length) throw new AgenticError(`tokenStats: ${targets.length} targets for ${batch}x${length} positions`);
    const temperature = options.temperature ?? 1;
    if (typeof temperature !== 'number' && temperature.length !== batch * length) {
      throw new AgenticError(`tokenStats: ${temperature.length} temperatures for ${batch}x${length} positions`);
    }
    const embedding = this.outputEmbedding();
    // on the host in two kernels where attention is (../engine/kernels/token_stats.ts)
    const stats = tf.tidy(() =>
      (causalAttentionAvailable() ? hostTokenStats : chunkedTokenStats)(hidden.reshape([batch * length, size]) as tf.Tensor2D, embedding, targets, {
        temperature,
        chunkRows: options.chunkRows ?? defaultChunkRows(this.config.vocab_size),
        embeddingGradient: (embedding as tf.Variable).trainable,
      }),
    );
    return tf.tidy(() => {
      const [logProbs, entropy] = tf.unstack(stats.reshape([batch, length, 2]), 2);
      stats.dispose();
      return { logProbs: logProbs as tf.Tensor2D, entropy: entropy as tf.Tensor2D };
    });
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

const VARIABLE_ID = { next: 0 };

// ---------------------------------------------------------------------------------------------
// Pieces of the forward pass

interface Sizes {
  hidden: number;
  q: number;
  kv: number;
  ffn: number;
  vocab: number;
}

function sizes(c: ModelConfig): Sizes {
  return {
    hidden: c.hidden_size,
    q: c.num_attention_heads * c.head_dim,
    kv: c.num_key_value_heads * c.head_dim,
    ffn: c.intermediate_size,
    vocab: c.vocab_size,
  };
}

// RMSNorm and the SwiGLU gate run on the host where attention does (../engine/kernels/rms_norm.ts, swiglu.ts)
function rmsNorm(x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor {
  if (causalAttentionAvailable()) return hostRmsNorm(x, weight, eps);
  return tf.tidy(() => x.mul(tf.rsqrt(tf.square(x).mean(-1, true).add(eps))).mul(weight));
}

function swiGlu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  if (causalAttentionAvailable()) return hostSwiGlu(gate, up);
  return tf.mul(gate.mul(tf.sigmoid(gate)), up);
}

function defaultPositions(batch: number, length: number, offset: number): Int32Array {
  const positions = new Int32Array(batch * length);
  for (let b = 0; b < batch; b++) for (let t = 0; t < length; t++) positions[b * length + t] = offset + t;
  return positions;
}

/** Position ids for a padded batch: each real token counts from 0; padding gets 0. */
export function positionsFromMask(mask: Uint8Array, batch: number, length: number): Int32Array {
  const positions = new Int32Array(batch * length);
  for (let b = 0; b < batch; b++) {
    let seen = 0;
    for (let t = 0; t < length; t++) {
      const i = b * length + t;
      positions[i] = mask[i] ? seen++ : 0;
    }
  }
  return positions;
}

/** RoPE's cos and sin per (position, head), tiled for q and k heads so no multiply broadcasts. */
interface RopeTables {
  cosQ: tf.Tensor2D;
  sinQ: tf.Tensor2D;
  cosK: tf.Tensor2D;
  sinK: tf.Tensor2D;
  /** [head_dim, head_dim]: x @ rotation = rotate_half(x) = [-x2, x1]. */
  rotation: tf.Tensor2D;
}

/**
 * RoPE's inverse frequencies theta^(-2i/d), i < d/2; with Llama 3's scaling (transformers'
 * `_compute_llama3_parameters`), rotations slower than the original context are divided by
 * `factor`, those faster than it / high_freq_factor are kept, and the ones between blend the two.
 */
function ropeFrequencies(c: ModelConfig): Float64Array {
  const dim = c.head_dim;
  const plain = Float64Array.from({ length: dim / 2 }, (_, i) => 1 / Math.pow(c.rope_theta, (2 * i) / dim));
  const scaling = llama3Rope(c);
  if (!scaling) return plain;
  const { factor, low_freq_factor: low, high_freq_factor: high, original_max_position_embeddings: context } = scaling;
  return plain.map((frequency) => {
    const wavelength = (2 * Math.PI) / frequency;
    if (wavelength < context / high) return frequency;
    if (wavelength > context / low) return frequency / factor;
    const smooth = (context / wavelength - low) / (high - low);
    return ((1 - smooth) * frequency) / factor + smooth * frequency;
  });
}

/** cos and sin of each position's rotary angles, [positions, head_dim] (rotate-half layout, as Qwen2). */
export function rotaryAngles(positions: Int32Array, c: ModelConfig): { cos: Float32Array; sin: Float32Array } {
  const dim = c.head_dim;
  const half = dim / 2;
  const inverseFrequencies = ropeFrequencies(c);
  const rows = positions.length;
  const cos = new Float32Array(rows * dim);
  const sin = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < half; i++) {
      // Same float32 rounding as the Python reference: angle = float32(pos) * float32(inv_freq).
      const angle = Math.fround(Math.fround(positions[r]!) * Math.fround(inverseFrequencies[i]!));
      cos[r * dim + i] = cos[r * dim + half + i] = Math.cos(angle);
      sin[r * dim + i] = sin[r * dim + half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

/** Tables for rows of [batch * length * heads, head_dim] (rotate-half layout, as Qwen2). */
function ropeTables(positions: Int32Array, c: ModelConfig): RopeTables {
  const dim = c.head_dim;
  const half = dim / 2;
  const rows = positions.length;
  const { cos, sin } = rotaryAngles(positions, c);
  const tile = (table: Float32Array, heads: number) => {
    const tiled = new Float32Array(rows * heads * dim);
    for (let r = 0; r < rows; r++) for (let h = 0; h < heads; h++) tiled.set(table.subarray(r * dim, (r + 1) * dim), (r * heads + h) * dim);
    return tf.tensor2d(tiled, [rows * heads, dim]);
  };
  const rotation = new Float32Array(dim * dim);
  for (let j = 0; j < half; j++) {
    rotation[(j + half) * dim + j] = -1;
    rotation[j * dim + j + half] = 1;
  }
  return {
    cosQ: tile(cos, c.num_attention_heads),
    sinQ: tile(sin, c.num_attention_heads),
    cosK: tile(cos, c.num_key_value_heads),
    sinK: tile(sin, c.num_key_value_heads),
    rotation: tf.tensor2d(rotation, [dim, dim]),
  };
}

function disposeRope(tables: RopeTables): void {
  tf.dispose([tables.cosQ, tables.sinQ, tables.cosK, tables.sinK, tables.rotation]);
}

/**
 * Rotates [batch * length, heads * head_dim] projections by position and returns them as
 * [batch, length, heads, head_dim]. rotate_half is a matMul with a fixed signed permutation:
 * on wasm that is far cheaper than splitting and concatenating the halves.
 */
function applyRope(x: tf.Tensor, cos: tf.Tensor2D, sin: tf.Tensor2D, rotation: tf.Tensor2D, shape: [number, number, number, number]): tf.Tensor4D {
  const rows = x.reshape([-1, shape[3]]);
  return rows.mul(cos).add(tf.matMul(rows, rotation).mul(sin)).reshape(shape) as tf.Tensor4D;
}

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

/**
 * Attention scores of one layer (batch x heads x queries x keys) above which queries go in
 * blocks. A setting rather than a constant so tests can force the blocked path on short inputs.
 */
export const attentionLimits = { scores: 1 << 22 };

/**
 * Attention for a block of queries at a time, with a hand-written gradient that recomputes each
 * block's probabilities in the backward pass, so no [queries, keys] matrix outlives its block
 * (memory-efficient attention). q: [batch, kv heads, groups, length, head dim]; k, v: [batch, kv
 * heads, keys, head dim]; mask: additive, [batch or 1, 1, 1, length, keys]. Returns the mixed
 * values as [batch, kv heads, groups, length, head dim].
 *   S = q k^T scale + mask;  P = softmax(S);  O = P v
 *   dV = P^T dO;  dP = dO v^T;  dS = P (dP - rowsum(dP P));  dq = dS k scale;  dk = dS^T q scale
 */
function chunkedAttention(q: tf.Tensor, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor, scale: number, chunk: number): tf.Tensor {
  const [batch, kvHeads, groups, length, headDim] = q.shape as [number, number, number, number, number];
  const keys = k.shape[2];
  const blocks: Array<[number, number]> = [];
  for (let start = 0; start < length; start += chunk) blocks.push([start, Math.min(length, start + chunk)]);
  // Blocks are cut from 3-D views: wasm slices tensors of rank 5 one element at a time in
  // JavaScript (two thirds of the rollout benchmark went there), and ranks 2 to 4 in loops of runs.
  const blockOf = (x: tf.Tensor, start: number, end: number) => {
    const [d0, d1, d2, d3, d4] = x.shape as [number, number, number, number, number];
    return x
      .reshape([d0 * d1 * d2, d3, d4])
      .slice([0, start, 0], [-1, end - start, -1])
      .reshape([d0, d1, d2, end - start, d4]);
  };
  const probsOf = (qq: tf.Tensor, kk: tf.Tensor, mask: tf.Tensor, start: number, end: number) => {
    const n = end - start;
    const qBlock = blockOf(qq, start, end).reshape([batch, kvHeads, groups * n, headDim]);
    const scores = tf
      .matMul(qBlock, kk, false, true)
      .mul(scale)
      .reshape([batch, kvHeads, groups, n, keys])
      .add(blockOf(mask, start, end));
    return { qBlock, probs: tf.softmax(scores).reshape([batch, kvHeads, groups * n, keys]) };
  };
  const op = tf.customGrad((qIn, kIn, vIn, save) => {
    const [qq, kk, vv] = [qIn as tf.Tensor, kIn as tf.Tensor4D, vIn as tf.Tensor4D];
    // the mask is saved too: the forward pass that made it disposes it before the backward runs
    (save as tf.GradSaveFunc)([qq, kk, vv, mask]);
    const value = tf.tidy(() =>
      tf.concat(
        blocks.map(([start, end]) =>
          tf.tidy(() => tf.matMul(probsOf(qq, kk, mask, start, end).probs, vv).reshape([batch, kvHeads, groups, end - start, headDim])),
        ),
        3,
      ),
    );
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [qs, ks, vs, savedMask] = saved as [tf.Tensor, tf.Tensor4D, tf.Tensor4D, tf.Tensor];
      const dq: tf.Tensor[] = [];
      let dk = tf.zerosLike(ks) as tf.Tensor;
      let dv = tf.zerosLike(vs) as tf.Tensor;
      for (const [start, end] of blocks) {
        const n = end - start;
        const [dqBlock, dkBlock, dvBlock] = tf.tidy(() => {
          const { qBlock, probs } = probsOf(qs, ks, savedMask, start, end);
          const dOut = blockOf(dy, start, end).reshape([batch, kvHeads, groups * n, headDim]);
          const dProbs = tf.matMul(dOut, vs, false, true);
          const dScores = probs.mul(dProbs.sub(dProbs.mul(probs).sum(-1, true))).mul(scale);
          return [
            tf.matMul(dScores, ks).reshape([batch, kvHeads, groups, n, headDim]),
            tf.matMul(dScores, qBlock, true, false),
            tf.matMul(probs, dOut, true, false),
          ];
        });
        dq.push(dqBlock);
        const [nextK, nextV] = [dk.add(dkBlock), dv.add(dvBlock)];
        tf.dispose([dk, dv, dkBlock, dvBlock]);
        [dk, dv] = [nextK, nextV];
      }
      const dqAll = tf.concat(dq, 3);
      tf.dispose(dq);
      return [dqAll, dk, dv];
    };
    return { value, gradFunc };
  });
  return op(q, k, v);
}

function defaultChunkRows(vocab: number): number {
  // About 4M logits per chunk: 16 MB of float32, whatever the vocabulary.
  return Math.max(16, Math.floor((1 << 22) / vocab));
}

/**
 * [rows, 2] = (log p(target), entropy) per row of `hidden` against `embedding` [vocab, hidden],
 * with a hand-written gradient that recomputes each chunk's logits in the backward pass.
 * d logp / d z = onehot - p;  d H / d z = -p (log p + H)  (z = logits / temperature). The
 * temperature is one number, or one per row (the temperature each token was sampled at).
 */
function chunkedTokenStats(hidden: tf.Tensor2D, embedding: tf.Tensor2D, targets: Int32Array, options: TokenStatsOptions): tf.Tensor2D {
  const rows = hidden.shape[0];
  const vocab = embedding.shape[0];
  const { temperature } = options;
  // a number, or a [chunk, 1] column of each row's 1 / temperature
  const scaleOf = (start: number, end: number): number | tf.Tensor2D =>
    typeof temperature === 'number'
      ? 1 / temperature
      : tf.tensor2d(
          temperature.subarray(start, end).map((t) => 1 / t),
          [end - start, 1],
        );
  const chunks: Array<[number, number]> = [];
  for (let start = 0; start < rows; start += options.chunkRows) chunks.push([start, Math.min(rows, start + options.chunkRows)]);
  const targetTensor = (start: number, end: number) => tf.tensor1d(targets.subarray(start, end), 'int32');

  const chunkForward = (h: tf.Tensor2D, e: tf.Tensor2D, start: number, end: number) => {
    const scale = scaleOf(start, end);
    const z = tf.matMul(h.slice([start, 0], [end - start, -1]), e, false, true).mul(scale);
    const logp = tf.logSoftmax(z);
    const p = tf.exp(logp);
    const entropy = p.mul(logp).sum(-1).neg();
    const oneHot = tf.oneHot(targetTensor(start, end), vocab);
    const targetLogp = logp.mul(oneHot).sum(-1);
    return { logp, p, entropy, oneHot, targetLogp, scale };
  };

  // A frozen embedding (LoRA) is no input of the op: its [vocab, hidden] gradient is never computed.
  const op = tf.customGrad((...args: unknown[]) => {
    const save = args.pop() as tf.GradSaveFunc;
    const [hh, ee] = [args[0] as tf.Tensor2D, (options.embeddingGradient ? args[1] : embedding) as tf.Tensor2D];
    save(options.embeddingGradient ? [hh, ee] : [hh]);
    const value = tf.tidy(() =>
      tf.concat(
        chunks.map(([start, end]) => {
          const { targetLogp, entropy } = chunkForward(hh, ee, start, end);
          return tf.stack([targetLogp, entropy], 1);
        }),
        0,
      ),
    );
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [hs, es] = [saved[0] as tf.Tensor2D, (saved[1] ?? embedding) as tf.Tensor2D];
      const dh: tf.Tensor[] = [];
      let de = options.embeddingGradient ? (tf.zerosLike(es) as tf.Tensor) : null;
      for (const [start, end] of chunks) {
        const [dhChunk, deChunk] = tf.tidy(() => {
          const { logp, p, entropy, oneHot, scale } = chunkForward(hs, es, start, end);
          const g = dy.slice([start, 0], [end - start, 2]);
          const gLogp = g.slice([0, 0], [-1, 1]);
          const gEntropy = g.slice([0, 1], [-1, 1]);
          const dz = oneHot
            .sub(p)
            .mul(gLogp)
            .sub(p.mul(logp.add(entropy.expandDims(1))).mul(gEntropy))
            .mul(scale);
          const hChunk = hs.slice([start, 0], [end - start, -1]);
          return de ? [tf.matMul(dz, es), tf.matMul(dz, hChunk, true, false)] : [tf.matMul(dz, es)];
        });
        dh.push(dhChunk!);
        if (de) {
          const next = de.add(deChunk!);
          tf.dispose([de, deChunk!]);
          de = next;
        }
      }
      const dhAll = tf.concat(dh, 0);
      tf.dispose(dh);
      return de ? [dhAll, de] : [dhAll];
    };
    return { value, gradFunc };
  });
  return (options.embeddingGradient ? op(hidden, embedding) : op(hidden)) as tf.Tensor2D;
}
