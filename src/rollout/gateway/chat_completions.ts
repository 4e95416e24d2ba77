/**
 * OpenAI's chat completions API as the gateway (and `agentic serve`) serves it: a request's
 * messages and tools rendered by the model's own chat template into prompt ids, and the sampled
 * ids turned back into an assistant message, its `<tool_call>` blocks read into `tool_calls`
 * (sdk/function_calls.ts), answered as one JSON body or as server-sent events.
 *
 * An assistant message's tool_calls come back with their arguments parsed, as Hugging Face's
 * templates expect them, so the template re-renders a call the model wrote token for token.
 * What is not served is refused by name (400): n > 1, penalties, a forced tool_choice (that takes
 * constrained decoding, which the sampler does not do).
 */
import { z } from 'zod';
import type { Tokenizer } from '../../model/tokenizer';
import { parseFunctionCalls } from '../../sdk/function_calls';
import { RequestError, seed, stopStrings, topLogProbs } from '../../util/request_body';

const TextPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const Content = z.union([z.string(), z.array(TextPart)]);

const ToolCall = z.strictObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().min(1), arguments: z.string() }),
});

const Message = z.strictObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: Content.nullish(),
  name: z.string().nullish(),
  tool_calls: z.array(ToolCall).nullish(),
  tool_call_id: z.string().nullish(),
});

const Tool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
});

export const ChatCompletionsBody = z.strictObject({
  model: z.string().nullish(),
  messages: z.array(Message).min(1),
  tools: z.array(Tool).max(256).nullish(),
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: z.string() }) })])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  stop: stopStrings.nullish(),
  n: z.literal(1, { message: 'one choice per request is served; send several requests' }).nullish(),
  seed: seed.nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: topLogProbs.nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.strictObject({ include_usage: z.boolean().nullish() }).nullish(),
  frequency_penalty: z.literal(0, { message: 'penalties are not served (0 only)' }).nullish(),
  presence_penalty: z.literal(0, { message: 'penalties are not served (0 only)' }).nullish(),
  user: z.string().nullish(),
});
export type ChatCompletionsBody = z.output<typeof ChatCompletionsBody>;

/** Why a field OpenAI's API has is not served, for its 400. */
export const CHAT_HINTS: Record<string, string> = {
  response_format: 'structured output is not served',
  logit_bias: 'logit bias is not served',
  functions: "the legacy functions field is not served; send 'tools'",
  function_call: "the legacy function_call field is not served; send 'tool_choice'",
  // what the Vercel AI SDK's OpenAI-compatible provider sends when a program asks for it
  reasoning_effort: "reasoning effort is not served: the policy samples as the run's generating_args say",
  verbosity: 'verbosity is not served',
  'messages.reasoning_content': "reasoning is not a separate field here: a model's thinking is part of the assistant's content",
};

/** A request in the server's terms: the prompt ids and what the reply should look like. */
export interface ChatTurn {
  promptIds: number[];
  /** null: as much as the context leaves. */
  maxTokens: number | null;
  temperature: number | null;
  topP: number | null;
  seed: number | null;
  stop: string[];
  /** Read `<tool_call>` blocks into tool_calls (tools were given and tool_choice is not 'none'). */
  readCalls: boolean;
  logprobs: boolean;
  topLogprobs: number;
  stream: boolean;
  includeUsage: boolean;
}

const renderable = new WeakMap<Tokenizer, boolean>();

/** Whether the tokenizer's chat template lists tools and renders an assistant's tool_calls. */
function templateCallsTools(tokenizer: Tokenizer): boolean {
  let known = renderable.get(tokenizer);
  if (known === undefined) {
    const probe = 'agentic_probe_tool';
    try {
      const listed = tokenizer.applyChatTemplate([{ role: 'user', content: 'x' }], {
        tools: [{ type: 'function', function: { name: probe, description: '', parameters: {} } }],
      });
      const called = tokenizer.applyChatTemplate([
        { role: 'user', content: 'x' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: probe, arguments: {} } }] },
      ]);
      known = listed.includes(probe) && called.includes(probe);
    } catch {
      known = false;
    }
    renderable.set(tokenizer, known);
  }
  return known;
}

function contentText(content: z.output<typeof Content> | null | undefined): string {
  if (content == null) return '';
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/** An assistant's tool call as templates take it: arguments as an object when they are JSON. */
function templateCall(call: z.output<typeof ToolCall>) {
  let args: unknown = call.function.arguments;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    // not JSON: the template shows the text as it is
  }
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: args } };
}

