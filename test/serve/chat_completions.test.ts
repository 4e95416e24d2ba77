/**
 * `agentic serve`'s /v1/chat/completions over real HTTP, called with the official `openai` client:
 * the conversation rendered by the served chat template (the gateway's chatTurn, computed here
 * with the same tokenizer), answered as /v1/completions answers those prompt ids, one body or a
 * stream, and what is not served refused by name. The served model is random and never writes a
 * `<tool_call>`; reading one into tool_calls is specified in test/rollout/gateway.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { loadModel, saveModel } from '../../src/model/load';
import { adaptedProjections, parseTarget } from '../../src/model/lora';
import { withAdapters, newAdapters } from '../../src/model/lora_adapters';
import { ChatFormat } from '../../src/rollout/chat';
import { ChatCompletionsBody, chatTurn } from '../../src/rollout/gateway/chat_completions';
import { scratch } from '../helpers';
import { call, type ServeProcess, startServe, waitForInfo } from './helpers';

setDefaultTimeout(30_000);

const SEED = 5;
const CONTEXT = 512;
const MODEL = 'agentic:nano';

await startBackend('wasm');
const served = await loadModel(MODEL, { seed: SEED, trainable: false });
const chat = new ChatFormat(served.tokenizer);
const folders = scratch();

const CALCULATOR = {
  type: 'function' as const,
  function: { name: 'calculator', description: 'Evaluates an expression.', parameters: { type: 'object', properties: { expression: { type: 'string' } } } },
};
const QUESTION = [
  { role: 'system' as const, content: 'You are a test.' },
  { role: 'user' as const, content: 'What is 2 + 3?' },
];
/** A conversation in which the assistant called a tool and heard back. */
const CALLED = [
  ...QUESTION,
  {
    role: 'assistant' as const,
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'calculator', arguments: '{"expression":"2+3"}' } }],
  },
  { role: 'tool' as const, tool_call_id: 'call_1', content: '5' },
];

/** The prompt ids the served template makes of a request (the gateway's rendering, in this process). */
const promptIds = (body: Record<string, unknown>) => chatTurn(ChatCompletionsBody.parse(body), served.tokenizer).promptIds;

let server: ServeProcess;
let url: string;
let client: OpenAI;

beforeAll(async () => {
  server = await startServe([`pretrain=${MODEL}`, `seed=${SEED}`, `sequence_length=${CONTEXT}`, '--weights-root', folders]);
  url = server.url;
  client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  served.model.dispose();
});

/** /v1/completions on `prompt` ids, its ids and log-probs by token id. */
async function completions(prompt: number[], fields: Record<string, unknown>) {
  const { status, body } = await call(url, '/v1/completions', { prompt, return_token_ids: true, return_tokens_as_token_ids: true, ...fields });
  expect(status).toBe(200);
  return body.choices[0] as { token_ids: number[]; text: string; finish_reason: string; logprobs: any };
}

