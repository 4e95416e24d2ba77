/**
 * The model's shape, in Hugging Face `config.json` field names (Qwen2 architecture), so a
 * Qwen2.5 folder's config reads as it is and our saved folders read back in Python.
 */
import { z } from 'zod';

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
    /** Qwen2 has biases on q/k/v projections and none elsewhere; other families may differ. */
    attention_bias: z.boolean().default(true),
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

export type ModelConfigInput = z.input<typeof ModelConfigShape>;

/** A parsed config with the derived sizes filled in. */
export type ModelConfig = z.output<typeof ModelConfigShape> & {
  num_key_value_heads: number;
  head_dim: number;
};

/**
 * Reads what transformers 5 moved: `rope_parameters: {rope_theta, rope_type}` in place of a
 * top-level `rope_theta`. Only plain RoPE is implemented; scaled variants are refused rather
 * than silently computed wrong.
 */
function normaliseRope(input: Record<string, unknown>): Record<string, unknown> {
  for (const key of ['rope_parameters', 'rope_scaling']) {
    const settings = input[key] as Record<string, unknown> | null | undefined;
    const type = settings?.rope_type ?? settings?.type;
    if (type !== undefined && type !== 'default') {
      throw new Error(`${key}: rope type '${String(type)}' is not supported (only the default RoPE is)`);
    }
  }
  const scaling = (input.rope_parameters ?? input.rope_scaling) as Record<string, unknown> | null | undefined;
  if (input.use_sliding_window === true) throw new Error('sliding-window attention is not supported (use_sliding_window: true)');
  if (input.rope_theta === undefined && typeof scaling?.rope_theta === 'number') return { ...input, rope_theta: scaling.rope_theta };
  return input;
}

export function modelConfig(input: ModelConfigInput | Record<string, unknown>): ModelConfig {
  const parsed = ModelConfigShape.parse(normaliseRope(input as Record<string, unknown>));
  return {
    ...parsed,
    num_key_value_heads: parsed.num_key_value_heads ?? parsed.num_attention_heads,
    head_dim: parsed.head_dim ?? parsed.hidden_size / parsed.num_attention_heads,
  };
}

/**
 * config.json as we write it: what the model reads, the keys a loaded config carried through,
 * and what transformers needs to pick the class (a policy or a one-label token classifier).
 */
export function hfConfigJson(config: ModelConfig, head: 'lm' | 'value' = 'lm'): Record<string, unknown> {
  const { id2label: _id2label, label2id: _label2id, num_labels: _numLabels, ...rest } = config as Record<string, unknown>;
  return {
    ...rest,
    architectures: [head === 'value' ? 'Qwen2ForTokenClassification' : 'Qwen2ForCausalLM'],
    ...(head === 'value' ? { num_labels: 1, id2label: { 0: 'LABEL_0' }, label2id: { LABEL_0: 0 } } : {}),
    model_type: 'qwen2',
    torch_dtype: 'float32',
    use_sliding_window: false,
  };
}