/** The request's conversation rendered by the chat template, and its settings. */
export function chatTurn(body: ChatCompletionsBody, tokenizer: Tokenizer): ChatTurn {
  const choice = body.tool_choice;
  if (choice === 'required' || (typeof choice === 'object' && choice !== null)) {
    throw new RequestError(400, 'tool_choice: only auto and none are served (forcing a call needs constrained decoding)', 'tool_choice');
  }
  const tools = choice === 'none' ? [] : (body.tools ?? []);
  const calledBefore = body.messages.some((m) => (m.tool_calls?.length ?? 0) > 0);
  if ((tools.length > 0 || calledBefore) && !templateCallsTools(tokenizer)) {
    throw new RequestError(400, `tools: the chat template of ${tokenizer.source} does not list tools or render tool calls`, 'tools');
  }
  const messages = body.messages.map((m) => ({
    role: m.role === 'developer' ? 'system' : m.role,
    content: contentText(m.content),
    ...(m.tool_calls?.length ? { tool_calls: m.tool_calls.map(templateCall) } : {}),
    ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
    ...(m.name ? { name: m.name } : {}),
  }));
  const text = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true, ...(tools.length > 0 ? { tools } : {}) });
  if (body.top_logprobs && !body.logprobs) throw new RequestError(400, 'top_logprobs: needs logprobs: true', 'top_logprobs');
  return {
    promptIds: tokenizer.encode(text, { addSpecialTokens: false }),
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    seed: body.seed ?? null,
    stop: body.stop ?? [],
    readCalls: tools.length > 0,
    logprobs: body.logprobs ?? false,
    topLogprobs: body.top_logprobs ?? 0,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
  };
}

/** What was generated for a turn. */
export interface ChatGeneration {
  /** The response text (special tokens left out). */
  text: string;
  tokens: readonly number[];
  logProbs: readonly number[];
  /** The most likely tokens of each step with their log-probs, when asked for. */
  alternatives?: ReadonlyArray<ReadonlyArray<{ token: number; logProb: number }>>;
  /** Why it ended: an end-of-turn token or stop string, its token budget, or the server ending it early (vLLM's 'abort'). */
  finish: 'stop' | 'length' | 'abort';
  promptTokens: number;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

/**
 * The reply as an assistant message. With tools, its `<tool_call>` blocks become tool_calls
 * (their arguments as JSON text, as OpenAI sends them); a reply with a call that cannot be read
 * is plain content, as vLLM's and SGLang's Hermes parsers return it. `callId(i)` names call i.
 */
export function assistantMessage(text: string, readCalls: boolean, callId: (index: number) => string): AssistantMessage {
  if (!readCalls || !text.includes('<tool_call>')) return { role: 'assistant', content: text };
  const { content, calls } = parseFunctionCalls(text);
  if (calls.length === 0 || calls.some((call) => 'malformed' in call)) return { role: 'assistant', content: text };
  return {
    role: 'assistant',
    content: content === '' ? null : content,
    tool_calls: calls.map((call, i) => {
      const read = call as { name: string; arguments: Record<string, unknown> };
      return { id: callId(i), type: 'function' as const, function: { name: read.name, arguments: JSON.stringify(read.arguments) } };
    }),
  };
}

function finishReason(message: AssistantMessage, generation: ChatGeneration): 'tool_calls' | ChatGeneration['finish'] {
  return message.tool_calls ? 'tool_calls' : generation.finish;
}

/** OpenAI's logprobs.content: each sampled token with its log-prob (and the top ones, when asked). */
function logprobsContent(generation: ChatGeneration, piece: (id: number) => string) {
  return generation.tokens.map((id, step) => {
    const token = piece(id);
    return {
      token,
      logprob: generation.logProbs[step]!,
      bytes: [...Buffer.from(token, 'utf8')],
      top_logprobs: (generation.alternatives?.[step] ?? []).map((a) => {
        const text = piece(a.token);
        return { token: text, logprob: a.logProb, bytes: [...Buffer.from(text, 'utf8')] };
      }),
    };
  });
}

export interface ChatReplyContext {
  id: string;
  model: string;
  created: number;
  /** What one token adds to the text ('' for a special token). */
  piece: (id: number) => string;
}

function usage(generation: ChatGeneration) {
  const completion = generation.tokens.length;
  return { prompt_tokens: generation.promptTokens, completion_tokens: completion, total_tokens: generation.promptTokens + completion };
}

/** The non-streaming response body. */
export function chatResponse(turn: ChatTurn, generation: ChatGeneration, message: AssistantMessage, context: ChatReplyContext) {
  return {
    id: context.id,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message,
        logprobs: turn.logprobs ? { content: logprobsContent(generation, context.piece) } : null,
        finish_reason: finishReason(message, generation),
      },
    ],
    usage: usage(generation),
  };
}

/**
 * The streamed response: server-sent events of chat.completion.chunk objects (the role, the
 * content, each tool call whole, the finish reason, the usage if asked), then `data: [DONE]`.
 * The reply is generated before it is sent, so the chunks come in one burst.
 */
export function chatStream(turn: ChatTurn, generation: ChatGeneration, message: AssistantMessage, context: ChatReplyContext): string {
  const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id: context.id,
    object: 'chat.completion.chunk',
    created: context.created,
    model: context.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: null, ...extra }],
  });
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '' })];
  if (message.content) {
    chunks.push(chunk({ content: message.content }, turn.logprobs ? { logprobs: { content: logprobsContent(generation, context.piece) } } : {}));
  }
  for (const [index, call] of (message.tool_calls ?? []).entries()) chunks.push(chunk({ tool_calls: [{ index, ...call }] }));
  chunks.push(chunk({}, { finish_reason: finishReason(message, generation) }));
  if (turn.includeUsage) {
    chunks.push({ id: context.id, object: 'chat.completion.chunk', created: context.created, model: context.model, choices: [], usage: usage(generation) });
  }
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`;
}
