/**
 * From a `pretrain` reference to a model and its tokenizer, and back to a folder.
 *
 *   null, `agentic:nano`, `agentic:tiny`, `agentic:small`  the embedded family: seeded random weights of a preset
 *                                          shape with the project's own tokenizer
 *   a folder path                          a Hugging Face folder (config.json, safetensors, tokenizer)
 *   `org/name[@revision]`                  a hub id, from the local Hugging Face cache or downloaded
 */
import { ModelError } from '../errors';
import { modelConfig } from './config';
import { defaultTokenizer } from './default_tokenizer';
import { loadHfFolder, saveHfFolder, type ModelHead } from './hf_folder';
import { resolvePretrained, type ResolveOptions } from './hub';
import { MODEL_PRESETS, PRESET_PREFIX, presetConfig, type PresetName } from './presets';
import { Qwen2Model } from './qwen2';
import { Tokenizer } from './tokenizer';

export interface LoadedModel {
  model: Qwen2Model;
  tokenizer: Tokenizer;
  /** What was loaded, for logs: the preset name or the folder. */
  source: string;
}

export interface LoadModelOptions extends ResolveOptions {
  /** Seeds random weights (presets) and a critic's new value head. */
  seed: number;
  head?: ModelHead;
  trainable?: boolean;
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

export async function loadModel(pretrain: string | null, options: LoadModelOptions): Promise<LoadedModel> {
  const head = options.head ?? 'lm';
  const trainable = options.trainable ?? true;
  const name = presetOf(pretrain);
  if (name !== null) {
    const tokenizer = defaultTokenizer();
    const config = modelConfig(presetConfig(name, tokenizer.vocabSize));
    const model = Qwen2Model.random(config, { seed: options.seed, head, trainable });
    return { model, tokenizer, source: `${PRESET_PREFIX}${name} (random init, seed ${options.seed})` };
  }
  const folder = await resolvePretrained(pretrain!, options);
  const loaded = loadHfFolder(folder, { head });
  if (loaded.tokenizer.vocabSize > loaded.config.vocab_size) {
    throw new ModelError(`${pretrain}: the tokenizer has ${loaded.tokenizer.vocabSize} ids but the model only ${loaded.config.vocab_size} embeddings`);
  }
  const model = Qwen2Model.fromWeights(loaded.config, loaded.weights, { head, trainable, seed: options.seed, source: folder });
  return { model, tokenizer: loaded.tokenizer, source: folder };
}

/** Saves a model as a Hugging Face folder (atomically); `dtype` is model_args.dtype. */
export async function saveModel(folder: string, model: Qwen2Model, tokenizer: Tokenizer, dtype = 'fp32'): Promise<void> {
  await saveHfFolder(folder, { config: model.config, weights: await model.toWeights(), tokenizer, dtype, head: model.head });
}
