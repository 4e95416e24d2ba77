/**
 * `agentic serve` over real HTTP on loopback, against the same model generating in this process:
 * the answers are the in-process policy's, whatever else shares the batch.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { loadModel, saveModel } from '../../src/model/load';
import { adaptedProjections, parseTarget } from '../../src/model/lora';
import { withAdapters, newAdapters } from '../../src/model/lora_adapters';
import type { Qwen2Model } from '../../src/model/qwen2';
import { GREEDY, type SamplingParams } from '../../src/model/sampling';
import { ChatFormat } from '../../src/rollout/chat';
import { ModelPolicy } from '../../src/rollout/policy';
import { scratch } from '../helpers';
import { call, type ServeProcess, startServe, waitForInfo } from './helpers';

// one server for the whole file: a test over its time would take it down with it
setDefaultTimeout(30_000);

const SEED = 5;
const CONTEXT = 2048;
const SERVE_ARGS = ['pretrain=agentic:nano', `seed=${SEED}`, `sequence_length=${CONTEXT}`];

await startBackend('wasm');
const served = await loadModel('agentic:nano', { seed: SEED, trainable: false });
const chat = new ChatFormat(served.tokenizer);
/** Another set of weights of the served shape, and one of another shape. */
const other = await loadModel('agentic:nano', { seed: 77, trainable: false });
const folders = scratch();
const OTHER = join(folders, 'other');
const WRONG_SHAPE = join(folders, 'tiny');
await saveModel(OTHER, other.model, other.tokenizer);
const tiny = await loadModel('agentic:tiny', { seed: 1, trainable: false });
await saveModel(WRONG_SHAPE, tiny.model, tiny.tokenizer);
tiny.model.dispose();

const prompts = Array.from({ length: 64 }, (_, i) =>
  i % 2 === 0 ? chat.firstTurn('You are a test.', `question ${i}: ${'x'.repeat(i)}`) : Array.from({ length: 3 + i }, (_, t) => (i * 31 + t * 7) % 1000),
);
/** Its greedy continuation runs to any length (no stop token): long enough to leave or abort midway. */
const LONG = [1, 2, 3, 4];

interface Reply {
  tokens: number[];
  logProbs: number[];
  finishReason: string;
}

/** What the rollout's policy generates in this process for `promptIds`, one request per prompt. */
async function inProcess(model: Qwen2Model, list: number[][], maxNewTokens: number, sampling: SamplingParams = GREEDY, seeds?: number[]): Promise<Reply[]> {
  const policy = new ModelPolicy(model, chat, { sampling, stopStrings: null, maxRunning: 64, maxLength: CONTEXT });
  try {
    return (await Promise.all(
      list.map((promptIds, i) =>
        policy.respond({ id: `${i}`, promptIds, maxNewTokens, rng: Rng.fromSeed(seeds?.[i] ?? 0), env: undefined as never, session: `s${i}` }),
      ),
    )) as Reply[];
  } finally {
    await policy.close();
  }
}

function expectSame(tokens: number[], logProbs: number[], expected: Reply): void {
  expect(tokens).toEqual(expected.tokens);
  expect(logProbs.length).toBe(expected.logProbs.length);
  logProbs.forEach((lp, i) => expect(Math.abs(lp - expected.logProbs[i]!)).toBeLessThan(1e-4));
}

