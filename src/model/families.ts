/**
 * The architectures agentic reads: one decoder (./qwen2.ts) with three variants, chosen by
 * config.json's `model_type` (else its `architectures`):
 *
 *   qwen2   Qwen2, Qwen2.5: biases on the q, k and v projections
 *   qwen3   Qwen3: no projection biases; an RMSNorm over each head of q and of k, before RoPE
 *   llama   Llama 3, 3.1, 3.2, SmolLM2: no projection biases; RoPE frequencies scaled as Llama 3
 *           does when the config says so (rope_type llama3, ./config.ts)
 *
 * Everything else (grouped-query attention, RoPE's rotate-half layout, SwiGLU, RMSNorm, tied or
 * untied embeddings) is shared. The class names are what transformers writes in `architectures`
 * and picks the model class by.
 */
export const FAMILIES = {
  qwen2: { causalLM: 'Qwen2ForCausalLM', tokenClassification: 'Qwen2ForTokenClassification', projectionBias: true, qkNorm: false },
  qwen3: { causalLM: 'Qwen3ForCausalLM', tokenClassification: 'Qwen3ForTokenClassification', projectionBias: false, qkNorm: true },
  llama: { causalLM: 'LlamaForCausalLM', tokenClassification: 'LlamaForTokenClassification', projectionBias: false, qkNorm: false },
} as const;

export type ModelType = keyof typeof FAMILIES;

export const MODEL_TYPES = Object.keys(FAMILIES) as ModelType[];

/**
 * The model_type a config.json describes: its `model_type`, else the family of its first
 * architecture, else qwen2 (folders written before model_type was read). An unknown one is an
 * Error naming it and the ones read.
 */
export function modelTypeOf(json: Record<string, unknown>): ModelType {
  const known = MODEL_TYPES.join(', ');
  const declared = json.model_type;
  if (declared !== undefined && declared !== null) {
    if (typeof declared === 'string' && declared in FAMILIES) return declared as ModelType;
    throw new Error(`model_type '${String(declared)}' is not supported (agentic reads ${known})`);
  }
  const architectures = Array.isArray(json.architectures) ? (json.architectures as unknown[]) : [];
  if (architectures.length === 0) return 'qwen2';
  const found = MODEL_TYPES.find((type) => [FAMILIES[type].causalLM, FAMILIES[type].tokenClassification].includes(architectures[0] as never));
  if (!found) throw new Error(`architectures '${String(architectures[0])}' is not supported (agentic reads ${known})`);
  return found;
}
