/**
 * The HTTP policy (llm_proxy.proxy_type sglang, openai) as a specification: the request bodies,
 * what a reply must be to enter the rows, server choice, retries and their backoff, the start-up
 * tokenizer check, and rollouts against real servers on loopback: a Bun.serve in this file that
 * answers SGLang's /generate by running our own model through the continuous-batching scheduler,
 * and servers that are down, slow, overloaded or talk nonsense. (`agentic serve` itself is the
 * server of test/rollout_sources/server.test.ts.)
 */
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { AgenticConfig } from '../../src/config/schema';
import { Rng } from '../../src/engine/rng';
import { InferenceError } from '../../src/errors';
import { tokenizerFingerprint } from '../../src/model/fingerprint';
import { EnvManager, makePolicy, withProxyType } from '../../src/rollout/env_manager';
import {
  completionsRequest,
  generateRequest,
  HttpPolicy,
  parseCompletions,
  parseGenerate,
  serverSampling,
  type ServerSampling,
} from '../../src/rollout/http_policy';
import { GenerationScheduler } from '../../src/rollout/scheduler';
import { backoffMs, CallFailure, InferenceServers, retryAfterMs, SessionRouter } from '../../src/rollout/servers';
import type { RolloutBatch } from '../../src/rollout/types';
import { chat, configFrom, hostWith, lakeYaml, model, tokenizer } from './helpers';

setDefaultTimeout(60_000);

const SAMPLING: ServerSampling = { temperature: 1, top_p: 1, top_k: -1, stop: [], stop_token_ids: [7] };

describe('requests', () => {
  test('generating_args in SGLang names: greedy is temperature 0, top_k 0 is -1, stop strings and the chat stop ids', () => {
    const gen = { max_new_tokens: 9, temperature: 0.7, top_p: 0.9, top_k: 0, do_sample: false, answer_temperature: null, stop_strings: ['</answer>'] };
    expect(serverSampling(gen, [5, 6])).toEqual({ temperature: 0, top_p: 0.9, top_k: -1, stop: ['</answer>'], stop_token_ids: [5, 6] });
    expect(serverSampling({ ...gen, do_sample: true, top_k: 20, stop_strings: null }, [5])).toMatchObject({ temperature: 0.7, top_k: 20, stop: [] });
  });

  test("/generate and /v1/completions carry the prompt as the chat's ids, the budget and the turn's seed", () => {
    const turn = { promptIds: [1, 2, 3], maxNewTokens: 4, seed: 99 };
    expect(generateRequest(turn, SAMPLING, 'r1')).toEqual({
      input_ids: [1, 2, 3],
      sampling_params: { ...SAMPLING, max_new_tokens: 4, sampling_seed: 99 },
      return_logprob: true,
      rid: 'r1',
    });
    expect(completionsRequest(turn, SAMPLING, 'm')).toMatchObject({
      model: 'm',
      prompt: [1, 2, 3],
      max_tokens: 4,
      seed: 99,
      stop_token_ids: [7],
      logprobs: 0,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    });
  });
});