const generate = (url: string, input_ids: number[], sampling_params: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  call(url, '/generate', { input_ids, sampling_params, return_logprob: true, ...extra });

let server: ServeProcess;
let url: string;

beforeAll(async () => {
  server = await startServe([...SERVE_ARGS, '--weights-root', folders]);
  url = server.url;
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  served.model.dispose();
  other.model.dispose();
});

describe('agentic serve: generation', () => {
  test('greedy /generate: the in-process policy’s ids and log-probs, and the SGLang response shape', async () => {
    const expected = await inProcess(served.model, prompts.slice(0, 6), 12);
    const replies = await Promise.all(prompts.slice(0, 6).map((p) => generate(url, p, { max_new_tokens: 12, temperature: 0 })));
    replies.forEach(({ status, body }, i) => {
      expect(status).toBe(200);
      const logProbs = body.meta_info.output_token_logprobs.map(([lp, id, text]: [number, number, null]) => {
        expect(text).toBeNull();
        return { lp, id };
      });
      expect(logProbs.map((x: { id: number }) => x.id)).toEqual(body.output_ids);
      expectSame(
        body.output_ids,
        logProbs.map((x: { lp: number }) => x.lp),
        expected[i]!,
      );
      expect(body.meta_info).toMatchObject({ prompt_tokens: prompts[i]!.length, completion_tokens: body.output_ids.length, weight_version: 'default' });
      expect(body.text).toBe(chat.responseText(body.output_ids));
      if (expected[i]!.finishReason === 'length') expect(body.meta_info.finish_reason).toEqual({ type: 'length', length: 12 });
      else expect(body.meta_info.finish_reason).toEqual({ type: 'stop', matched: body.output_ids.at(-1) });
    });
  });

  test('greedy /v1/completions: the same ids and log-probs in OpenAI’s shape with vLLM’s token-id fields', async () => {
    const [expected] = await inProcess(served.model, [prompts[3]!], 10);
    const { status, body } = await call(url, '/v1/completions', {
      model: 'agentic:nano',
      prompt: prompts[3],
      max_tokens: 10,
      temperature: 0,
      logprobs: 0,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'text_completion', model: 'agentic:nano' });
    const [choice] = body.choices;
    expectSame(choice.token_ids, choice.logprobs.token_logprobs, expected!);
    expect(choice.prompt_token_ids).toEqual(prompts[3]);
    expect(choice.logprobs.tokens).toEqual(expected!.tokens.map((id) => `token_id:${id}`));
    expect(choice.text).toBe(chat.responseText(expected!.tokens));
    expect(choice.finish_reason).toBe(expected!.finishReason === 'length' ? 'length' : 'stop');
    expect(body.usage).toEqual({ prompt_tokens: prompts[3]!.length, completion_tokens: 10, total_tokens: prompts[3]!.length + 10 });
    const models = await call(url, '/v1/models');
    expect(models.body.data[0]).toMatchObject({ id: 'agentic:nano', object: 'model', max_model_len: CONTEXT });
  });

  test('top log-probs: completions’ logprobs N and /generate’s top_logprobs_num give each step’s N most likely tokens in the sampled token’s measure', async () => {
    const [expected] = await inProcess(served.model, [prompts[5]!], 8, { temperature: 0.8, topP: 1, topK: 0, doSample: true }, [21]);
    const completions = await call(url, '/v1/completions', {
      prompt: prompts[5],
      max_tokens: 8,
      temperature: 0.8,
      seed: 21,
      logprobs: 5,
      return_tokens_as_token_ids: true,
    });
    expect(completions.status).toBe(200);
    const { logprobs } = completions.body.choices[0];
    expect(logprobs.tokens).toEqual(expected!.tokens.map((id) => `token_id:${id}`));
    expect(logprobs.top_logprobs).toHaveLength(8);
    logprobs.top_logprobs.forEach((top: Record<string, number>, step: number) => {
      const sampled = `token_id:${expected!.tokens[step]}`;
      // the five most likely, and the sampled token (vLLM's), in the measure of its own log-prob
      const entries = Object.entries(top);
      expect(entries.length === 5 || (entries.length === 6 && entries.at(-1)![0] === sampled)).toBe(true);
      expect(top[sampled]).toBeCloseTo(logprobs.token_logprobs[step], 6);
      const best = entries.slice(0, 5).map(([, lp]) => lp);
      expect(best).toEqual([...best].sort((a, b) => b - a));
      expect(best.reduce((sum, lp) => sum + Math.exp(lp), 0)).toBeLessThanOrEqual(1 + 1e-6);
      expect(best[0]!).toBeGreaterThanOrEqual(logprobs.token_logprobs[step] - 1e-6);
    });
    const sglang = await generate(url, prompts[5]!, { max_new_tokens: 8, temperature: 0.8, sampling_seed: 21 }, { top_logprobs_num: 5 });
    expect(sglang.body.output_ids).toEqual(expected!.tokens);
    const tops = sglang.body.meta_info.output_top_logprobs as Array<Array<[number, number, null]>>;
    tops.forEach((step, i) => {
      expect(step.map(([lp, id]) => [`token_id:${id}`, lp])).toEqual(Object.entries(logprobs.top_logprobs[i] as Record<string, number>).slice(0, 5));
      expect(step.every(([, , text]) => text === null)).toBe(true);
    });
    // greedy: the sampled token is each step's most likely
    const greedy = await generate(url, prompts[5]!, { max_new_tokens: 6, temperature: 0 }, { top_logprobs_num: 1 });
    expect(greedy.body.meta_info.output_top_logprobs.map((step: number[][]) => step[0]!.slice(0, 2))).toEqual(
      greedy.body.meta_info.output_token_logprobs.map((entry: number[]) => entry.slice(0, 2)),
    );
  });

  test('a seeded request samples the same tokens in any batch: the in-process policy’s with that seed', async () => {
    const sampling = { temperature: 0.9, topP: 0.95, topK: 40, doSample: true };
    const [expected, otherSeed] = await inProcess(served.model, [prompts[4]!, prompts[4]!], 16, sampling, [1234, 99]);
    const params = { max_new_tokens: 16, temperature: 0.9, top_p: 0.95, top_k: 40 };
    // alone, then among other requests
    const alone = await generate(url, prompts[4]!, { ...params, sampling_seed: 1234 });
    const crowd = await Promise.all([
      generate(url, prompts[4]!, { ...params, sampling_seed: 1234 }),
      ...prompts.slice(10, 20).map((p) => generate(url, p, params)),
      generate(url, prompts[4]!, { ...params, sampling_seed: 99 }),
    ]);
    for (const reply of [alone, crowd[0]!]) {
      expectSame(
        reply.body.output_ids,
        reply.body.meta_info.output_token_logprobs.map((x: number[]) => x[0]),
        expected!,
      );
    }
    expect(crowd.at(-1)!.body.output_ids).toEqual(otherSeed!.tokens);
    expect(otherSeed!.tokens).not.toEqual(expected!.tokens);
    // without a seed the server's counter gives each request a stream of its own
    const unseeded = await Promise.all([generate(url, prompts[4]!, params), generate(url, prompts[4]!, params)]);
    expect(unseeded[0]!.body.output_ids).not.toEqual(unseeded[1]!.body.output_ids);
  });

  test('64 concurrent clients share the batch and each gets its own greedy answer', async () => {
    const expected = await inProcess(served.model, prompts, 16);
    const replies = await Promise.all(prompts.map((p) => generate(url, p, { max_new_tokens: 16, temperature: 0 })));
    replies.forEach(({ status, body }, i) => {
      expect(status).toBe(200);
      expectSame(
        body.output_ids,
        body.meta_info.output_token_logprobs.map((x: number[]) => x[0]),
        expected[i]!,
      );
    });
  });

  test('stop strings and stop_token_ids end a response as SGLang’s do: matched named, text cut before the string', async () => {
    const [free] = await inProcess(served.model, [prompts[0]!], 24);
    const text = chat.responseText(free!.tokens);
    const stop = text.slice(5, 7);
    const byString = await generate(url, prompts[0]!, { max_new_tokens: 24, temperature: 0, stop });
    expect(byString.body.meta_info.finish_reason).toEqual({ type: 'stop', matched: stop });
    expect(byString.body.text).toBe(text.slice(0, text.indexOf(stop)));
    const token = free!.tokens[3]!;
    const byToken = await generate(url, prompts[0]!, { max_new_tokens: 24, temperature: 0, stop_token_ids: [token] });
    expect(byToken.body.output_ids).toEqual(free!.tokens.slice(0, free!.tokens.indexOf(token) + 1));
    expect(byToken.body.meta_info.finish_reason).toEqual({ type: 'stop', matched: token });
  });

  test('without max_new_tokens, SGLang’s default of 128 cut to the room the context leaves', async () => {
    const short = await generate(url, LONG, { temperature: 0 });
    expect(short.body.meta_info.completion_tokens).toBe(128);
    const near = Array.from({ length: CONTEXT - 3 }, (_, i) => i % 1000);
    const cut = await generate(url, near, { temperature: 0 });
    expect(cut.status).toBe(200);
    expect(cut.body.meta_info.completion_tokens).toBeLessThanOrEqual(3);
  }, 20_000);
});

describe('agentic serve: requests that end early', () => {
  test('a client that disconnects mid-generation frees its row', async () => {
    const before = await waitForInfo(url, (info) => info.running === 0);
    const leaving = new AbortController();
    const request = generate(url, LONG, { max_new_tokens: 2000, temperature: 0 }, {}).catch(() => null);
    const gone = call(url, '/generate', { input_ids: LONG, sampling_params: { max_new_tokens: 2000, temperature: 0 } }, { signal: leaving.signal }).catch(
      (error: Error) => error.name,
    );
    await waitForInfo(url, (info) => info.running === 2);
    await Bun.sleep(50);
    leaving.abort();
    expect(await gone).toBe('AbortError');
    // the left request's row is freed long before its 2000 tokens (11 s alone on this model)
    const after = await waitForInfo(url, (info) => info.running === 1, 2000);
    expect(after.served).toBe(before.served + 1);
    // the other request is still running; pausing aborts it
    await call(url, '/pause_generation', {});
    await call(url, '/continue_generation', {});
    const other = await request;
    expect(other!.body.meta_info.finish_reason).toEqual({ type: 'abort', message: 'aborted by /pause_generation' });
  });

  test('/abort_request ends the request of that rid with what it has so far; an unknown rid is success false', async () => {
    const running = generate(url, LONG, { max_new_tokens: 2000, temperature: 0 }, { rid: 'long-one' });
    await waitForInfo(url, (info) => info.running === 1);
    const duplicate = await generate(url, LONG, { max_new_tokens: 4 }, { rid: 'long-one' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.error).toEqual({ message: "rid 'long-one' is already in flight", field: 'rid' });
    await Bun.sleep(30);
    expect((await call(url, '/abort_request', { rid: 'long-one' })).body).toEqual({ success: true });
    const { status, body } = await running;
    expect(status).toBe(200);
    expect(body.meta_info.id).toBe('long-one');
    expect(body.meta_info.finish_reason).toEqual({ type: 'abort', message: 'aborted by /abort_request' });
    expect(body.output_ids.length).toBeGreaterThan(0);
    expect(body.output_ids.length).toBeLessThan(2000);
    expect(body.output_ids).toEqual(body.output_ids.map(() => body.output_ids[0]));
    expect((await call(url, '/abort_request', { rid: 'long-one' })).body).toEqual({ success: false });
  });

  test('/pause_generation aborts what is in flight and holds new requests until /continue_generation', async () => {
    const inFlight = generate(url, LONG, { max_new_tokens: 2000, temperature: 0 });
    await waitForInfo(url, (info) => info.running === 1);
    expect((await call(url, '/pause_generation', {})).body).toEqual({ success: true });
    expect((await inFlight).body.meta_info.finish_reason.type).toBe('abort');
    let answered = false;
    const held = generate(url, prompts[1]!, { max_new_tokens: 4, temperature: 0 }).then((reply) => {
      answered = true;
      return reply;
    });
    await waitForInfo(url, (info) => info.queued === 1 && info.paused);
    await Bun.sleep(100);
    expect(answered).toBe(false);
    expect((await call(url, '/continue_generation', {})).body).toEqual({ success: true });
    const [expected] = await inProcess(served.model, [prompts[1]!], 4);
    expect((await held).body.output_ids).toEqual(expected!.tokens);
    expect((await call(url, '/pause_generation', { mode: 'in_place' })).body.error.field).toBe('mode');
  });
});

describe('agentic serve: bad requests get a 4xx JSON error naming the field, and the server goes on', () => {
  const cases: Array<[string, string, unknown, number, string | null, RegExp]> = [
    ['malformed JSON', '/generate', '{"input_ids": [1, 2', 400, null, /not valid JSON/],
    ['a body that is not an object', '/generate', '[1, 2]', 400, null, /must be a JSON object/],
    [
      'an unknown field',
      '/generate',
      { input_ids: [1], sampling_params: { max_tokens: 3 } },
      400,
      'sampling_params.max_tokens',
      /unknown field.*fields: max_new_tokens, temperature/,
    ],
    ['a misspelt field', '/generate', { input_ids: [1], sampling_params: { temperatur: 0 } }, 400, 'sampling_params.temperatur', /did you mean temperature/],
    ['text instead of ids', '/generate', { text: 'hello' }, 400, 'text', /takes token ids/],
    ['a wrong type', '/generate', { input_ids: [1], sampling_params: { temperature: 'hot' } }, 400, 'sampling_params.temperature', /expected number/],
    ['top_p out of range', '/generate', { input_ids: [1], sampling_params: { top_p: 0 } }, 400, 'sampling_params.top_p', />0/],
    ['a fractional id', '/generate', { input_ids: [1, 2.5] }, 400, 'input_ids', /input_ids\[1\].*int/],
    ['an id outside the vocabulary', '/generate', { input_ids: [1, 1024] }, 400, 'input_ids', /outside the vocabulary \[0, 1024\)/],
    [
      'a stop id outside the vocabulary',
      '/generate',
      { input_ids: [1], sampling_params: { stop_token_ids: [5000] } },
      400,
      'sampling_params.stop_token_ids',
      /outside/,
    ],
    ['an empty prompt', '/generate', { input_ids: [] }, 400, 'input_ids', /no ids/],
    ['a batch of prompts', '/generate', { input_ids: [[1], [2]] }, 400, 'input_ids', /one sequence/],
    ['a prompt over the context', '/generate', { input_ids: new Array(CONTEXT).fill(1) }, 400, 'input_ids', /leaves no room/],
    [
      'a budget over the context',
      '/generate',
      { input_ids: [1, 2], sampling_params: { max_new_tokens: CONTEXT - 1 } },
      400,
      'sampling_params.max_new_tokens',
      /at most 2046/,
    ],
    ['a text prompt to completions', '/v1/completions', { prompt: 'hello' }, 400, 'prompt', /token ids, not text/],
    ['more top alternatives than served', '/v1/completions', { prompt: [1], logprobs: 21 }, 400, 'logprobs', /<=20/],
    ['more top alternatives than served, SGLang', '/generate', { input_ids: [1], return_logprob: true, top_logprobs_num: 21 }, 400, 'top_logprobs_num', /<=20/],
    [
      'too many stop strings',
      '/generate',
      { input_ids: [1], sampling_params: { stop: Array.from({ length: 33 }, (_, i) => `s${i}`) } },
      400,
      'sampling_params.stop',
      /<=32/,
    ],
    ['a stop string too long', '/v1/completions', { prompt: [1], stop: ['x'.repeat(513)] }, 400, 'stop', /<=512/],
    [
      'too many stop ids',
      '/generate',
      { input_ids: [1], sampling_params: { stop_token_ids: new Array(257).fill(1) } },
      400,
      'sampling_params.stop_token_ids',
      /<=256/,
    ],
    ['a rid too long', '/generate', { input_ids: [1], rid: 'r'.repeat(257) }, 400, 'rid', /<=256/],
    ['an abort rid too long', '/abort_request', { rid: 'r'.repeat(257) }, 400, 'rid', /<=256/],
    ['a text too long to tokenize', '/tokenize', { prompt: 'x'.repeat(1_000_001) }, 400, 'prompt', /<=1000000/],
    [
      'special tokens asked to stay in the text',
      '/generate',
      { input_ids: [1], sampling_params: { skip_special_tokens: false } },
      400,
      'sampling_params.skip_special_tokens',
      /only true/,
    ],
    [
      'stop strings asked to stay in the text',
      '/generate',
      { input_ids: [1], sampling_params: { no_stop_trim: true } },
      400,
      'sampling_params.no_stop_trim',
      /only false/,
    ],
    ['prompt log-probs', '/generate', { input_ids: [1], return_logprob: true, logprob_start_len: 0 }, 400, 'logprob_start_len', /only -1/],
    ['streaming', '/generate', { input_ids: [1], stream: true }, 400, 'stream', /streaming is not served/],
    ['streaming completions', '/v1/completions', { prompt: [1], stream: true }, 400, 'stream', /streaming is not served/],
    ['a model not served', '/v1/completions', { model: 'gpt-4', prompt: [1] }, 404, 'model', /not served here/],
    ['a completions budget over the context', '/v1/completions', { prompt: [1, 2], max_tokens: CONTEXT }, 400, 'max_tokens', /exceed the context/],
    ['an update without a folder', '/update_weights_from_disk', {}, 400, 'model_path', /expected string/],
    ['an abort without a rid', '/abort_request', { rid: 3 }, 400, 'rid', /expected string/],
    ['tokenize without a prompt', '/tokenize', { text: 'x' }, 400, 'text', /unknown field/],
  ];
  for (const [name, path, body, status, field, message] of cases) {
    test(name, async () => {
      const reply = await call(url, path, body);
      expect(reply.status).toBe(status);
      expect(reply.body.error.field).toBe(field);
      expect(reply.body.error.message).toMatch(message);
      expect(reply.body.error.message).not.toContain('\n');
    });
  }

  test('an unknown endpoint is 404 and a wrong method 405; the server is still healthy', async () => {
    expect((await call(url, '/nope')).status).toBe(404);
    const wrong = await call(url, '/generate');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await call(url, '/health')).toMatchObject({ status: 200, body: {} });
    expect(server.child.exitCode).toBeNull();
  });

  test("the fields SGLang's clients send for what is done anyway are accepted; /health_generate and /flush_cache answer", async () => {
    const [expected] = await inProcess(served.model, [prompts[0]!], 6);
    const reply = await generate(
      url,
      prompts[0]!,
      { max_new_tokens: 6, temperature: 0, skip_special_tokens: true, no_stop_trim: false },
      { logprob_start_len: -1, return_text_in_logprobs: true, stream: false },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.meta_info.output_token_logprobs.map((entry: unknown[]) => [entry[1], entry[2]])).toEqual(
      expected!.tokens.map((id) => [id, chat.responsePiece(id)]),
    );
    const completions = await call(url, '/v1/completions', { prompt: prompts[0], max_tokens: 2, stream: false });
    expect(completions.status).toBe(200);
    expect(await call(url, '/health_generate')).toMatchObject({ status: 200, body: {} });
    for (const method of ['GET', 'POST']) {
      const flushed = await fetch(`${url}/flush_cache`, { method });
      expect([flushed.status, await flushed.text()]).toEqual([200, 'Cache flushed.']);
    }
  });

  test('/tokenize and /get_model_info describe the served tokenizer', async () => {
    const { body } = await call(url, '/tokenize', { prompt: 'hello world', add_special_tokens: false });
    expect(body).toEqual({ tokens: served.tokenizer.encode('hello world', { addSpecialTokens: false }), count: body.tokens.length, max_model_len: CONTEXT });
    const info = await call(url, '/get_model_info');
    expect(info.body).toMatchObject({ is_generation: true, max_context_length: CONTEXT, vocab_size: 1024, tokenizer_path: 'built-in tokenizer' });
    expect(info.body.tokenizer_sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("agentic serve: LoRA adapters (SGLang's and vLLM's endpoints)", () => {
  test('a loaded adapter generates as the in-process policy with it; requests without it get the served model', async () => {
    const spec = { rank: 4, alpha: 8, targets: parseTarget('all-linear') };
    const adapters = newAdapters(spec, adaptedProjections(spec, served.model.config.num_hidden_layers), served.model, 3);
    for (const layer of adapters) for (const a of Object.values(layer)) a.b.assign(tf.randomNormal(a.b.shape, 0, 0.05, 'float32', 9));
    const adapted = withAdapters(served.model, spec, adapters);
    const folder = join(folders, 'adapter');
    await saveModel(folder, adapted, served.tokenizer, { base: 'agentic:nano' });
    const loaded = await call(url, '/load_lora_adapter', { lora_name: 'policy-1', lora_path: folder });
    expect(loaded.status).toBe(200);
    expect(loaded.body).toEqual({ success: true, error_message: '', loaded_adapters: { 'policy-1': folder } });
    const [withAdapter, plain] = [await inProcess(adapted, [prompts[3]!], 10), await inProcess(served.model, [prompts[3]!], 10)];
    const viaGenerate = await generate(url, prompts[3]!, { max_new_tokens: 10, temperature: 0 }, { lora_path: 'policy-1' });
    expectSame(
      viaGenerate.body.output_ids,
      viaGenerate.body.meta_info.output_token_logprobs.map((x: number[]) => x[0]),
      withAdapter[0]!,
    );
    const viaCompletions = await call(url, '/v1/completions', {
      model: 'policy-1',
      prompt: prompts[3]!,
      max_tokens: 10,
      temperature: 0,
      logprobs: 0,
      return_token_ids: true,
    });
    expectSame(viaCompletions.body.choices[0].token_ids, viaCompletions.body.choices[0].logprobs.token_logprobs, withAdapter[0]!);
    const base = await generate(url, prompts[3]!, { max_new_tokens: 10, temperature: 0 });
    expectSame(
      base.body.output_ids,
      base.body.meta_info.output_token_logprobs.map((x: number[]) => x[0]),
      plain[0]!,
    );
    expect(withAdapter[0]!.logProbs).not.toEqual(plain[0]!.logProbs);
    expect((await call(url, '/v1/models')).body.data.map((m: { id: string; parent?: string }) => [m.id, m.parent ?? null])).toEqual([
      ['agentic:nano', null],
      ['policy-1', 'agentic:nano'],
    ]);
    adapted.dispose();

    // refusals: a name in use, a folder that is no adapter, an adapter not loaded
    const again = await call(url, '/load_lora_adapter', { lora_name: 'policy-1', lora_path: folder });
    expect([again.status, again.body.success, again.body.error_message]).toEqual([
      400,
      false,
      "lora_name: an adapter named 'policy-1' is loaded already; unload it first",
    ]);
    const notAdapter = await call(url, '/load_lora_adapter', { lora_name: 'x', lora_path: OTHER });
    expect(notAdapter.body.error_message).toMatch(/^lora_path: .*no adapter_config.json \(not a PEFT adapter folder\)$/);
    const unknown = await generate(url, prompts[3]!, { max_new_tokens: 2 }, { lora_path: 'policy-9' });
    expect([unknown.status, unknown.body.error]).toEqual([400, { message: "lora_path: no LoRA adapter named 'policy-9' is loaded", field: 'lora_path' }]);
    expect((await call(url, '/v1/completions', { model: 'policy-9', prompt: [1, 2] })).status).toBe(404);

    // unloading (SGLang's), then vLLM's endpoints, which answer in words
    const unloaded = await call(url, '/unload_lora_adapter', { lora_name: 'policy-1' });
    expect(unloaded.body).toEqual({ success: true, error_message: '', loaded_adapters: {} });
    expect((await generate(url, prompts[3]!, { max_new_tokens: 2 }, { lora_path: 'policy-1' })).status).toBe(400);
    const vllm = await fetch(`${url}/v1/load_lora_adapter`, { method: 'POST', body: JSON.stringify({ lora_name: 'v', lora_path: folder }) });
    expect([vllm.status, await vllm.text()]).toEqual([200, "Success: LoRA adapter 'v' added successfully."]);
    const gone = await fetch(`${url}/v1/unload_lora_adapter`, { method: 'POST', body: JSON.stringify({ lora_name: 'v' }) });
    expect(await gone.text()).toBe("Success: LoRA adapter 'v' removed successfully.");
  });

  test('an adapter that trains the embedding whole (modules_to_save) generates as the in-process policy with it', async () => {
    const spec = { rank: 2, alpha: 4, targets: parseTarget('q_proj,v_proj'), modulesToSave: ['embed_tokens'] as const };
    const embedding = (await served.model.embed.data()) as Float32Array;
    const changed = { shape: served.model.embed.shape.slice(), data: embedding.map((v, i) => v + 0.05 * Math.sin(i)) };
    const adapted = withAdapters(served.model, spec, newAdapters(spec, adaptedProjections(spec, 4), served.model, 5), { embed_tokens: changed });
    const folder = join(folders, 'adapter-embed');
    await saveModel(folder, adapted, served.tokenizer, { base: 'agentic:nano' });
    expect((await call(url, '/load_lora_adapter', { lora_name: 'embed', lora_path: folder })).body.success).toBe(true);
    const [expected, plain] = [await inProcess(adapted, [prompts[1]!], 10), await inProcess(served.model, [prompts[1]!], 10)];
    const reply = await generate(url, prompts[1]!, { max_new_tokens: 10, temperature: 0 }, { lora_path: 'embed' });
    expectSame(
      reply.body.output_ids,
      reply.body.meta_info.output_token_logprobs.map((x: number[]) => x[0]),
      expected[0]!,
    );
    expect(expected[0]!.logProbs).not.toEqual(plain[0]!.logProbs);
    expect((await call(url, '/unload_lora_adapter', { lora_name: 'embed' })).body.success).toBe(true);
    adapted.dispose();
    // the served model's copy of the adapter and its embedding are freed with it
    const idle = await waitForInfo(url, (info) => info.running === 0 && info.queued === 0);
    expect((await call(url, '/load_lora_adapter', { lora_name: 'embed', lora_path: folder })).body.success).toBe(true);
    expect((await call(url, '/unload_lora_adapter', { lora_name: 'embed' })).body.success).toBe(true);
    expect((await waitForInfo(url, (info) => info.running === 0 && info.queued === 0)).tensors).toBe(idle.tensors);
  });

  test("loading and unloading leaves the tensor count where it was; an unload waits for the adapter's requests", async () => {
    const spec = { rank: 2, alpha: 4, targets: parseTarget('q_proj,v_proj') };
    const adapted = withAdapters(served.model, spec, newAdapters(spec, adaptedProjections(spec, 4), served.model, 4));
    const folder = join(folders, 'adapter-2');
    await saveModel(folder, adapted, served.tokenizer, { base: 'agentic:nano' });
    adapted.dispose();
    await waitForInfo(url, (info) => info.running === 0 && info.queued === 0);
    const start = (await call(url, '/get_server_info')).body;
    for (let round = 0; round < 5; round++) {
      expect((await call(url, '/load_lora_adapter', { lora_name: 'a', lora_path: folder })).body.success).toBe(true);
      const running = generate(url, LONG, { max_new_tokens: 40, temperature: 0 }, { lora_path: 'a' });
      await waitForInfo(url, (info) => info.running === 1);
      const unload = await call(url, '/unload_lora_adapter', { lora_name: 'a' });
      expect(unload.body.success).toBe(true);
      expect((await running).body.meta_info.completion_tokens).toBe(40);
    }
    const end = await waitForInfo(url, (info) => info.running === 0 && info.queued === 0);
    expect(end.lora_adapters).toEqual([]);
    expect(end.tensors).toBe(start.tensors);
  });
});

describe('agentic serve: weight updates', () => {
  test('a folder of another shape, or none, answers success false and leaves the old weights serving', async () => {
    const before = await generate(url, prompts[2]!, { max_new_tokens: 8, temperature: 0 });
    const otherTemplate = join(folders, 'other-template');
    await saveModel(otherTemplate, served.model, served.tokenizer);
    writeFileSync(join(otherTemplate, 'chat_template.jinja'), '{% for m in messages %}{{ m.content }}{% endfor %}');
    for (const [path, message] of [
      [WRONG_SHAPE, /config.json has hidden_size 128, the served model 48/],
      [join(folders, 'missing'), /^model_path: no folder '.*missing' under the weights root$/],
      [otherTemplate, /its tokenizer or chat template differs from the served model's/],
    ] as const) {
      const reply = await call(url, '/update_weights_from_disk', { model_path: path, weight_version: 'bad' });
      expect(reply.status).toBe(400);
      expect(reply.body.success).toBe(false);
      expect(reply.body.message).toMatch(message);
    }
    expect((await call(url, '/get_weight_version')).body).toEqual({ weight_version: 'default' });
    const after = await generate(url, prompts[2]!, { max_new_tokens: 8, temperature: 0 });
    expect(after.body.output_ids).toEqual(before.body.output_ids);
  });

  test('an update lets the running batch finish on the old weights, then serves the new ones under their version', async () => {
    const [oldLong] = await inProcess(served.model, [prompts[5]!], 300);
    const [newShort] = await inProcess(other.model, [prompts[6]!], 12);
    const long = generate(url, prompts[5]!, { max_new_tokens: 300, temperature: 0 });
    await waitForInfo(url, (info) => info.running === 1);
    const update = call(url, '/update_weights_from_disk', { model_path: OTHER, weight_version: 'v1' });
    // sent while the update waits for the batch: it runs on the new weights
    await waitForInfo(url, (info) => info.updating);
    const after = generate(url, prompts[6]!, { max_new_tokens: 12, temperature: 0 });
    const [longReply, updateReply, afterReply] = await Promise.all([long, update, after]);
    expect(updateReply.body).toMatchObject({ success: true });
    expect(longReply.body.meta_info.weight_version).toBe('default');
    expectSame(
      longReply.body.output_ids,
      longReply.body.meta_info.output_token_logprobs.map((x: number[]) => x[0]),
      oldLong!,
    );
    expect(afterReply.body.meta_info.weight_version).toBe('v1');
    expectSame(
      afterReply.body.output_ids,
      afterReply.body.meta_info.output_token_logprobs.map((x: number[]) => x[0]),
      newShort!,
    );
    expect((await call(url, '/get_weight_version')).body).toEqual({ weight_version: 'v1' });
    expect((await call(url, '/get_model_info')).body.model_path).toBe(OTHER);
  });

  test('the tensor count stays flat across 1,000 requests and 10 weight updates', async () => {
    const SAVED = join(folders, 'served');
    await saveModel(SAVED, served.model, served.tokenizer);
    await waitForInfo(url, (info) => info.running === 0 && info.queued === 0);
    const start = (await call(url, '/get_server_info')).body;
    const params = [
      { max_new_tokens: 4, temperature: 0 },
      { max_new_tokens: 3, temperature: 1, top_k: 5 },
      { max_new_tokens: 5, temperature: 0.7, top_p: 0.9, stop: ['a', 'e'] },
    ];
    let sent = 0;
    for (let update = 0; update < 10; update++) {
      const wave = Array.from({ length: 100 }, (_, i) => generate(url, prompts[(sent + i) % 64]!, params[i % 3]!));
      sent += 100;
      const swap = call(url, '/update_weights_from_disk', { model_path: update % 2 === 0 ? SAVED : OTHER, weight_version: `t${update}` });
      const replies = await Promise.all(wave);
      expect(replies.every((r) => r.status === 200)).toBe(true);
      expect((await swap).body.success).toBe(true);
    }
    const end = await waitForInfo(url, (info) => info.running === 0 && info.queued === 0);
    expect(end.served - start.served).toBe(1000);
    expect(end.weight_updates - start.weight_updates).toBe(10);
    expect(end.tensors).toBe(start.tensors);
  }, 120_000);
});
