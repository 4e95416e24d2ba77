/**
 * OpenAI's completions API with vLLM's token-id extensions: a prompt of token ids in; the
 * generated ids (`return_token_ids`) and their log-probs, tokens spelled `token_id:<id>`
 * (`return_tokens_as_token_ids`), out. A null field means its default, as in OpenAI's API.
 */
import { z } from 'zod';
import type { Completion } from './batcher';
import { RequestError, seed, stopStrings, stopTokenIds, tokenId, topLogProbs } from '../util/request_body';
import type { GenerationSpec } from './request';

/** OpenAI's default max_tokens. */
const DEFAULT_MAX_TOKENS = 16;

export const CompletionsBody = z.strictObject({
  model: z.string().nullish(),
  prompt: z.array(tokenId),
  max_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.number().int().min(-1).nullish(),
  seed: seed.nullish(),
  stop: stopStrings.nullish(),
  stop_token_ids: stopTokenIds.nullish(),
  /** The sampled tokens' log-probs, with this many most likely tokens of every step (0: the sampled ones alone). */
  logprobs: topLogProbs.nullish(),
  return_token_ids: z.boolean().nullish(),
  return_tokens_as_token_ids: z.boolean().nullish(),
  stream: z.literal(false, { message: 'streaming is not served' }).nullish(),
});
export type CompletionsBody = z.output<typeof CompletionsBody>;

/** A prompt as text, or a batch of prompts, is refused with a message of its own. */
export function refusePromptForm(body: unknown): void {
  const prompt = (body as { prompt?: unknown } | null)?.prompt;
  if (typeof prompt === 'string' || (Array.isArray(prompt) && typeof prompt[0] === 'string')) {
    throw new RequestError(400, 'prompt: this server takes token ids, not text (tokenize with /tokenize)', 'prompt');
  }
  if (Array.isArray(prompt) && Array.isArray(prompt[0])) {
    throw new RequestError(400, 'prompt: one prompt of ids per request; send a batch as concurrent requests', 'prompt');
  }
}

/** `adapters`: the loaded LoRA adapters, one of which `model` may name. */
export function completionsSpec(body: CompletionsBody, adapters: readonly string[]): GenerationSpec {
  return {
    rid: null,
    promptIds: body.prompt,
    maxNewTokens: body.max_tokens ?? null,
    defaultMaxNewTokens: DEFAULT_MAX_TOKENS,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    topK: body.top_k ?? -1,
    seed: body.seed ?? null,
    stopTokenIds: body.stop_token_ids ?? [],
    stopStrings: body.stop ?? [],
    topLogProbs: body.logprobs ?? 0,
    adapter: body.model != null && adapters.includes(body.model) ? body.model : null,
    fields: { prompt: 'prompt', maxNewTokens: 'max_tokens', stopTokenIds: 'stop_token_ids', adapter: 'model' },
  };
}

const FINISH = { stop: 'stop', length: 'length', abort: 'abort' } as const;

/** `piece(id)`: the text one token adds to the response ('' for a special token). */
export function completionsResponse(completion: Completion, body: CompletionsBody, model: string, created: number, piece: (id: number) => string) {
  const { tokens, logProbs } = completion;
  let offset = 0;
  const offsets = tokens.map((id) => {
    const at = Math.min(offset, completion.text.length);
    offset += piece(id).length;
    return at;
  });
  const name = (id: number) => (body.return_tokens_as_token_ids ? `token_id:${id}` : piece(id));
  // as vLLM: the step's top tokens and the sampled one, by name
  const top = (step: number) =>
    Object.fromEntries([...completion.alternatives![step]!.map((a) => [name(a.token), a.logProb] as const), [name(tokens[step]!), logProbs[step]!]]);
  const logprobs =
    body.logprobs == null
      ? null
      : {
          tokens: tokens.map(name),
          token_logprobs: logProbs,
          top_logprobs: body.logprobs > 0 ? tokens.map((_, step) => top(step)) : null,
          text_offset: offsets,
        };
  return {
    id: `cmpl-${completion.rid}`,
    object: 'text_completion',
    created,
    model,
    choices: [
      {
        index: 0,
        text: completion.text,
        ...(body.return_token_ids ? { prompt_token_ids: completion.promptIds, token_ids: tokens } : {}),
        finish_reason: FINISH[completion.finish.type],
        logprobs,
      },
    ],
    usage: { prompt_tokens: completion.promptIds.length, completion_tokens: tokens.length, total_tokens: completion.promptIds.length + tokens.length },
  };
}

/** The served model, then each loaded LoRA adapter as vLLM lists them (its folder as `root`, the model as `parent`). */
export function modelsResponse(model: string, created: number, maxContext: number, adapters: ReadonlyMap<string, string> = new Map()) {
  return {
    object: 'list',
    data: [
      { id: model, object: 'model', created, owned_by: 'agentic', max_model_len: maxContext },
      ...[...adapters].map(([id, root]) => ({ id, object: 'model', created, owned_by: 'agentic', root, parent: model, max_model_len: maxContext })),
    ],
  };
}