describe('agentic serve /v1/chat/completions with the openai client', () => {
  test('a plain call: the template’s prompt ids answered as completions answers them, in OpenAI’s chat shape', async () => {
    const request: ChatCompletionCreateParamsNonStreaming = { model: MODEL, messages: QUESTION, max_tokens: 12, temperature: 0 };
    const reply = await client.chat.completions.create(request);
    const ids = promptIds(request as never);
    const expected = await completions(ids, { max_tokens: 12, temperature: 0 });
    expect(reply).toMatchObject({ object: 'chat.completion', model: MODEL });
    expect(reply.id).toMatch(/^chatcmpl-/);
    expect(reply.choices).toHaveLength(1);
    expect(reply.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: expected.text }, logprobs: null });
    expect(reply.choices[0]!.finish_reason).toBe(expected.finish_reason as never);
    expect(reply.usage).toEqual({
      prompt_tokens: ids.length,
      completion_tokens: expected.token_ids.length,
      total_tokens: ids.length + expected.token_ids.length,
    });
    // without max_tokens, as much as the context leaves (OpenAI's chat default), up to the end-of-turn token
    const free = await client.chat.completions.create({ model: MODEL, messages: QUESTION, temperature: 0 });
    const unbounded = await completions(ids, { max_tokens: CONTEXT - ids.length, temperature: 0 });
    expect(free.choices[0]!.message.content).toBe(unbounded.text);
    expect(free.usage!.completion_tokens).toBe(unbounded.token_ids.length);
  });

  test('logprobs and top_logprobs: the completions endpoint’s for the same prompt ids and seed', async () => {
    const sampling = { temperature: 0.8, top_p: 0.95, seed: 21, max_tokens: 10 };
    const reply = await client.chat.completions.create({ model: MODEL, messages: QUESTION, ...sampling, logprobs: true, top_logprobs: 3 });
    const expected = await completions(promptIds({ messages: QUESTION }), { ...sampling, logprobs: 3 });
    const content = reply.choices[0]!.logprobs!.content!;
    expect(content.map((t) => t.token)).toEqual(expected.token_ids.map(chat.responsePiece));
    content.forEach((token, step) => {
      expect(token.logprob).toBeCloseTo(expected.logprobs.token_logprobs[step], 6);
      expect(token.bytes).toEqual([...Buffer.from(token.token, 'utf8')]);
      const top = Object.entries(expected.logprobs.top_logprobs[step] as Record<string, number>).slice(0, 3);
      expect(token.top_logprobs.map((t) => [t.token, t.logprob])).toEqual(
        top.map(([id, lp]) => [chat.responsePiece(Number(id.slice('token_id:'.length))), lp]),
      );
    });
    expect(reply.choices[0]!.message.content).toBe(expected.text);
    // the sampled tokens' log-probs alone without top_logprobs; none without logprobs
    const alone = await client.chat.completions.create({ model: MODEL, messages: QUESTION, ...sampling, logprobs: true });
    expect(alone.choices[0]!.logprobs!.content!.map((t) => [t.logprob, t.top_logprobs])).toEqual(content.map((t) => [t.logprob, []]));
  });

  test('tools are listed by the template and an earlier call and its result rendered; tool_choice none leaves them out', async () => {
    const request = { model: MODEL, messages: CALLED, tools: [CALCULATOR], tool_choice: 'auto' as const, max_tokens: 8, temperature: 0 };
    const reply = await client.chat.completions.create(request);
    const ids = promptIds(request);
    expect(served.tokenizer.decode(ids, { skipSpecialTokens: false })).toContain('"name": "calculator"');
    const expected = await completions(ids, { max_tokens: 8, temperature: 0 });
    expect(reply.usage!.prompt_tokens).toBe(ids.length);
    expect(reply.choices[0]!.message).toMatchObject({ role: 'assistant', content: expected.text });
    expect(reply.choices[0]!.message.tool_calls).toBeUndefined();
    const none = await client.chat.completions.create({ ...request, tool_choice: 'none' });
    expect(none.usage!.prompt_tokens).toBe(promptIds({ messages: CALLED }).length);
    expect(none.usage!.prompt_tokens).toBeLessThan(ids.length);
  });

  test('stop strings cut the content before them, as completions does', async () => {
    const free = await client.chat.completions.create({ model: MODEL, messages: QUESTION, max_tokens: 16, temperature: 0 });
    const text = free.choices[0]!.message.content!;
    const stop = text.slice(4, 6);
    const stopped = await client.chat.completions.create({ model: MODEL, messages: QUESTION, max_tokens: 16, temperature: 0, stop: [stop] });
    expect(stopped.choices[0]!.message.content).toBe(text.slice(0, text.indexOf(stop)));
    expect(stopped.choices[0]!.finish_reason).toBe('stop');
  });

  test('stream: true is server-sent chunks the client reads and puts back together into the same reply', async () => {
    const request = { model: MODEL, messages: QUESTION, max_tokens: 12, temperature: 0.7, seed: 3, logprobs: true };
    const whole = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
    let content = '';
    let role: string | undefined;
    let finish: string | null = null;
    let usage: unknown = null;
    const logprobs: number[] = [];
    const ids = new Set<string>();
    for await (const chunk of stream) {
      ids.add(chunk.id);
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      role ??= choice.delta.role;
      content += choice.delta.content ?? '';
      logprobs.push(...(choice.logprobs?.content ?? []).map((t) => t.logprob));
      finish = choice.finish_reason ?? finish;
    }
    expect(ids.size).toBe(1);
    expect(role).toBe('assistant');
    expect(content).toBe(whole.choices[0]!.message.content!);
    expect(logprobs).toEqual(whole.choices[0]!.logprobs!.content!.map((t) => t.logprob));
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage).toEqual(whole.usage);
  });

  test('model names the served model or a loaded LoRA adapter, as on /v1/completions; anything else is a 404', async () => {
    const spec = { rank: 4, alpha: 8, targets: parseTarget('all-linear') };
    const adapters = newAdapters(spec, adaptedProjections(spec, served.model.config.num_hidden_layers), served.model, 3);
    for (const layer of adapters) for (const a of Object.values(layer)) a.b.assign(tf.randomNormal(a.b.shape, 0, 0.05, 'float32', 9));
    const adapted = withAdapters(served.model, spec, adapters);
    const folder = join(folders, 'adapter');
    await saveModel(folder, adapted, served.tokenizer, { base: MODEL });
    adapted.dispose();
    expect((await call(url, '/load_lora_adapter', { lora_name: 'policy-1', lora_path: folder })).body.success).toBe(true);
    const ids = promptIds({ messages: QUESTION });
    const request = { model: MODEL, messages: QUESTION, max_tokens: 8, temperature: 0, logprobs: true };
    const viaChat = await client.chat.completions.create({ ...request, model: 'policy-1' });
    const viaCompletions = await completions(ids, { model: 'policy-1', max_tokens: 8, temperature: 0, logprobs: 0 });
    expect(viaChat.choices[0]!.logprobs!.content!.map((t) => t.logprob)).toEqual(viaCompletions.logprobs.token_logprobs);
    const plain = await client.chat.completions.create({ ...request, model: MODEL });
    expect(plain.choices[0]!.logprobs!.content!.map((t) => t.logprob)).not.toEqual(viaCompletions.logprobs.token_logprobs);
    expect((await call(url, '/unload_lora_adapter', { lora_name: 'policy-1' })).body.success).toBe(true);
    const gone = await client.chat.completions.create({ ...request, model: 'policy-1' }).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as InstanceType<typeof OpenAI.NotFoundError>).message).toMatch(/model 'policy-1' is not served here/);
  });

  test('what is not served is a 400 the client raises, naming the field', async () => {
    for (const [fields, field, message] of [
      [{ n: 2 }, 'n', /one choice per request is served/],
      [{ tool_choice: 'required', tools: [CALCULATOR] }, 'tool_choice', /only auto and none are served/],
      [{ tool_choice: { type: 'function', function: { name: 'calculator' } }, tools: [CALCULATOR] }, 'tool_choice', /only auto and none/],
      [{ response_format: { type: 'json_object' } }, 'response_format', /structured output is not served/],
    ] as const) {
      const error = await client.chat.completions.create({ model: MODEL, messages: QUESTION, ...(fields as object) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect([refused.status, (refused.error as { field: string }).field]).toEqual([400, field]);
      expect(refused.message).toMatch(message);
    }
  });
});

