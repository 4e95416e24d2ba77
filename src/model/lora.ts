/**
 * LoRA (Hu et al. 2021) in PEFT's layout: a projection y = x W gains a low-rank update,
 *
 *   y = x W + (alpha / r) (x A) B          A: [in, r], B: [r, out]
 *
 * with W frozen and only A and B trained. A starts uniform in ±1/sqrt(in) (PEFT's
 * kaiming_uniform(a=sqrt(5))) and B at zero, so a new adapter leaves the model as it was.
 *
 * Which projections: ROLL's `lora_target`, a comma-separated list of module names (q_proj, k_proj,
 * v_proj, o_proj, gate_proj, up_proj, down_proj), `all-linear` for all of them (every linear layer
 * but the output head, as PEFT and ROLL read it), or a regular expression (one with `*`, `$`, `|`
 * or `(`, as ROLL tells them apart) matched against the whole module name
 * (`model.layers.3.self_attn.q_proj`), as PEFT matches it.
 *
 * Besides the adapters, whole modules may train (ROLL's `additional_target`, PEFT's
 * `modules_to_save`): the token embedding and the output head. With tied embeddings they are one
 * matrix, trained once (PEFT's `ensure_weight_tying`). The base keeps its own frozen copy of them.
 *
 * On disk an adapter is PEFT's folder: adapter_config.json and adapter_model.safetensors with
 * tensors `base_model.model.model.layers.<i>.<module>.lora_A.weight` ([r, in]) and `lora_B.weight`
 * ([out, r]), which PeftModel.from_pretrained, vLLM and SGLang load; the whole modules are
 * `base_model.model.model.embed_tokens.weight` and `base_model.model.lm_head.weight` ([vocab,
 * hidden]), which PEFT loads and vLLM refuses.
 *
 * This file is the layer's math and PEFT's folder, on plain values; putting adapters on a model and
 * taking them off (applyLora, the one way a caller gives a model its adapters) is ./lora_adapters.ts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../engine/tf';
import { ModelError } from '../errors';
import { writeFileAtomic, writeFolderAtomic } from '../util/atomic';
import { displayPath } from '../util/paths';
import type { ModelConfig } from './config';
import { readSafetensors, saveDtype, writeSafetensors, type HostTensor, type Weights } from './safetensors';
import { readJsonObject } from './tokenizer';

const PROJECTIONS = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const;
export type Projection = (typeof PROJECTIONS)[number];

/** Each projection's module path inside a decoder layer, as transformers names it. */
export const MODULE_PATHS: Record<Projection, string> = {
  q: 'self_attn.q_proj',
  k: 'self_attn.k_proj',
  v: 'self_attn.v_proj',
  o: 'self_attn.o_proj',
  gate: 'mlp.gate_proj',
  up: 'mlp.up_proj',
  down: 'mlp.down_proj',
};

const moduleName = (p: Projection) => MODULE_PATHS[p].split('.')[1]!;

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

/** The modules a LoRA run may train whole beside its adapters (PEFT's modules_to_save). */
export const SAVED_MODULES = ['embed_tokens', 'lm_head'] as const;
export type SavedModule = (typeof SAVED_MODULES)[number];

/** What the adapters of a model are: their rank, their alpha, and which projections of which layers have one. */
export interface LoraSpec {
  rank: number;
  alpha: number;
  /** Module names, or a regular expression matched against whole module paths (see the header). */
  targets: readonly string[] | { pattern: string };
  /** Modules trained whole beside the adapters (ROLL's additional_target); none when absent. */
  modulesToSave?: readonly SavedModule[];
}

/** The values of a model's whole-trained modules, [vocab, hidden] each. */
export type SavedModuleValues = Partial<Record<SavedModule, HostTensor>>;

/** One projection's adapter, input-major like the model's weights. */
export interface Adapter {
  a: tf.Variable;
  b: tf.Variable;
}

export type LayerAdapters = Partial<Record<Projection, Adapter>>;

