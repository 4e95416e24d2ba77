/**
 * Hugging Face model folders: config.json, safetensors weights (single or sharded), tokenizer
 * files and generation_config.json, as transformers saves and loads them. Weights are checked
 * against the tensor names and shapes of the config's architecture (Qwen2, Qwen3 or Llama).
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ZodError } from 'zod';
import { firstLine, ModelError } from '../errors';
import { writeFileAtomic, writeFolderAtomic } from '../util/atomic';
import { displayPath } from '../util/paths';
import { hfConfigJson, modelConfig, type ModelConfig } from './config';
import { FAMILIES } from './families';
import { INDEX_FILE, readCheckpoint, saveDtype, SINGLE_FILE, torchDtypeName, writeSafetensors, type SaveDtype, type Weights } from './safetensors';
import { readJsonObject, Tokenizer, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE } from './tokenizer';

export const CONFIG_FILE = 'config.json';
export const GENERATION_CONFIG_FILE = 'generation_config.json';

/** generation_config.json as saved by transformers (eos_token_id, temperature, top_p, ...). */
export type GenerationConfig = Record<string, unknown>;

export interface HfModel {
  config: ModelConfig;
  /** Exactly the tensors of expectedWeightShapes(config), in that order. */
  weights: Weights;
  tokenizer: Tokenizer;
  generationConfig?: GenerationConfig;
}

/** A policy (Qwen2ForCausalLM and the like) or a critic (Qwen2ForTokenClassification and the like, one label). */
export type ModelHead = 'lm' | 'value';

/** The critic's value head, which a critic started from a policy checkpoint does not have yet. */
const VALUE_HEAD_TENSORS = ['score.weight', 'score.bias'];

/**
 * The tensors of a model and their shapes, in Hugging Face names. Linear weights are
 * [out_features, in_features]; Qwen3 adds a [head_dim] norm for q and for k per layer; lm_head is
 * absent when the embedding is tied to it, and a critic has `score` (hidden -> 1) in its place.
 */
export function expectedWeightShapes(config: ModelConfig, head: ModelHead = 'lm'): Map<string, number[]> {
  const hidden = config.hidden_size;
  const queries = config.num_attention_heads * config.head_dim;
  const keyValues = config.num_key_value_heads * config.head_dim;
  const shapes = new Map<string, number[]>([['model.embed_tokens.weight', [config.vocab_size, hidden]]]);
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const p = `model.layers.${layer}`;
    shapes.set(`${p}.input_layernorm.weight`, [hidden]);
    for (const [name, out] of [
      ['q', queries],
      ['k', keyValues],
      ['v', keyValues],
    ] as const) {
      shapes.set(`${p}.self_attn.${name}_proj.weight`, [out, hidden]);
      if (config.attention_bias) shapes.set(`${p}.self_attn.${name}_proj.bias`, [out]);
    }
    if (FAMILIES[config.model_type].qkNorm) {
      shapes.set(`${p}.self_attn.q_norm.weight`, [config.head_dim]);
      shapes.set(`${p}.self_attn.k_norm.weight`, [config.head_dim]);
    }
    shapes.set(`${p}.self_attn.o_proj.weight`, [hidden, queries]);
    shapes.set(`${p}.post_attention_layernorm.weight`, [hidden]);
    shapes.set(`${p}.mlp.gate_proj.weight`, [config.intermediate_size, hidden]);
    shapes.set(`${p}.mlp.up_proj.weight`, [config.intermediate_size, hidden]);
    shapes.set(`${p}.mlp.down_proj.weight`, [hidden, config.intermediate_size]);
  }
  shapes.set('model.norm.weight', [hidden]);
  if (head === 'value') {
    shapes.set('score.weight', [1, hidden]);
    shapes.set('score.bias', [1]);
  } else if (!config.tie_word_embeddings) {
    shapes.set('lm_head.weight', [config.vocab_size, hidden]);
  }
  return shapes;
}

/**
 * Tensors some checkpoints carry that the model does not use: rotary caches, lm_head when tied
 * or when a critic is started from a policy checkpoint.
 */
function isIgnorable(name: string, config: ModelConfig, head: ModelHead): boolean {
  if (name.endsWith('.rotary_emb.inv_freq')) return true;
  return name === 'lm_head.weight' && (config.tie_word_embeddings || head === 'value');
}

/**
 * The weights the model uses, in expectedWeightShapes order. A missing tensor, a wrong shape or
 * an unknown tensor is a one-line error naming `file` and the tensor.
 */
export function checkWeights(weights: Weights, config: ModelConfig, file: string, head: ModelHead = 'lm'): Weights {
  const expected = expectedWeightShapes(config, head);
  const checked: Weights = new Map();
  for (const [name, shape] of expected) {
    const tensor = weights.get(name);
    if (!tensor && head === 'value' && VALUE_HEAD_TENSORS.includes(name)) continue;
    if (!tensor) throw new ModelError(`${file}: tensor '${name}' is missing (expected shape [${shape.join(', ')}] for this config)`);
    if (tensor.shape.length !== shape.length || tensor.shape.some((n, i) => n !== shape[i])) {
      throw new ModelError(`${file}: tensor '${name}' has shape [${tensor.shape.join(', ')}], expected [${shape.join(', ')}] for this config`);
    }
    checked.set(name, tensor);
  }
  for (const name of weights.keys()) {
    if (!expected.has(name) && !isIgnorable(name, config, head)) {
      throw new ModelError(`${file}: unexpected tensor '${name}' (not part of a ${config.model_type} model with this config)`);
    }
  }
  return checked;
}

