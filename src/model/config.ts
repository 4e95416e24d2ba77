/**
 * The model's shape, in Hugging Face `config.json` field names, so a Qwen2.5, Qwen3 or Llama
 * folder's config reads as it is and our saved folders read back in Python. Which of the three
 * (./families.ts) comes from `model_type`.
 */
import { z } from 'zod';
import { FAMILIES, MODEL_TYPES, modelTypeOf, type ModelType } from './families';

export const ModelConfigShape = z
  .object({
    vocab_size: z.number().int().positive(),
    hidden_size: z.number().int().positive(),
    intermediate_size: z.number().int().positive(),
    num_hidden_layers: z.number().int().positive(),
    num_attention_heads: z.number().int().positive(),
    num_key_value_heads: z.number().int().positive().optional(),
    head_dim: z.number().int().positive().optional(),
    rope_theta: z.number().positive().default(10000),
    rms_norm_eps: z.number().positive().default(1e-6),
    max_position_embeddings: z.number().int().positive().default(32768),
    tie_word_embeddings: z.boolean().default(false),
    model_type: z.enum(MODEL_TYPES),
    /** Biases on the q/k/v projections: Qwen2 has them (its config has no such key); Qwen3 and Llama by default not. */
    attention_bias: z.boolean().optional(),
    mlp_bias: z.literal(false, { message: 'biases on the MLP projections are not supported' }).optional(),
    hidden_act: z.literal('silu').default('silu'),
    bos_token_id: z.number().int().nullable().optional(),
    eos_token_id: z
      .union([z.number().int(), z.array(z.number().int())])
      .nullable()
      .optional(),
  })
  .loose()
  .refine((c) => c.num_attention_heads % (c.num_key_value_heads ?? c.num_attention_heads) === 0, {
    message: 'num_attention_heads must be a multiple of num_key_value_heads',
    path: ['num_key_value_heads'],
  });

/** What a config may give: model_type too may be left out (./families.ts, modelTypeOf). */
export type ModelConfigInput = Omit<z.input<typeof ModelConfigShape>, 'model_type'> & { model_type?: ModelType };

/** A parsed config with the derived sizes and the family's defaults filled in. */
export type ModelConfig = z.output<typeof ModelConfigShape> & {
  num_key_value_heads: number;
  head_dim: number;
  attention_bias: boolean;
};

/** Llama 3's RoPE scaling (transformers' `_compute_llama3_parameters`), as config.json gives it. */
export interface Llama3Rope {
  factor: number;
  low_freq_factor: number;
  high_freq_factor: number;
  original_max_position_embeddings: number;
}

const Llama3Rope = z.object({
  factor: z.number().positive(),
  low_freq_factor: z.number().positive(),
  high_freq_factor: z.number().positive(),
  original_max_position_embeddings: z.number().int().positive(),
});

/** The RoPE settings: `rope_parameters` (transformers 5) or `rope_scaling` (4.x); null when plain. */
function ropeSettings(input: Record<string, unknown>): Record<string, unknown> | null {
  return (input.rope_parameters ?? input.rope_scaling ?? null) as Record<string, unknown> | null;
}

/** The Llama 3 scaling a config asks for, or null for plain RoPE. */
export function llama3Rope(config: ModelConfig): Llama3Rope | null {
  const settings = ropeSettings(config as Record<string, unknown>);
  return (settings?.rope_type ?? settings?.type) === 'llama3' ? Llama3Rope.parse(settings) : null;
}

/**
 * Reads what transformers 5 moved: `rope_parameters: {rope_theta, rope_type, ...}` in place of a
 * top-level `rope_theta` and `rope_scaling`. Plain RoPE and Llama 3's scaling are implemented;
 * other scaled variants are refused rather than silently computed wrong.
 */
function normaliseRope(input: Record<string, unknown>): Record<string, unknown> {
  for (const key of ['rope_parameters', 'rope_scaling']) {
    const settings = input[key] as Record<string, unknown> | null | undefined;
    const type = settings?.rope_type ?? settings?.type;
    if (type === 'llama3') {
      const checked = Llama3Rope.safeParse(settings);
      if (!checked.success) throw new Error(`${key}.${checked.error.issues[0]!.path.join('.')}: ${checked.error.issues[0]!.message}`);
      if (checked.data.high_freq_factor <= checked.data.low_freq_factor) throw new Error(`${key}: high_freq_factor must be above low_freq_factor`);
    } else if (type !== undefined && type !== 'default') {
      throw new Error(`${key}: rope type '${String(type)}' is not supported (the default RoPE and llama3 are)`);
    }
  }
  const scaling = ropeSettings(input);
  if (input.use_sliding_window === true) throw new Error('sliding-window attention is not supported (use_sliding_window: true)');
  if (input.rope_theta === undefined && typeof scaling?.rope_theta === 'number') return { ...input, rope_theta: scaling.rope_theta };
  return input;
}

export function modelConfig(input: ModelConfigInput | Record<string, unknown>): ModelConfig {
  const json = input as Record<string, unknown>;
  const parsed = ModelConfigShape.parse(normaliseRope({ ...json, model_type: modelTypeOf(json) }));
  const family = FAMILIES[parsed.model_type];
  const attentionBias = parsed.attention_bias ?? family.projectionBias;
  // Qwen3 and Llama put the bias on o_proj too, which the forward pass does not have
  if (attentionBias && !family.projectionBias) throw new Error(`attention_bias: ${parsed.model_type} with projection biases is not supported`);
  return {
    ...parsed,
    num_key_value_heads: parsed.num_key_value_heads ?? parsed.num_attention_heads,
    head_dim: parsed.head_dim ?? parsed.hidden_size / parsed.num_attention_heads,
    attention_bias: attentionBias,
  };
}

/**
 * config.json as we write it: what the model reads, the keys a loaded config carried through,
 * and what transformers needs to pick the class (a policy or a one-label token classifier).
 */
export function hfConfigJson(config: ModelConfig, head: 'lm' | 'value' = 'lm'): Record<string, unknown> {
  const { id2label: _id2label, label2id: _label2id, num_labels: _numLabels, ...rest } = config as Record<string, unknown>;
  const family = FAMILIES[config.model_type];
  return {
    ...rest,
    architectures: [head === 'value' ? family.tokenClassification : family.causalLM],
    ...(head === 'value' ? { num_labels: 1, id2label: { 0: 'LABEL_0' }, label2id: { LABEL_0: 0 } } : {}),
    torch_dtype: 'float32',
    ...(config.model_type === 'llama' ? {} : { use_sliding_window: false }),
  };
}
