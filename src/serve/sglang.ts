/**
 * SGLang's native API, in its names and semantics: /generate (token ids in, token ids and their
 * log-probs out), the weight update, pause/continue, abort, model info and /tokenize. Each body
 * is read strictly: a field SGLang has and this server does not serve is refused, never ignored.
 */
import { z } from 'zod';
import type { Completion, ModelInfo } from './batcher';
import { BOUNDS, RequestError, rid, seed, stopStrings, stopTokenIds, tokenId, topLogProbs } from '../util/request_body';
import type { GenerationSpec } from './request';

/** SGLang's default when sampling_params has no max_new_tokens. */
const DEFAULT_MAX_NEW_TOKENS = 128;

export const GenerateBody = z.strictObject({
  input_ids: z.array(tokenId),
  sampling_params: z
    .strictObject({
      max_new_tokens: z.number().int().min(1).optional(),
      temperature: z.number().min(0).default(1),
      top_p: z.number().gt(0).max(1).default(1),
      top_k: z.number().int().min(-1).default(-1),
      stop_token_ids: stopTokenIds.default([]),
      stop: stopStrings.optional(),
      sampling_seed: seed.optional(),
      // what clients send to ask for what is done anyway; the other value is refused
      skip_special_tokens: z.literal(true, { message: 'only true is served (the text leaves special tokens out)' }).optional(),
      no_stop_trim: z.literal(false, { message: 'only false is served (the text ends before a matched stop string)' }).optional(),
    })
    .default({ temperature: 1, top_p: 1, top_k: -1, stop_token_ids: [] }),
  return_logprob: z.boolean().default(false),
  /** With return_logprob: this many most likely tokens of every step (output_top_logprobs). */
  top_logprobs_num: topLogProbs.default(0),
  return_text_in_logprobs: z.boolean().default(false),
  logprob_start_len: z.literal(-1, { message: 'only -1 is served (the log-probs of the output ids; prompt log-probs are not computed)' }).optional(),
  stream: z.literal(false, { message: 'streaming is not served' }).optional(),
  rid: rid.optional(),
  /** The name of a loaded LoRA adapter (SGLang's field name); null or absent: the served model. */
  lora_path: z.string().min(1).nullish(),
});
export type GenerateBody = z.output<typeof GenerateBody>;

export const GENERATE_HINTS: Record<string, string> = {
  text: 'this server takes token ids: input_ids',
};

/** A list of lists is SGLang's batch form (with a list of lora_paths); one request here is one sequence. */
export function refuseBatch(body: unknown): void {
  const { input_ids: ids, lora_path: adapter } = (body ?? {}) as { input_ids?: unknown; lora_path?: unknown };
  if (Array.isArray(ids) && Array.isArray(ids[0])) {
    throw new RequestError(400, 'input_ids: one sequence of ids per request; send a batch as concurrent requests', 'input_ids');
  }
  if (Array.isArray(adapter)) throw new RequestError(400, 'lora_path: one adapter name per request (the batch form is not served)', 'lora_path');
}

export function generateSpec(body: GenerateBody): GenerationSpec {
  const p = body.sampling_params;
  return {
    rid: body.rid ?? null,
    promptIds: body.input_ids,
    maxNewTokens: p.max_new_tokens ?? null,
    defaultMaxNewTokens: DEFAULT_MAX_NEW_TOKENS,
    temperature: p.temperature,
    topP: p.top_p,
    topK: p.top_k,
    seed: p.sampling_seed ?? null,
    stopTokenIds: p.stop_token_ids,
    stopStrings: p.stop ?? [],
    topLogProbs: body.return_logprob ? body.top_logprobs_num : 0,
    adapter: body.lora_path ?? null,
    fields: { prompt: 'input_ids', maxNewTokens: 'sampling_params.max_new_tokens', stopTokenIds: 'sampling_params.stop_token_ids', adapter: 'lora_path' },
  };
}

/** `piece(id)`: the text one token adds to the response (for return_text_in_logprobs). */
export function generateResponse(completion: Completion, body: GenerateBody, piece: (id: number) => string) {
  const entry = (logProb: number, id: number) => [logProb, id, body.return_text_in_logprobs ? piece(id) : null];
  const logprobs = body.return_logprob
    ? {
        output_token_logprobs: completion.tokens.map((token, i) => entry(completion.logProbs[i]!, token)),
        ...(completion.alternatives ? { output_top_logprobs: completion.alternatives.map((step) => step.map((a) => entry(a.logProb, a.token))) } : {}),
      }
    : {};
  return {
    output_ids: completion.tokens,
    text: completion.text,
    meta_info: {
      id: completion.rid,
      prompt_tokens: completion.promptIds.length,
      completion_tokens: completion.tokens.length,
      finish_reason: completion.finish,
      ...logprobs,
      weight_version: completion.weightVersion,
    },
  };
}

export const UpdateWeightsBody = z.strictObject({
  model_path: z.string().min(1),
  weight_version: z.string().min(1).optional(),
});

export const AbortBody = z.strictObject({ rid });

/** SGLang's /load_lora_adapter (vLLM's /v1/load_lora_adapter takes the same two fields). */
export const LoadLoraBody = z.strictObject({ lora_name: z.string().min(1), lora_path: z.string().min(1) });
export const UnloadLoraBody = z.strictObject({ lora_name: z.string().min(1) });

/** SGLang's answer to the adapter endpoints: success, the error, and every adapter loaded (name to folder). */
export function loraResponse(error: string | null, loaded: ReadonlyMap<string, string>) {
  return { success: error === null, error_message: error ?? '', loaded_adapters: Object.fromEntries(loaded) };
}

/** SGLang's pause modes; only its default, abort, is served. */
export const PauseBody = z.strictObject({ mode: z.literal('abort').optional() });

export const EmptyBody = z.strictObject({});

export const TokenizeBody = z.strictObject({
  prompt: z.string().max(BOUNDS.tokenizeChars),
  add_special_tokens: z.boolean().default(true),
});

export function modelInfoResponse(info: ModelInfo) {
  return {
    model_path: info.modelPath,
    tokenizer_path: info.tokenizerPath,
    is_generation: true,
    max_context_length: info.maxContext,
    vocab_size: info.vocabSize,
    tokenizer_sha256: info.tokenizerSha256,
    chat_template_sha256: info.chatTemplateSha256,
  };
}