describe('replies', () => {
  const generated = (over: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
    output_ids: [4, 7],
    text: 'x',
    meta_info: {
      finish_reason: { type: 'stop', matched: 7 },
      output_token_logprobs: [
        [-0.5, 4, null],
        [-1.25, 7, null],
      ],
      weight_version: '3',
      ...meta,
    },
    ...over,
  });

  test('an SGLang reply enters as sent: ids, log-probs, why it stopped, the weight version', () => {
    expect(parseGenerate(generated(), 8, [7])).toEqual({ tokens: [4, 7], logProbs: [-0.5, -1.25], finishReason: 'stop_token', weightVersion: '3' });
    expect(parseGenerate(generated({}, { finish_reason: { type: 'stop', matched: '</a>' } }), 8, [7]).finishReason).toBe('stop_string');
    expect(parseGenerate(generated({}, { finish_reason: { type: 'length', length: 2 } }), 2, [7]).finishReason).toBe('length');
  });

  test('replies that break the turn are refused with the reason, and only an abort is worth asking again', () => {
    const refusal = (answer: unknown, budget = 8): CallFailure => {
      try {
        parseGenerate(answer, budget, [7]);
      } catch (error) {
        return error as CallFailure;
      }
      throw new Error('accepted');
    };
    expect(refusal(generated(), 1).message).toBe('the answer has 2 output ids, over the 1 asked for');
    expect(refusal(generated({ output_ids: [4, 8] })).message).toBe('the answer gives the log-prob of token 7 for output id 8 (position 1)');
    expect(refusal(generated({}, { output_token_logprobs: [[-0.5, 4, null]] })).message).toBe('the answer has 1 log-probs for 2 output ids');
    expect(refusal(generated({ output_ids: [4, -1] })).message).toBe('the answer has no list of output token ids');
    expect(
      refusal(
        generated(
          {},
          {
            output_token_logprobs: [
              [null, 4],
              [-1, 7],
            ],
          },
        ),
      ).message,
    ).toBe('the answer has a log-prob that is not a finite number');
    expect(refusal({ output_ids: [] }).retryable).toBe(false);
    const aborted = refusal(generated({}, { finish_reason: { type: 'abort', message: 'draining' } }));
    expect([aborted.message, aborted.retryable]).toEqual(['the server aborted the request: draining', true]);
  });

  test('an OpenAI reply: token_ids with token_logprobs, and "token_id:N" names that must agree', () => {
    const choice = (over: Record<string, unknown> = {}) => ({
      choices: [
        {
          index: 0,
          text: 'x',
          token_ids: [4, 7],
          finish_reason: 'stop',
          logprobs: { tokens: ['token_id:4', 'token_id:7'], token_logprobs: [-0.5, -1.25] },
          ...over,
        },
      ],
    });
    expect(parseCompletions(choice(), 8, [7])).toEqual({ tokens: [4, 7], logProbs: [-0.5, -1.25], finishReason: 'stop_token', weightVersion: null });
    // without token_ids (a server that only names the tokens), the names give the ids
    expect(parseCompletions(choice({ token_ids: undefined }), 8, [7]).tokens).toEqual([4, 7]);
    expect(() => parseCompletions(choice({ token_ids: [4, 9] }), 8, [7])).toThrow('logprobs.tokens that are not its token_ids');
    expect(() => parseCompletions(choice({ finish_reason: 'length' }), 1, [7])).toThrow('over the 1 asked for');
  });
});

describe('server choice and retries', () => {
  test('sessions spread over the servers in turn and keep theirs; a retry moves on, and the session follows the server that answered', () => {
    const router = new SessionRouter(3);
    expect(['a', 'b', 'c', 'd'].map((s) => router.serverFor(s, 0))).toEqual([0, 1, 2, 0]);
    expect(router.serverFor('b', 0)).toBe(1);
    expect([0, 1, 2, 3].map((attempt) => router.serverFor('c', attempt))).toEqual([2, 0, 1, 2]);
    router.pin('c', 0);
    expect(router.serverFor('c', 0)).toBe(0);
  });

  test('the backoff doubles up to a minute; Retry-After in seconds wins', () => {
    expect([0, 1, 2, 3].map((a) => backoffMs(a, 500))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(20, 500)).toBe(60_000);
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('0.5')).toBe(500);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });
});

