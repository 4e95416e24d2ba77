/**
 * From a `pretrain` reference to a model and its tokenizer, and back to a folder.
 *
 *   null, `agentic:nano`, `agentic:tiny`, `agentic:small`  the embedded family: seeded random weights of a preset
 *                                          shape with the project's own tokenizer
 *   a folder path                          a Hugging Face folder (config.json, safetensors, tokenizer)
 *   `org/name[@revision]`                  a hub id, from the local Hugging Face cache or downloaded
 *   a LoRA adapter folder                  PEFT's adapter_config.json and adapter_model.safetensors
 *                                          (./lora.ts): the base it names, plus the adapter
 *
 * An adapter may also come on its own (`adapter`, model_args.adapter_name_or_path) over any base.
 * A LoRA run keeps it as adapters that train; everyone else folds it into the weights.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ModelError } from '../errors';
import { displayPath } from '../util/paths';
import { modelConfig } from './config';
import { defaultTokenizer } from './default_tokenizer';
import { loadHfFolder, saveHfFolder, type ModelHead } from './hf_folder';
import { resolvePretrained, type ResolveOptions } from './hub';
import { tf } from '../engine/tf';
import { adapterBase, isAdapterFolder, loraScale, MODULE_PATHS, saveAdapterFolder, type Adapter, type Projection } from './lora';
import { applyLora } from './lora_adapters';
import { MODEL_PRESETS, PRESET_PREFIX, presetConfig, type PresetName } from './presets';
import { Qwen2Model } from './qwen2';
import type { Weights } from './safetensors';
import { Tokenizer } from './tokenizer';

export interface LoadedModel {
  model: Qwen2Model;
  tokenizer: Tokenizer;
  /** What was loaded, for logs: the preset name or the folder (and the adapter's folder). */
  source: string;
  /** The base model as an adapter folder names it (base_model_name_or_path): a preset's name, a folder's absolute path or a hub id. */
  base: string;
}

export interface LoadModelOptions extends ResolveOptions {
  /** Seeds random weights (presets) and a critic's new value head. */
  seed: number;
  head?: ModelHead;
  trainable?: boolean;
  /** A PEFT adapter folder to put on the model (model_args.adapter_name_or_path). */
  adapter?: string | null;
  /** Keep an adapter as LoRA adapters that train (a LoRA run); else it is folded into the weights. */
  keepAdapters?: boolean;
}

/** A model as loaded, before its adapter: `adapter` is the PEFT folder to put on it (absolute), or null. */
export interface BaseModel extends LoadedModel {
  adapter: string | null;
}

export const DEFAULT_PRESET: PresetName = 'tiny';

/** The preset a reference names (null: the default one), or null when it names a folder or hub id. */
export function presetOf(pretrain: string | null): PresetName | null {
  if (pretrain !== null && !pretrain.startsWith(PRESET_PREFIX)) return null;
  const name = pretrain === null ? DEFAULT_PRESET : pretrain.slice(PRESET_PREFIX.length);
  if (!(name in MODEL_PRESETS)) {
    throw new ModelError(
      `pretrain '${pretrain}': no such built-in model; built in: ${Object.keys(MODEL_PRESETS)
        .map((n) => PRESET_PREFIX + n)
        .join(', ')}`,
    );
  }
  return name as PresetName;
}

/** Only the tokenizer of a `pretrain` reference (no weights read), for work that needs no model. */
export async function loadTokenizer(pretrain: string | null, options: ResolveOptions = {}): Promise<Tokenizer> {
  if (presetOf(pretrain) !== null) return defaultTokenizer();
  return Tokenizer.fromFolder(await resolvePretrained(pretrain!, options));
}

/** A model with its adapter, if any: kept as adapters that train (`keepAdapters`) or folded into its weights. */
export async function loadModel(pretrain: string | null, options: LoadModelOptions): Promise<LoadedModel> {
  const { adapter, ...loaded } = await loadBaseModel(pretrain, options);
  try {
    applyLora(
      loaded.model,
      options.keepAdapters
        ? { use: 'train', spec: null, folder: adapter, seed: options.seed }
        : { use: 'fold', folder: adapter, trainable: options.trainable ?? true },
    );
  } catch (error) {
    loaded.model.dispose();
    throw error;
  }
  return loaded;
}

/**
 * The model a `pretrain` reference names, without its adapter: the adapter comes from `adapter`,
 * or from `pretrain` naming an adapter folder (whose base is loaded). applyLora puts it on.
 */