/** ROLL's reading of lora_target: a regular expression when it has one of these characters, else a list. */
export function parseTarget(target: string): LoraSpec['targets'] {
  if (/[*$|(]/.test(target)) return { pattern: target };
  const names = target
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
  if (names.includes('all-linear')) return [...new Set([...names.filter((n) => n !== 'all-linear'), ...PROJECTIONS.map(moduleName)])];
  return names;
}

/**
 * ROLL's additional_target (comma-separated, as LLaMA-Factory reads it) as the modules it trains
 * whole. A module path's last name counts (`model.embed_tokens`, as PEFT writes it); anything but
 * the embedding and the head is an AgenticError naming it.
 */
export function parseAdditionalTarget(value: string | readonly string[]): SavedModule[] {
  const names = (typeof value === 'string' ? value.split(',') : value).map((n) => n.trim()).filter((n) => n.length > 0);
  const modules = new Set<SavedModule>();
  for (const name of names) {
    const last = name.split('.').at(-1)!;
    if (!(SAVED_MODULES as readonly string[]).includes(last)) {
      throw new ModelError(`'${name}' cannot be trained whole beside the adapters: ${SAVED_MODULES.join(' and ')} can`);
    }
    modules.add(last as SavedModule);
  }
  return SAVED_MODULES.filter((m) => modules.has(m));
}

/**
 * The whole-trained modules as a model holds them: with tied embeddings the head is the embedding,
 * so either name means that one matrix and it is called embed_tokens.
 */
export function canonicalModules(modules: readonly SavedModule[] | undefined, tied: boolean): SavedModule[] {
  const wanted = modules ?? [];
  if (tied) return wanted.length > 0 ? ['embed_tokens'] : [];
  return SAVED_MODULES.filter((m) => wanted.includes(m));
}

const isPattern = (targets: LoraSpec['targets']): targets is { pattern: string } => !Array.isArray(targets);

/** Whether layer `layer`'s projection `p` gets an adapter. */
function targeted(targets: LoraSpec['targets'], layer: number, p: Projection): boolean {
  if (isPattern(targets)) return new RegExp(`^(?:${targets.pattern})$`).test(`model.layers.${layer}.${MODULE_PATHS[p]}`);
  return (targets as readonly string[]).includes(moduleName(p));
}

/**
 * Which projections of each of `layers` layers the spec adapts. A module name that is no
 * projection, or a pattern that matches none, is a ModelError naming it.
 */
export function adaptedProjections(spec: LoraSpec, layers: number): Projection[][] {
  if (isPattern(spec.targets)) {
    try {
      new RegExp(spec.targets.pattern);
    } catch {
      throw new ModelError(`lora_target: '${spec.targets.pattern}' is not a regular expression`);
    }
  } else {
    const known = PROJECTIONS.map(moduleName);
    const unknown = (spec.targets as readonly string[]).find((n) => !known.includes(n));
    if (unknown !== undefined) throw new ModelError(`lora_target: '${unknown}' is no linear layer of this model (${known.join(', ')}, or all-linear)`);
  }
  const chosen = Array.from({ length: layers }, (_, layer) => PROJECTIONS.filter((p) => targeted(spec.targets, layer, p)));
  if (chosen.every((ps) => ps.length === 0)) throw new ModelError(`lora_target: '${describeTargets(spec.targets)}' matches no linear layer of this model`);
  return chosen;
}

function describeTargets(targets: LoraSpec['targets']): string {
  return isPattern(targets) ? targets.pattern : targets.join(',');
}

/** (alpha / r): how much of B A is added. */
export function loraScale(spec: LoraSpec): number {
  return spec.alpha / spec.rank;
}

/** x A B scaled: the update a projection's adapter adds to x W. */
export function loraDelta(x: tf.Tensor, adapter: Adapter, scale: number): tf.Tensor {
  return tf.matMul(tf.matMul(x as tf.Tensor2D, adapter.a), adapter.b).mul(scale);
}

/** The sizes of a model (a Qwen2Model, say) that fix the shapes of its adapters and of its embedding. */
export interface ModelSizes {
  readonly config: ModelConfig;
}

/** The [in, out] of projection `p` of a model of these sizes, input-major like its weights. */
export function projectionShape({ config }: ModelSizes, p: Projection): [number, number] {
  const hidden = config.hidden_size;
  const q = config.num_attention_heads * config.head_dim;
  const kv = config.num_key_value_heads * config.head_dim;
  const ffn = config.intermediate_size;
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

/** Every adapter variable, layer by layer in PROJECTIONS order, A before B. */
export function adapterVariables(adapters: readonly LayerAdapters[]): tf.Variable[] {
  return adapters.flatMap((layer) => PROJECTIONS.flatMap((p) => (layer[p] ? [layer[p].a, layer[p].b] : [])));
}

// ---------------------------------------------------------------------------------------------
// PEFT's folder

const peftName = (layer: number, p: Projection, matrix: 'A' | 'B') => `base_model.model.model.layers.${layer}.${MODULE_PATHS[p]}.lora_${matrix}.weight`;

/** Where PEFT saves a whole-trained module. */
const MODULE_TENSORS: Record<SavedModule, string> = {
  embed_tokens: 'base_model.model.model.embed_tokens.weight',
  lm_head: 'base_model.model.lm_head.weight',
};

/**
 * The adapters as PEFT's tensors ([r, in] and [out, r]), and the whole-trained modules, read back
 * to the host. A tied embedding is written under both names, as PEFT's ensure_weight_tying does.
 */
async function peftWeights(adapters: readonly LayerAdapters[], modules: Partial<Record<SavedModule, tf.Tensor>>, tied: boolean): Promise<Weights> {
  const out: Weights = new Map();
  for (const [name, tensor] of Object.entries(modules) as Array<[SavedModule, tf.Tensor]>) {
    const value = { shape: tensor.shape.slice(), data: ((await tensor.data()) as Float32Array).slice() };
    out.set(MODULE_TENSORS[name], value);
    if (tied) out.set(MODULE_TENSORS.lm_head, value);
  }
  for (const [layer, projections] of adapters.entries()) {
    for (const p of PROJECTIONS) {
      const adapter = projections[p];
      if (!adapter) continue;
      for (const [matrix, variable] of [
        ['A', adapter.a],
        ['B', adapter.b],
      ] as const) {
        const transposed = tf.tidy(() => variable.transpose());
        out.set(peftName(layer, p, matrix), { shape: transposed.shape.slice(), data: (await transposed.data()) as Float32Array });
        transposed.dispose();
      }
    }
  }
  return out;
}

/** adapter_config.json as PEFT writes it for a causal LM (the fields its LoraConfig reads; the rest take PEFT's defaults). */
function peftConfigJson(spec: LoraSpec, base: string | null, tied: boolean): Record<string, unknown> {
  const modules = spec.modulesToSave ?? [];
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: base,
    r: spec.rank,
    lora_alpha: spec.alpha,
    lora_dropout: 0,
    target_modules: isPattern(spec.targets) ? spec.targets.pattern : [...spec.targets].sort(),
    bias: 'none',
    fan_in_fan_out: false,
    use_rslora: false,
    use_dora: false,
    modules_to_save: modules.length > 0 ? [...modules] : null,
    // the head and the embedding stay one matrix, in PEFT as here (a newer field of PEFT's: written only when needed)
    ...(tied && modules.length > 0 ? { ensure_weight_tying: true } : {}),
    layers_to_transform: null,
    init_lora_weights: true,
    inference_mode: true,
  };
}

/** Writes a PEFT adapter folder (atomically: written beside `folder`, then renamed into place). */
export async function saveAdapterFolder(
  folder: string,
  options: {
    spec: LoraSpec;
    adapters: readonly LayerAdapters[];
    /** The whole-trained modules (spec.modulesToSave), [vocab, hidden] each. */
    modules?: Partial<Record<SavedModule, tf.Tensor>>;
    tied: boolean;
    base: string | null;
    dtype?: string;
  },
): Promise<void> {
  const weights = await peftWeights(options.adapters, options.modules ?? {}, options.tied);
  await writeFolderAtomic(folder, (tmp) => {
    writeFileAtomic(join(tmp, ADAPTER_CONFIG_FILE), `${JSON.stringify(peftConfigJson(options.spec, options.base, options.tied), null, 2)}\n`);
    writeSafetensors(join(tmp, ADAPTER_WEIGHTS_FILE), weights, { dtype: saveDtype(options.dtype ?? 'F32') });
  });
}

export function isAdapterFolder(folder: string): boolean {
  return existsSync(join(folder, ADAPTER_CONFIG_FILE));
}

/** The base model an adapter folder names (base_model_name_or_path), or null. */
export function adapterBase(folder: string): string | null {
  const base = readJsonObject(join(folder, ADAPTER_CONFIG_FILE)).base_model_name_or_path;
  return typeof base === 'string' && base.length > 0 ? base : null;
}

/** A PEFT adapter folder read back: its spec, its tensors per layer and projection ([in, r] and [r, out]) and its whole-trained modules. */
export interface AdapterFolder {
  spec: LoraSpec;
  tensors: Array<Partial<Record<Projection, { a: HostTensor; b: HostTensor }>>>;
  modules: SavedModuleValues;
}

/**
 * Reads a PEFT LoRA folder for a model of `layers` layers and of `model`'s sizes. What this
 * engine cannot apply (another PEFT method, DoRA, rsLoRA, biases, per-module ranks, modules to save,
 * a tensor of another name or shape) is a ModelError naming the folder and the field.
 */
export function readAdapterFolder(folder: string, layers: number, model: ModelSizes): AdapterFolder {
  const shown = displayPath(folder);
  const configPath = join(folder, ADAPTER_CONFIG_FILE);
  if (!existsSync(configPath)) throw new ModelError(`${shown}: no ${ADAPTER_CONFIG_FILE} (not a PEFT adapter folder)`);
  const spec = peftSpec(readJsonObject(configPath), displayPath(configPath), model.config.tie_word_embeddings);
  const chosen = adaptedProjections(spec, layers);
  const file = join(folder, ADAPTER_WEIGHTS_FILE);
  if (!existsSync(file)) throw new ModelError(`${shown}: no ${ADAPTER_WEIGHTS_FILE}`);
  const { tensors } = readSafetensors(file);
  const expected = new Set<string>();
  const take = (name: string, shape: number[]): HostTensor => {
    expected.add(name);
    const tensor = tensors.get(name);
    if (!tensor) throw new ModelError(`${displayPath(file)}: tensor '${name}' is missing`);
    if (tensor.shape.join(',') !== shape.join(',')) {
      throw new ModelError(`${displayPath(file)}: tensor '${name}' has shape [${tensor.shape.join(', ')}], expected [${shape.join(', ')}]`);
    }
    return tensor;
  };
  const perLayer = chosen.map((projections, layer) => {
    const out: Partial<Record<Projection, { a: HostTensor; b: HostTensor }>> = {};
    for (const p of projections) {
      const [inputs, outputs] = projectionShape(model, p);
      const a = take(peftName(layer, p, 'A'), [spec.rank, inputs]);
      out[p] = { a: transposed(a), b: transposed(take(peftName(layer, p, 'B'), [outputs, spec.rank])) };
    }
    return out;
  });
  const modules = readModules(tensors, spec.modulesToSave!, model, displayPath(file));
  for (const module of spec.modulesToSave!) for (const name of moduleTensorNames(module, model.config.tie_word_embeddings)) expected.add(name);
  const unexpected = [...tensors.keys()].find((name) => !expected.has(name));
  if (unexpected !== undefined)
    throw new ModelError(`${displayPath(file)}: unexpected tensor '${unexpected}' (not an adapter of this config's target_modules or modules_to_save)`);
  return { spec, tensors: perLayer, modules };
}

/**
 * The spec an adapter_config.json describes, for a model whose embeddings are `tied` or not; what
 * this engine cannot apply is a ModelError naming the file (`shown`) and the field.
 */
function peftSpec(json: Record<string, unknown>, shown: string, tied: boolean): LoraSpec {
  const refuse = (field: string, why: string): never => {
    throw new ModelError(`${shown}: ${field}: ${why}`);
  };
  if (json.peft_type !== 'LORA') refuse('peft_type', `'${String(json.peft_type)}' is not LORA`);
  for (const flag of ['use_dora', 'use_rslora', 'fan_in_fan_out'] as const) if (json[flag] === true) refuse(flag, 'not supported');
  if (json.bias !== undefined && json.bias !== 'none') refuse('bias', `'${String(json.bias)}' is not supported (none is)`);
  for (const key of ['rank_pattern', 'alpha_pattern'] as const) {
    if (json[key] && Object.keys(json[key] as object).length > 0) refuse(key, 'per-module ranks and alphas are not supported');
  }
  let saved: SavedModule[] = [];
  if (json.modules_to_save !== undefined && json.modules_to_save !== null) {
    if (!Array.isArray(json.modules_to_save) || !json.modules_to_save.every((m) => typeof m === 'string'))
      refuse('modules_to_save', 'must be a list of module names');
    try {
      saved = parseAdditionalTarget(json.modules_to_save as string[]);
    } catch (error) {
      refuse('modules_to_save', (error as Error).message);
    }
  }
  // without it PEFT unties the head from a trained embedding (or the other way), which a tied model cannot hold
  if (tied && saved.length > 0 && json.ensure_weight_tying !== true) {
    refuse(
      'modules_to_save',
      'on a model with tied embeddings PEFT unties the head from the embedding unless ensure_weight_tying is true; this engine keeps them one matrix',
    );
  }
  if (json.layers_to_transform !== undefined && json.layers_to_transform !== null) refuse('layers_to_transform', 'not supported');
  const rank = json.r;
  const alpha = json.lora_alpha;
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 1) refuse('r', 'must be a positive integer');
  if (typeof alpha !== 'number' || alpha <= 0) refuse('lora_alpha', 'must be a positive number');
  const targetsJson = json.target_modules;
  const targets: LoraSpec['targets'] =
    typeof targetsJson === 'string'
      ? { pattern: targetsJson }
      : Array.isArray(targetsJson) && targetsJson.every((t) => typeof t === 'string')
        ? (targetsJson as string[])
        : refuse('target_modules', 'must be a list of module names or a regular expression');
  return { rank: rank as number, alpha: alpha as number, targets, modulesToSave: canonicalModules(saved, tied) };
}