interface TestServer {
  url: string;
  /** Requests seen, by path. */
  seen: Array<{ path: string; body: Record<string, unknown> }>;
  stop(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

/** A real HTTP server on a free loopback port; `handle` answers a request (null: 404); `onStop` frees what it holds. */
function serve(
  handle: (path: string, body: Record<string, unknown>, request: Request) => Promise<Response | null> | Response | null,
  onStop: () => Promise<void> = async () => {},
): TestServer {
  const seen: TestServer['seen'] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const path = new URL(request.url).pathname;
      const body = request.method === 'POST' ? ((await request.json()) as Record<string, unknown>) : {};
      seen.push({ path, body });
      return (await handle(path, body, request)) ?? Response.json({ error: { message: `no ${path}` } }, { status: 404 });
    },
  });
  let stopped = false;
  const running: TestServer = {
    url: `http://127.0.0.1:${server.port}`,
    seen,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await server.stop(true);
      await onStop();
    },
  };
  servers.push(running);
  return running;
}

const MODEL_INFO = { model_path: 'test', is_generation: true, ...snake(tokenizerFingerprint(tokenizer)) };
function snake(f: ReturnType<typeof tokenizerFingerprint>) {
  return { tokenizer_sha256: f.tokenizerSha256, chat_template_sha256: f.chatTemplateSha256 };
}

/**
 * SGLang's /generate answered by our model: the scheduler batches what arrives, each request
 * sampling from its own seed, and the reply carries the ids and log-probs the scheduler produced.
 */
function modelServer(version = '0'): TestServer {
  const scheduler = new GenerationScheduler(model, { maxRunning: 16, maxLength: 1024, decode: (ids) => chat.responseText(ids) });
  return serve(
    async (path, body) => {
      if (path === '/get_model_info') return Response.json(MODEL_INFO);
      if (path === '/abort_request') return Response.json({ success: true });
      if (path !== '/generate') return null;
      const p = body.sampling_params as Record<string, number | number[] | string[]>;
      const result = await scheduler.generate({
        id: body.rid as string,
        promptIds: body.input_ids as number[],
        sampling: {
          temperature: p.temperature as number,
          topP: p.top_p as number,
          topK: Math.max(0, p.top_k as number),
          doSample: (p.temperature as number) > 0,
        },
        maxNewTokens: p.max_new_tokens as number,
        rng: Rng.fromSeed(p.sampling_seed as number),
        stopTokenIds: p.stop_token_ids as number[],
      });
      const finish = result.finishReason === 'length' ? { type: 'length', length: result.tokens.length } : { type: 'stop', matched: result.tokens.at(-1) };
      return Response.json({
        output_ids: result.tokens,
        text: chat.responseText(result.tokens),
        meta_info: {
          id: body.rid,
          finish_reason: finish,
          output_token_logprobs: result.tokens.map((id, i) => [result.logProbs[i], id, null]),
          weight_version: version,
        },
      });
    },
    () => scheduler.close(),
  );
}

function proxied(yaml: string, urls: string[], extra: string[] = []): Promise<AgenticConfig> {
  return configFrom(yaml, hostWith(), [
    'train_env_manager.llm_proxy.proxy_type=sglang',
    `train_env_manager.llm_proxy.proxy_config.base_url=[${urls.join(',')}]`,
    ...extra,
  ]);
}

async function serverRollout(config: AgenticConfig): Promise<{ batch: RolloutBatch; manager: EnvManager }> {
  const manager = await EnvManager.build('train', config, hostWith());
  try {
    await manager.servers!.connect(tokenizer);
    return { batch: await manager.play(config.rollout_batch_size, null, chat), manager };
  } finally {
    await manager.close();
  }
}