describe('agentic serve /v1/chat/completions: bad requests get a 4xx naming the field', () => {
  const long = 'a b c d e f g h '.repeat(CONTEXT);
  const cases: Array<[string, unknown, number, string | null, RegExp]> = [
    ['an unknown field', { messages: QUESTION, foo: 1 }, 400, 'foo', /unknown field 'foo'/],
    ['a misspelt field', { messages: QUESTION, temperatur: 0 }, 400, 'temperatur', /did you mean temperature/],
    ['an unknown message field', { messages: [{ role: 'user', content: 'x', extra: 1 }] }, 400, 'messages.extra', /unknown field 'messages\[0\]\.extra'/],
    ['no messages', { messages: [] }, 400, 'messages', />=1/],
    ['a penalty', { messages: QUESTION, frequency_penalty: 0.5 }, 400, 'frequency_penalty', /penalties are not served/],
    ['top_logprobs without logprobs', { messages: QUESTION, top_logprobs: 2 }, 400, 'top_logprobs', /needs logprobs: true/],
    ['a model not served', { model: 'gpt-4', messages: QUESTION }, 404, 'model', /not served here/],
    [
      'a conversation over the context',
      { messages: [{ role: 'user', content: long }] },
      400,
      'messages',
      /messages: a prompt of \d+ ids leaves no room in the context of 512/,
    ],
    ['max_tokens over the context', { messages: QUESTION, max_tokens: CONTEXT }, 400, 'max_tokens', /max_tokens: 512 new ids .* exceed the context/],
    ['max_completion_tokens over the context', { messages: QUESTION, max_completion_tokens: CONTEXT }, 400, 'max_completion_tokens', /exceed the context/],
  ];
  for (const [name, body, status, field, message] of cases) {
    test(name, async () => {
      const reply = await call(url, '/v1/chat/completions', body);
      expect([reply.status, reply.body.error.field]).toEqual([status, field]);
      expect(reply.body.error.message).toMatch(message);
      expect(reply.body.error.message).not.toContain('\n');
    });
  }

  test('GET is a 405', async () => {
    const reply = await call(url, '/v1/chat/completions');
    expect([reply.status, reply.headers.get('allow')]).toEqual([405, 'POST']);
  });
});

test('the tensor count stays flat across chat requests of every kind', async () => {
  const start = await waitForInfo(url, (info) => info.running === 0 && info.queued === 0);
  const kinds = [
    { messages: QUESTION, max_tokens: 4, temperature: 0 },
    { messages: CALLED, tools: [CALCULATOR], max_tokens: 3, temperature: 1, logprobs: true, top_logprobs: 2 },
    { messages: QUESTION, max_tokens: 5, temperature: 0.7, stop: ['a', 'e'], stream: true },
  ];
  const replies = await Promise.all(
    Array.from({ length: 60 }, (_, i) => fetch(`${url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(kinds[i % 3]) })),
  );
  expect(replies.every((r) => r.status === 200)).toBe(true);
  await Promise.all(replies.map((r) => r.text()));
  const end = await waitForInfo(url, (info) => info.running === 0 && info.queued === 0);
  expect(end.served - start.served).toBe(60);
  expect(end.tensors).toBe(start.tensors);
});