export async function loadBaseModel(pretrain: string | null, options: LoadModelOptions): Promise<BaseModel> {
  const local = pretrain === null || presetOf(pretrain) !== null ? null : resolve(options.cwd ?? process.cwd(), pretrain);
  if (local && existsSync(local) && isAdapterFolder(local)) {
    if (options.adapter) throw new ModelError(`${pretrain} is a LoRA adapter folder, and adapter_name_or_path names another; give one of them`);
    const base = adapterBase(local);
    if (!base)
      throw new ModelError(
        `${pretrain}: its adapter_config.json names no base_model_name_or_path; give the base as pretrain and the adapter as adapter_name_or_path`,
      );
    return await loadBaseModel(base, { ...options, adapter: local });
  }
  const loaded = await loadWeights(pretrain, options);
  if (!options.adapter) return { ...loaded, adapter: null };
  const folder = resolve(options.cwd ?? process.cwd(), options.adapter);
  return { ...loaded, source: `${loaded.source} with the LoRA adapter ${displayPath(folder)}`, adapter: folder };
}

async function loadWeights(pretrain: string | null, options: LoadModelOptions): Promise<LoadedModel> {
  const head = options.head ?? 'lm';
  const trainable = options.trainable ?? true;
  const name = presetOf(pretrain);
  if (name !== null) {
    const tokenizer = defaultTokenizer();
    const config = modelConfig(presetConfig(name, tokenizer.vocabSize));
    const model = Qwen2Model.random(config, { seed: options.seed, head, trainable });
    return { model, tokenizer, source: `${PRESET_PREFIX}${name} (random init, seed ${options.seed})`, base: `${PRESET_PREFIX}${name}` };
  }
  const folder = await resolvePretrained(pretrain!, options);
  const loaded = loadHfFolder(folder, { head });
  if (loaded.tokenizer.vocabSize > loaded.config.vocab_size) {
    throw new ModelError(`${pretrain}: the tokenizer has ${loaded.tokenizer.vocabSize} ids but the model only ${loaded.config.vocab_size} embeddings`);
  }
  const model = Qwen2Model.fromWeights(loaded.config, loaded.weights, { head, trainable, seed: options.seed, source: folder });
  // a hub id stays one (PEFT's convention); a folder is named by its absolute path
  const base = existsSync(resolve(options.cwd ?? process.cwd(), pretrain!)) ? folder : pretrain!;
  return { model, tokenizer: loaded.tokenizer, source: folder, base };
}

/**
 * Saves a model as a Hugging Face folder (atomically); `dtype` is model_args.dtype. A model with
 * LoRA adapters saves them alone, as PEFT's adapter folder naming `base` (./lora.ts), unless
 * `merged` asks for its weights with the adapters folded in, as a plain folder.
 */
export async function saveModel(
  folder: string,
  model: Qwen2Model,
  tokenizer: Tokenizer,
  options: { dtype?: string; base?: string; merged?: boolean } = {},
): Promise<void> {
  const dtype = options.dtype ?? 'fp32';
  if (model.lora && !options.merged) {
    if (options.base === undefined) throw new ModelError(`${displayPath(folder)}: saving LoRA adapters needs the name of their base model`);
    await saveAdapterFolder(folder, {
      spec: model.lora,
      adapters: model.adapters,
      modules: model.savedModules(),
      tied: model.config.tie_word_embeddings,
      base: options.base,
      dtype,
    });
    return;
  }
  const weights = await model.toWeights();
  if (model.lora) await foldInto(weights, model);
  await saveHfFolder(folder, { config: model.config, weights, tokenizer, dtype, head: model.head });
}

/** Adds each adapter's (alpha / r) A B to its projection's weight in Hugging Face tensors ([out, in]). */
async function foldInto(weights: Weights, model: Qwen2Model): Promise<void> {
  const scale = loraScale(model.lora!);
  for (const [layer, adapters] of model.adapters.entries()) {
    for (const [p, { a, b }] of Object.entries(adapters) as Array<[Projection, Adapter]>) {
      const delta = tf.tidy(() => tf.matMul(a, b).mul(scale).transpose());
      const values = (await delta.data()) as Float32Array;
      delta.dispose();
      const target = weights.get(`model.layers.${layer}.${MODULE_PATHS[p]}.weight`)!.data;
      for (let i = 0; i < values.length; i++) target[i]! += values[i]!;
    }
  }
}