describe('rollouts against a server of our model', () => {
  test("greedy, the server's ids and log-probs are the in-process policy's (log-probs within 1e-4)", async () => {
    const server = modelServer();
    const config = await proxied(lakeYaml({ groups: 2, size: 2, greedy: true }), [server.url]);
    const local = await EnvManager.build('train', config, hostWith());
    const here = makePolicy(withProxyType(config, 'train', 'policy'), 'train', model, chat);
    let inProcess: RolloutBatch;
    try {
      inProcess = await local.collect(config.rollout_batch_size, here, chat);
    } finally {
      await here.close();
      await local.close();
    }
    const { batch } = await serverRollout(config);
    expect(batch.samples.map((s) => [...s.inputIds])).toEqual(inProcess.samples.map((s) => [...s.inputIds]));
    for (const [i, sample] of batch.samples.entries()) {
      const expected = inProcess.samples[i]!.logProbs;
      sample.logProbs.forEach((lp, t) => expect(Math.abs(lp - expected[t]!)).toBeLessThan(1e-4));
    }
    expect(batch.metrics['env/Lake/infer_failure']).toBe(0);
    // the requests carried exactly the ids of the rows
    const prompts = server.seen.filter((r) => r.path === '/generate').map((r) => (r.body.input_ids as number[]).length);
    expect(prompts.length).toBe(batch.episodes.reduce((n, e) => n + e.turns.length, 0));
  });

  test('sampling repeats: the same seeds give the same rows, and each env keeps to one of two servers', async () => {
    const a = modelServer();
    const b = modelServer();
    const config = await proxied(lakeYaml({ groups: 2, size: 2 }), [a.url, b.url]);
    const first = (await serverRollout(config)).batch;
    const second = (await serverRollout(config)).batch;
    expect(second.samples.map((s) => [...s.inputIds])).toEqual(first.samples.map((s) => [...s.inputIds]));
    // the server batches requests as they arrive, which moves log-probs in their last bits only
    second.samples.forEach((sample, i) => sample.logProbs.forEach((lp, t) => expect(Math.abs(lp - first.samples[i]!.logProbs[t]!)).toBeLessThan(1e-5)));
    const ridsOf = (server: TestServer) => new Set(server.seen.filter((r) => r.path === '/generate').map((r) => (r.body.rid as string).split('-')[3]));
    // rid: agentic-<pid>-<policy>-<mode:env:episode:turn>-<attempt>: the envs each server saw
    const envs = (server: TestServer) => new Set([...ridsOf(server)].map((id) => id!.split(':')[1]));
    expect(envs(a).size).toBe(2);
    expect(envs(b).size).toBe(2);
    expect([...envs(a)].some((e) => envs(b).has(e))).toBe(false);
  });

  test('a server that version-checks: a reply of other weights than the ones sent fails its episode', async () => {
    const server = modelServer('7');
    const config = await proxied(lakeYaml({ groups: 1, size: 2, greedy: true }), [server.url], ['train_env_manager.llm_proxy.proxy_config.max_retries=0']);
    const manager = await EnvManager.build('train', config, hostWith());
    try {
      await manager.servers!.connect(tokenizer);
      manager.servers!.weightVersion = '8';
      const batch = await manager.play(config.rollout_batch_size, null, chat);
      expect(batch.episodes.map((e) => e.endReason)).toEqual(['infer_failure', 'infer_failure']);
      expect(batch.episodes[0]!.failure).toContain('answered with weight version 7, not 8');
      expect(batch.metrics['env/Lake/infer_failure']).toBe(1);
    } finally {
      await manager.close();
    }
  });
});