/**
 * A weight that is NaN or infinite makes every output NaN: such a model (a diverged run's, a
 * damaged file) is refused with the first tensor that holds one, rather than loaded to score 0%.
 */
export function refuseNonFinite(weights: Weights, file: string): void {
  for (const [name, { data }] of weights) {
    for (let i = 0; i < data.length; i++) {
      const value = data[i]!;
      if (value - value !== 0)
        throw new ModelError(
          `${file}: tensor '${name}' holds ${Number.isNaN(value) ? 'NaN' : value} at index ${i}: the weights are damaged or come from a diverged run`,
        );
    }
  }
}

/** config.json parsed into a ModelConfig; a bad field is one line naming the file and key. */
export function readModelConfig(folder: string): ModelConfig {
  const path = join(folder, CONFIG_FILE);
  if (!existsSync(path)) throw new ModelError(`${displayPath(folder)}: no ${CONFIG_FILE} (not a Hugging Face model folder)`);
  const json = readJsonObject(path);
  try {
    return modelConfig(json);
  } catch (error) {
    if (error instanceof ZodError) {
      const issue = error.issues[0]!;
      throw new ModelError(`${displayPath(path)}: ${issue.path.join('.') || 'config'}: ${issue.message}`);
    }
    throw new ModelError(`${displayPath(path)}: ${firstLine(error)}`);
  }
}

/** Reads a model folder; a critic (`head: 'value'`) may start from a policy's folder. */
export function loadHfFolder(folder: string, options: { head?: ModelHead } = {}): HfModel {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new ModelError(`${displayPath(folder)}: no such model folder`);
  const config = readModelConfig(folder);
  const weightsFile = existsSync(join(folder, SINGLE_FILE)) ? SINGLE_FILE : INDEX_FILE;
  const { tensors } = readCheckpoint(folder);
  const weights = checkWeights(tensors, config, displayPath(join(folder, weightsFile)), options.head);
  refuseNonFinite(weights, displayPath(join(folder, weightsFile)));
  const tokenizer = Tokenizer.fromFolder(folder);
  const generationPath = join(folder, GENERATION_CONFIG_FILE);
  const generationConfig = existsSync(generationPath) ? readJsonObject(generationPath) : undefined;
  return { config, weights, tokenizer, ...(generationConfig ? { generationConfig } : {}) };
}

export interface SaveHfFolderOptions {
  config: ModelConfig;
  weights: Weights;
  tokenizer: Tokenizer;
  /** model_args.dtype (fp32, fp16, bf16) or a safetensors dtype; default fp32. */
  dtype?: string | SaveDtype;
  /** Written as generation_config.json; by default the config's and tokenizer's special ids. */
  generationConfig?: GenerationConfig;
  /** A critic saves `score` in place of lm_head, as Qwen2ForTokenClassification. */
  head?: ModelHead;
}

/** generation_config.json for a model with no other: its bos/eos/pad ids. */
function defaultGenerationConfig(config: ModelConfig, tokenizer: Tokenizer): GenerationConfig {
  const ids: GenerationConfig = {
    bos_token_id: config.bos_token_id ?? tokenizer.bosTokenId,
    eos_token_id: config.eos_token_id ?? tokenizer.eosTokenId,
    pad_token_id: tokenizer.padTokenId,
  };
  return Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== null && v !== undefined));
}

/**
 * Saves a model folder that transformers loads. The folder is written beside `folder` and then
 * renamed into place (replacing what was there), so an interrupted save leaves nothing half-written.
 */
export async function saveHfFolder(folder: string, options: SaveHfFolderOptions): Promise<void> {
  const dtype = saveDtype(options.dtype ?? 'F32');
  const weights = checkWeights(options.weights, options.config, `${displayPath(join(folder, SINGLE_FILE))} (saving)`, options.head);
  const tokenizerFiles = options.tokenizer.toFiles();
  const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  await writeFolderAtomic(folder, (tmp) => {
    writeFileAtomic(join(tmp, CONFIG_FILE), json({ ...hfConfigJson(options.config, options.head), torch_dtype: torchDtypeName(dtype) }));
    writeFileAtomic(join(tmp, GENERATION_CONFIG_FILE), json(options.generationConfig ?? defaultGenerationConfig(options.config, options.tokenizer)));
    writeFileAtomic(join(tmp, TOKENIZER_FILE), JSON.stringify(tokenizerFiles.tokenizerJson));
    writeFileAtomic(join(tmp, TOKENIZER_CONFIG_FILE), json(tokenizerFiles.tokenizerConfig));
    writeSafetensors(join(tmp, SINGLE_FILE), weights, { dtype });
  });
}
