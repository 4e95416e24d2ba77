/** A tiny Qwen2 shape for fast tests: every feature on (GQA, qkv bias, untied head). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { modelConfig, type ModelConfig } from '../../src/model/config';

export function tinyConfig(overrides: Record<string, unknown> = {}): ModelConfig {
  return modelConfig({
    vocab_size: 37,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rope_theta: 10000,
    rms_norm_eps: 1e-6,
    max_position_embeddings: 64,
    tie_word_embeddings: false,
    ...overrides,
  });
}

/** A 2-layer, 32-wide policy shape on a real tokenizer's vocabulary: fast enough for many rollouts and training steps. */
export function microPolicyConfig(vocabSize: number): ModelConfig {
  return modelConfig({
    vocab_size: vocabSize,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rope_theta: 10000,
    rms_norm_eps: 1e-6,
    max_position_embeddings: 2048,
    tie_word_embeddings: true,
  });
}

/** Logits a reference implementation recorded for a fixture folder (logits.json: the ids and their logits). */
export interface RecordedLogits {
  ids: number[][];
  logits: number[][][];
}

export function recordedLogits(folder: string): RecordedLogits {
  return JSON.parse(readFileSync(join(folder, 'logits.json'), 'utf8')) as RecordedLogits;
}