describe('failures', () => {
  test('an overloaded server (503, Retry-After) is asked again and the episode goes on', async () => {
    const model = modelServer();
    let refused = 0;
    const busy = serve(async (path, body, request) => {
      if (path === '/generate' && refused < 2) {
        refused++;
        return new Response(JSON.stringify({ error: { message: 'queue full' } }), { status: 503, headers: { 'retry-after': '0.05' } });
      }
      return fetch(model.url + path, { method: request.method, body: request.method === 'POST' ? JSON.stringify(body) : undefined });
    });
    const config = await proxied(lakeYaml({ groups: 1, size: 1, greedy: true, maxSteps: 1 }), [busy.url]);
    const { batch } = await serverRollout(config);
    expect(refused).toBe(2);
    expect(batch.episodes[0]!.endReason).not.toBe('infer_failure');
  });

  test('a server that died: max_retries tries with a growing wait, then infer_failure, counted', async () => {
    const dying = serve((path) => (path === '/get_model_info' ? Response.json(MODEL_INFO) : null));
    const config = await proxied(
      lakeYaml({ groups: 1, size: 2 }),
      [dying.url],
      ['train_env_manager.llm_proxy.proxy_config.max_retries=2', 'train_env_manager.llm_proxy.proxy_config.retry_backoff_s=0.05'],
    );
    const pool = new InferenceServers('sglang', config.train_env_manager.llm_proxy.proxy_config, 'train_env_manager');
    await pool.connect(tokenizer);
    await dying.stop();
    const manager = await EnvManager.build('train', config, hostWith());
    const policy = new HttpPolicy(pool, { sampling: SAMPLING });
    const started = performance.now();
    try {
      const batch = await manager.collect(2, policy, chat);
      expect(batch.episodes.map((e) => e.endReason)).toEqual(['infer_failure', 'infer_failure']);
      expect(batch.episodes[0]!.failure).toMatch(/^train_env_manager: http:\/\/127\.0\.0\.1:\d+\/generate: .* \(3 tries\)$/);
      expect(batch.metrics['env/Lake/infer_failure']).toBe(1);
      expect(batch.metrics['env/Lake/env_failure']).toBe(0);
      // waits of 50 and 100 ms
      expect(performance.now() - started).toBeGreaterThan(140);
    } finally {
      await policy.close();
      await manager.close();
    }
  });

  test('no server answering for unavailable_timeout_s stops the rollout with one line', async () => {
    const gone = serve(() => null);
    const url = gone.url;
    await gone.stop();
    servers.length = 0;
    const config = await proxied(
      lakeYaml({ groups: 1, size: 1 }),
      [url],
      [
        'train_env_manager.llm_proxy.proxy_config.max_retries=100',
        'train_env_manager.llm_proxy.proxy_config.retry_backoff_s=0.05',
        'train_env_manager.llm_proxy.proxy_config.unavailable_timeout_s=0.3',
      ],
    );
    const manager = await EnvManager.build('train', config, hostWith());
    try {
      const error = await manager.servers!.connect(tokenizer).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InferenceError);
      expect((error as Error).message).toMatch(
        /^train_env_manager: no inference server has answered for 0\.\d s \(unavailable_timeout_s 0\.3\); last: http:\/\/127\.0\.0\.1:\d+\/get_model_info: /,
      );
    } finally {
      await manager.close();
    }
  });

  test('a request over timeout_s is aborted, asked of the server again, and its rid aborted there', async () => {
    const slow = serve(async (path) => {
      if (path === '/get_model_info') return Response.json(MODEL_INFO);
      if (path === '/abort_request') return Response.json({ success: true });
      if (path === '/generate') await Bun.sleep(5_000);
      return null;
    });
    const config = await proxied(
      lakeYaml({ groups: 1, size: 1, maxSteps: 1 }),
      [slow.url],
      [
        'train_env_manager.llm_proxy.proxy_config.timeout_s=0.2',
        'train_env_manager.llm_proxy.proxy_config.max_retries=1',
        'train_env_manager.llm_proxy.proxy_config.retry_backoff_s=0.05',
      ],
    );
    const { batch } = await serverRollout(config);
    expect(batch.episodes[0]!.endReason).toBe('infer_failure');
    expect(batch.episodes[0]!.failure).toContain('no answer within 0.2 s (timeout_s) (2 tries)');
    const rids = slow.seen.filter((r) => r.path === '/generate').map((r) => r.body.rid);
    const aborted = slow.seen.filter((r) => r.path === '/abort_request').map((r) => r.body.rid);
    expect(rids).toHaveLength(2);
    expect(aborted.sort()).toEqual([...rids].sort());
  });

  test("an episode out of time cancels its request: the fetch ends and SGLang's /abort_request gets the rid", async () => {
    const slow = serve(async (path) => {
      if (path === '/get_model_info') return Response.json(MODEL_INFO);
      if (path === '/abort_request') return Response.json({ success: true });
      if (path === '/generate') await Bun.sleep(5_000);
      return null;
    });
    const config = await proxied(lakeYaml({ groups: 1, size: 1, maxSteps: 1 }), [slow.url], ['custom_envs.Lake.episode_timeout_s=0.3']);
    const started = performance.now();
    const { batch } = await serverRollout(config);
    expect(batch.episodes[0]!.endReason).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(3_000);
    const rid = slow.seen.find((r) => r.path === '/generate')!.body.rid;
    expect(slow.seen.filter((r) => r.path === '/abort_request').map((r) => r.body.rid)).toEqual([rid]);
  });

  test('a refusal (4xx) or nonsense is not asked again: the episode ends at once', async () => {
    const refusing = serve((path) => {
      if (path === '/get_model_info') return Response.json(MODEL_INFO);
      if (path === '/generate') return Response.json({ error: { message: 'input_ids: 99999 is not in the vocabulary', field: 'input_ids' } }, { status: 400 });
      return null;
    });
    const config = await proxied(lakeYaml({ groups: 1, size: 1 }), [refusing.url]);
    const { batch } = await serverRollout(config);
    expect(batch.episodes[0]!.failure).toMatch(/^train_env_manager: http:\/\/127\.0\.0\.1:\d+\/generate: HTTP 400: input_ids: 99999 is not in the vocabulary$/);
    expect(refusing.seen.filter((r) => r.path === '/generate')).toHaveLength(1);
  });
});

