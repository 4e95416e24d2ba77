/**
 * The reply side of the chat completions module that the gateway and `agentic serve` share: a
 * reply's `<tool_call>` blocks read into OpenAI's tool_calls, and the same reply as one body and
 * as server-sent events. (Serve's model is random and never writes a call; this is where the
 * parsing is specified.)
 */
import { describe, expect, test } from 'bun:test';
import { assistantMessage, type ChatGeneration, chatResponse, chatStream, type ChatTurn } from '../../../src/rollout/gateway/chat_completions';
import { functionCallText } from '../../../src/sdk/function_calls';

const callId = (i: number) => `call_${i}`;
const TWO_CALLS = `Let me work it out.\n${functionCallText('calculator', { expression: '2+3' })}\n${functionCallText('lookup', { key: 'pi', digits: 3 })}`;

function turn(extra: Partial<ChatTurn> = {}): ChatTurn {
  return {
    promptIds: [1, 2, 3],
    maxTokens: null,
    temperature: null,
    topP: null,
    seed: null,
    stop: [],
    readCalls: true,
    logprobs: false,
    topLogprobs: 0,
    stream: false,
    includeUsage: false,
    ...extra,
  };
}

function generation(text: string, finish: ChatGeneration['finish'] = 'stop'): ChatGeneration {
  return { text, tokens: [7, 8], logProbs: [-0.5, -1], finish, promptTokens: 3 };
}

const context = { id: 'chatcmpl-x', model: 'm', created: 1, piece: (id: number) => `<${id}>` };

/** The `data:` payloads of an SSE body, `[DONE]` aside. */
function events(stream: string): any[] {
  expect(stream.endsWith('data: [DONE]\n\n')).toBe(true);
  return stream
    .split('\n\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

describe('assistantMessage: a reply with tools', () => {
  test('its <tool_call> blocks become tool_calls with their arguments as JSON text, the rest is the content', () => {
    expect(assistantMessage(TWO_CALLS, true, callId)).toEqual({
      role: 'assistant',
      content: 'Let me work it out.',
      tool_calls: [
        { id: 'call_0', type: 'function', function: { name: 'calculator', arguments: '{"expression":"2+3"}' } },
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"key":"pi","digits":3}' } },
      ],
    });
  });

  test('a reply that is only a call has null content', () => {
    expect(assistantMessage(functionCallText('calculator', { expression: '1' }), true, callId).content).toBeNull();
  });

  test('a call that cannot be read leaves the whole reply as content, as vLLM’s and SGLang’s Hermes parsers do', () => {
    const broken = 'x <tool_call>\n{"name": "calculator", "arguments": {</tool_call>';
    expect(assistantMessage(broken, true, callId)).toEqual({ role: 'assistant', content: broken });
  });

  test('without tools (or with tool_choice none) a <tool_call> is plain content', () => {
    expect(assistantMessage(TWO_CALLS, false, callId)).toEqual({ role: 'assistant', content: TWO_CALLS });
  });
});

describe('chatResponse and chatStream', () => {
  test('a call is finish_reason tool_calls; otherwise the generation’s own reason, abort included', () => {
    const called = assistantMessage(TWO_CALLS, true, callId);
    expect(chatResponse(turn(), generation(TWO_CALLS, 'length'), called, context).choices[0]!.finish_reason).toBe('tool_calls');
    for (const finish of ['stop', 'length', 'abort'] as const) {
      const message = assistantMessage('hi', true, callId);
      expect(chatResponse(turn(), generation('hi', finish), message, context).choices[0]!.finish_reason).toBe(finish);
    }
  });

  test('the stream carries the role, the content, each call whole with its index, the finish reason and the usage when asked', () => {
    const message = assistantMessage(TWO_CALLS, true, callId);
    const chunks = events(chatStream(turn({ stream: true, includeUsage: true }), generation(TWO_CALLS), message, context));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'chatcmpl-x')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Let me work it out.' },
      { tool_calls: [{ index: 0, ...message.tool_calls![0]! }] },
      { tool_calls: [{ index: 1, ...message.tool_calls![1]! }] },
      {},
      null,
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  test('log-probs: each token with its log-prob and top alternatives, in the body and on the content chunk', () => {
    const withTop = { ...generation('hi'), alternatives: [[{ token: 9, logProb: -0.1 }], [{ token: 8, logProb: -1 }]] };
    const logprobs = turn({ logprobs: true, topLogprobs: 1, readCalls: false });
    const message = assistantMessage('hi', false, callId);
    const expected = {
      content: [
        { token: '<7>', logprob: -0.5, bytes: [...Buffer.from('<7>')], top_logprobs: [{ token: '<9>', logprob: -0.1, bytes: [...Buffer.from('<9>')] }] },
        { token: '<8>', logprob: -1, bytes: [...Buffer.from('<8>')], top_logprobs: [{ token: '<8>', logprob: -1, bytes: [...Buffer.from('<8>')] }] },
      ],
    };
    expect(chatResponse(logprobs, withTop, message, context).choices[0]!.logprobs).toEqual(expected);
    expect(events(chatStream({ ...logprobs, stream: true }, withTop, message, context))[1].choices[0].logprobs).toEqual(expected);
  });
});