/**
 * The whole-trained modules' tensors, [vocab, hidden]. A tied embedding may be saved under either
 * name or both (PEFT writes both); both must then hold the same values.
 */
function readModules(tensors: Weights, modules: readonly SavedModule[], model: ModelSizes, shown: string): SavedModuleValues {
  const { vocab_size: vocab, hidden_size: hidden, tie_word_embeddings: tied } = model.config;
  const take = (name: string): HostTensor | undefined => {
    const tensor = tensors.get(name);
    if (tensor && tensor.shape.join(',') !== `${vocab},${hidden}`) {
      throw new ModelError(`${shown}: tensor '${name}' has shape [${tensor.shape.join(', ')}], expected [${vocab}, ${hidden}]`);
    }
    return tensor;
  };
  const out: SavedModuleValues = {};
  for (const module of modules) {
    const names = moduleTensorNames(module, tied);
    const found = names.map(take).filter((t): t is HostTensor => t !== undefined);
    if (found.length === 0) throw new ModelError(`${shown}: tensor '${names[0]}' is missing (modules_to_save names ${module})`);
    if (found.some((t) => !sameValues(t.data, found[0]!.data))) {
      throw new ModelError(`${shown}: '${MODULE_TENSORS.embed_tokens}' and '${MODULE_TENSORS.lm_head}' differ, but the model ties them`);
    }
    out[module] = found[0]!;
  }
  return out;
}

/** The tensor names a whole-trained module may be saved under: a tied embedding is also the head. */
function moduleTensorNames(module: SavedModule, tied: boolean): string[] {
  return tied ? Object.values(MODULE_TENSORS) : [MODULE_TENSORS[module]];
}

function sameValues(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}

/** A [rows, cols] host matrix as [cols, rows]. */
function transposed(t: HostTensor): HostTensor {
  const [rows, cols] = t.shape as [number, number];
  const data = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) data[c * rows + r] = t.data[r * cols + c]!;
  return { shape: [cols, rows], data };
}