describe('the start-up check', () => {
  test("fingerprints that differ from this run's tokenizer are one line naming the server", async () => {
    const other = serve((path) => (path === '/get_model_info' ? Response.json({ ...MODEL_INFO, tokenizer_sha256: 'f'.repeat(64) }) : null));
    const config = await proxied(lakeYaml({ groups: 1, size: 1 }), [other.url]);
    const pool = new InferenceServers('sglang', config.train_env_manager.llm_proxy.proxy_config, 'train_env_manager');
    const error = (await pool.connect(tokenizer).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(InferenceError);
    expect(error.message).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+: its tokenizer \(tokenizer.json sha256 ffffffffffff\) is not this run's \([0-9a-f]{12}, .*\); start the server on the same model$/,
    );
    expect(pool.ready).toBe(false);
  });

  test('a server without fingerprints tokenizes a chat-formatted probe: the same ids pass, others are refused', async () => {
    let shift = 0;
    const foreign = serve((path, body) => {
      if (path === '/tokenize') {
        const tokens = tokenizer.encode(body.prompt as string, { addSpecialTokens: false });
        tokens[3]! += shift;
        return Response.json({ tokens, count: tokens.length, max_model_len: 1024 });
      }
      if (path === '/v1/models') return Response.json({ object: 'list', data: [{ id: 'served-name', object: 'model' }] });
      return null;
    });
    const config = await proxied(lakeYaml({ groups: 1, size: 1 }), [foreign.url]);
    const pool = new InferenceServers('openai', config.train_env_manager.llm_proxy.proxy_config, 'train_env_manager');
    await pool.connect(tokenizer);
    expect(pool.modelOf(0)).toBe('served-name');
    const probe = foreign.seen.find((r) => r.path === '/tokenize')!.body;
    // the probe has the chat format's markers in it, as special tokens
    expect(probe.prompt).toContain('<|im_start|>assistant');
    expect(probe.add_special_tokens).toBe(false);
    shift = 1;
    const error = (await new InferenceServers('openai', config.train_env_manager.llm_proxy.proxy_config, 'train_env_manager')
      .connect(tokenizer)
      .catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(
      /tokenizes a chat-formatted text differently from this run's tokenizer \(.*\): id \d+ at position 3, here \d+; start the server on the same model$/,
    );
  });
});

afterAll(async () => {
  for (const server of servers.splice(0)) await server.stop();
});
