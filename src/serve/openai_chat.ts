/**
 * OpenAI's chat completions as `agentic serve` answers them. The trainer's gateway module
 * (../rollout/gateway/chat_completions.ts) reads the body, renders messages and tools through the
 * served chat template and writes the reply; this file maps its turn to the engine's spec and the
 * engine's completion back. The template's end-of-turn token needs no stop id here: the engine
 * stops every request on it (ChatFormat.stopTokenIds).
 */
import type { ChatCompletionsBody, ChatGeneration, ChatTurn } from '../rollout/gateway/chat_completions';
import type { Completion } from './batcher';
import type { GenerationSpec } from './request';

/** `adapters`: the loaded LoRA adapters, one of which `model` may name. */
export function chatSpec(body: ChatCompletionsBody, turn: ChatTurn, adapters: readonly string[]): GenerationSpec {
  return {
    rid: null,
    promptIds: turn.promptIds,
    maxNewTokens: turn.maxTokens,
    // OpenAI's chat default (and vLLM's): as much as the context leaves
    defaultMaxNewTokens: Number.POSITIVE_INFINITY,
    temperature: turn.temperature ?? 1,
    topP: turn.topP ?? 1,
    topK: -1,
    seed: turn.seed,
    stopTokenIds: [],
    stopStrings: turn.stop,
    topLogProbs: turn.topLogprobs,
    adapter: body.model != null && adapters.includes(body.model) ? body.model : null,
    fields: {
      prompt: 'messages',
      maxNewTokens: body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens',
      stopTokenIds: 'stop',
      adapter: 'model',
    },
  };
}

/** The engine's completion as the chat module's generation: the text is cut before a matched stop string already. */
export function chatGeneration(completion: Completion): ChatGeneration {
  return {
    text: completion.text,
    tokens: completion.tokens,
    logProbs: completion.logProbs,
    ...(completion.alternatives ? { alternatives: completion.alternatives } : {}),
    finish: completion.finish.type,
    promptTokens: completion.promptIds.length,
  };
}
