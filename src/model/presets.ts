/**
 * The embedded model family: small Qwen2 shapes that train on a laptop CPU, paired with the
 * project's own byte-level BPE tokenizer (assets/tokenizer). `pretrain: null` (the default)
 * starts the `tiny` preset from seeded random weights; `pretrain: agentic:<name>` names one.
 */
import type { ModelConfigInput } from './config';

export const PRESET_PREFIX = 'agentic:';

export const MODEL_PRESETS = {
  /**
   * About 0.16M parameters: four narrow layers, for the grid games' compact prompts (cheap enough
   * for hundreds of RL steps). Depth over width: two 64-wide layers cost the same but read a
   * cell's column far worse (docs/learning.md).
   */
  nano: { hidden_size: 48, intermediate_size: 144, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2 },
  /** About 0.9M parameters with the built-in 1024-token vocabulary. */
  tiny: { hidden_size: 128, intermediate_size: 384, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2 },
  /** About 5M parameters. */
  small: { hidden_size: 256, intermediate_size: 768, num_hidden_layers: 6, num_attention_heads: 8, num_key_value_heads: 2 },
} as const satisfies Record<string, Partial<ModelConfigInput>>;

export type PresetName = keyof typeof MODEL_PRESETS;

export function presetConfig(name: PresetName, vocabSize: number): ModelConfigInput {
  return {
    vocab_size: vocabSize,
    ...MODEL_PRESETS[name],
    rope_theta: 10000,
    rms_norm_eps: 1e-6,
    max_position_embeddings: 4096,
    tie_word_embeddings: true,
  };
}
