import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import llmJudge from '../../../plugins/rewards/llm_judge';
import { clearReplyCache } from '../../../plugins/rewards/llm_judge/cache';
import { parseScore } from '../../../plugins/rewards/llm_judge/parse';
import { apiRoot } from '../../../plugins/rewards/llm_judge/server';
import { freePort } from '../../../src/util/free_port';
import { bindReward } from '../../../src/sdk/reward_reference';
import { scoreSafely } from '../../../src/sdk/score';
import type { RewardInput } from '../../../src/sdk/types';
import { scratch } from '../../helpers';
import { startJudgeServer } from './judge_server';

const server = startJudgeServer();
afterAll(() => server.stop());
beforeEach(() => {
  server.requests.length = 0;
  server.maxInFlight = 0;
  server.behave(() => ({ reply: 'It matches the reference.\n1' }));
  clearReplyCache();
});

/** Fast retries, so failures are quick to test. */
const judge = (settings: Record<string, unknown> = {}) =>
  bindReward(llmJudge, { name: 'llm_judge', base_url: server.url, model: 'judge-model', retry_backoff_s: 0.01, ...settings });
const sample = (answer = '42', question = 'What is 6 times 7?'): RewardInput => ({
  response: answer,
  trajectory: [],
  row: { question, answer: '42', topic: 'arithmetic' },
});
const score = async (settings: Record<string, unknown> = {}, input = sample()) => scoreSafely(judge(settings), input);

describe('llm_judge: asking the server', () => {
  test('asks /v1/chat/completions as OpenAI is asked, and the last number of the reply is the reward', async () => {
    process.env.JUDGE_TEST_KEY = 'sk-test';
    const result = await score({ api_key_env: 'JUDGE_TEST_KEY', max_tokens: 64 });
    expect(result).toMatchObject({ reward: 1, metrics: { 'judge/score': 1, 'judge/cached': 0, 'judge/failed': 0, 'judge/unparseable': 0 } });
    expect(result.error).toBeUndefined();
    expect(result.metrics['judge/latency_s']).toBeGreaterThan(0);
    const [request] = server.chats();
    expect(request!.authorization).toBe('Bearer sk-test');
    expect(request!.body).toMatchObject({ model: 'judge-model', max_tokens: 64, temperature: 0 });
    const prompt = request!.body!.messages[0]!.content;
    expect(request!.body!.messages).toEqual([{ role: 'user', content: prompt }]);
    expect(prompt).toContain('What is 6 times 7?');
    expect(prompt).toContain('Reference answer:\n42');
  });

  test('a base URL with or without /v1 reaches the same API root, as the openai client takes it', async () => {
    expect(apiRoot('http://127.0.0.1:8000')).toBe('http://127.0.0.1:8000/v1');
    expect(apiRoot('http://127.0.0.1:8000/')).toBe('http://127.0.0.1:8000/v1');
    expect(apiRoot('http://127.0.0.1:8000/v1/')).toBe('http://127.0.0.1:8000/v1');
    expect(apiRoot('https://openrouter.ai/api/v1')).toBe('https://openrouter.ai/api/v1');
    await score({ base_url: `${server.url}/v1` });
    await score({ base_url: server.url }, sample('41'));
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
  });

  test('without a model it asks the first model the server lists, once', async () => {
    await Promise.all([score({ model: null }, sample('1')), score({ model: null }, sample('2'))]);
    await score({ model: null }, sample('3'));
    expect(server.requests.filter((r) => r.path === '/v1/models')).toHaveLength(1);
    expect(server.chats().map((r) => r.body!.model)).toEqual(['judge-model', 'judge-model', 'judge-model']);
  });

  test('the rubric is a template of the sample: {question}, {answer}, {reference} and row fields', async () => {
    await score({ rubric: 'Q={question} A={answer} R={reference} T={topic} {"json": "stays"} Score 0 to 1.' }, sample('forty-two'));
    expect(server.chats()[0]!.body!.messages[0]!.content).toBe('Q=What is 6 times 7? A=forty-two R=42 T=arithmetic {"json": "stays"} Score 0 to 1.');
    const missing = await score({ rubric: 'Grade {answer} for {level}' });
    expect(missing).toMatchObject({ reward: 0, metrics: { 'judge/failed': 1 } });
    expect(missing.error).toBe("reward 'llm_judge': judge failed: the rubric's {level} has no value: the row has no 'level'");
  });

  test('pass_fail reads the last of PASS, FAIL, YES, NO; its built-in rubric asks for PASS or FAIL', async () => {
    server.behave((_, n) => ({ reply: ['Reasoning: it would fail only if wrong.\nPASS', 'no', 'Yes.', 'FAIL'][n] }));
    const rewards = [];
    for (const answer of ['a', 'b', 'c', 'd']) rewards.push((await score({ parser: 'pass_fail' }, sample(answer))).reward);
    expect(rewards).toEqual([1, 0, 1, 0]);
    expect(server.chats()[0]!.body!.messages[0]!.content).toContain('PASS if it does or FAIL');
  });
});

describe('llm_judge: reading scores', () => {
  test('number: the last number, which must lie in [0, 1]', () => {
    expect(parseScore('Score: 0.8', 'number')).toBe(0.8);
    expect(parseScore('I weighed 3 points; final: .5', 'number')).toBe(0.5);
    expect(parseScore('1.', 'number')).toBe(1);
    expect(parseScore('Score: 7', 'number')).toBeNull();
    expect(parseScore('-0.5', 'number')).toBeNull();
    expect(parseScore('looks right', 'number')).toBeNull();
  });

  test('pass_fail: whole words in any case, the last one decides', () => {
    expect(parseScore('PASS', 'pass_fail')).toBe(1);
    expect(parseScore('Verdict: fail', 'pass_fail')).toBe(0);
    expect(parseScore('Not a failure, so: yes', 'pass_fail')).toBe(1);
    expect(parseScore('passing grade', 'pass_fail')).toBeNull();
  });

  test('a reply without a score is a marked failure: reward 0, judge/unparseable and judge/failed 1', async () => {
    server.behave((_, n) => ({ reply: ['I think it is fine.', 'Score: 7/10'][n] }));
    for (const answer of ['a', 'b']) {
      const result = await score({}, sample(answer));
      expect(result).toMatchObject({ reward: 0, metrics: { 'judge/failed': 1, 'judge/unparseable': 1, 'judge/score': 0 } });
      expect(result.error).toStartWith("reward 'llm_judge': judge failed: the judge's reply gives no number in [0, 1]");
    }
  });
});

describe('llm_judge: cache', () => {
  test('a sample judged once is not asked again; another answer, model or rubric is', async () => {
    const first = await score();
    const again = await score();
    expect(again).toMatchObject({ reward: 1, metrics: { 'judge/cached': 1, 'judge/latency_s': 0 } });
    expect(first.metrics['judge/cached']).toBe(0);
    expect(server.chats()).toHaveLength(1);
    await score({}, sample('41'));
    await score({ model: 'other-model' });
    await score({ rubric: 'Grade {answer}: 0 or 1' });
    expect(server.chats()).toHaveLength(4);
  });

  test('the reply is kept, not the score: another parser re-reads it without asking', async () => {
    server.behave(() => ({ reply: 'yes, 1' }));
    await score({ rubric: 'Is {answer} right?' });
    expect((await score({ rubric: 'Is {answer} right?', parser: 'pass_fail' })).metrics).toMatchObject({ 'judge/cached': 1, 'judge/score': 1 });
    expect(server.chats()).toHaveLength(1);
  });

  test('cache_file: a later process pays nothing; a line cut short by a crash is skipped and not glued to the next', async () => {
    const dir = scratch();
    const file = join(dir, 'judge', 'cache.jsonl');
    await score({ cache_file: file });
    expect(server.chats()).toHaveLength(1);
    clearReplyCache(); // as a new process finds it
    writeFileSync(file, `${readFileSync(file, 'utf8')}{"key": "cut sh`);
    expect(await score({ cache_file: file })).toMatchObject({ reward: 1, metrics: { 'judge/cached': 1 } });
    expect(server.chats()).toHaveLength(1);
    await score({ cache_file: file }, sample('41'));
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(
      lines.map((line) => {
        try {
          return JSON.parse(line).key !== undefined;
        } catch {
          return line;
        }
      }),
    ).toEqual([true, '{"key": "cut sh', true, '']);
  });

  test('failures are not cached: the next try asks again', async () => {
    server.behave((_, n) => (n === 0 ? { status: 400 } : { reply: '1' }));
    expect((await score()).metrics['judge/failed']).toBe(1);
    expect((await score()).metrics).toMatchObject({ 'judge/failed': 0, 'judge/cached': 0 });
    expect(server.chats()).toHaveLength(2);
  });
});

describe('llm_judge: bounds, retries and a judge that is down', () => {
  test('requests to one judge are bounded across every binding of the process', async () => {
    server.behave(() => ({ reply: '1', delayMs: 40 }));
    const a = judge({ concurrency: 2 });
    const b = judge({ concurrency: 3, rubric: 'Another rubric for {answer}: 0 or 1' });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => scoreSafely(i % 2 === 0 ? a : b, sample(String(i)))));
    expect(results.every((r) => r.reward === 1)).toBe(true);
    expect(server.chats()).toHaveLength(10);
    expect(server.maxInFlight).toBe(2);
  });

  test('a 500 and a time-out are retried with backoff; the reward comes from the answer that arrives', async () => {
    server.behave((_, n) => (n === 0 ? { status: 500 } : n === 1 ? { reply: '0', delayMs: 400 } : { reply: '0.75' }));
    const result = await score({ timeout_s: 0.1 });
    expect(result).toMatchObject({ reward: 0.75, metrics: { 'judge/failed': 0 } });
    expect(server.chats()).toHaveLength(3);
  });

  test('retries run out: reward 0, marked, with the last failure and the tries', async () => {
    server.behave(() => ({ status: 503 }));
    const result = await score({ max_retries: 2 });
    expect(result).toMatchObject({ reward: 0, metrics: { 'judge/failed': 1, 'judge/unparseable': 0 } });
    expect(result.error).toMatch(/^reward 'llm_judge': judge failed: http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: HTTP 503: .* \(after 3 tries\)$/);
    expect(server.chats()).toHaveLength(3);
  });

  test('a refusal that will not pass (401) is not retried', async () => {
    server.behave(() => ({ status: 401 }));
    expect((await score()).metrics['judge/failed']).toBe(1);
    expect(server.chats()).toHaveLength(1);
  });

  test('a judge that is down (its port closed) is a marked failure, quickly', async () => {
    const port = await freePort();
    const started = performance.now();
    const result = await score({ base_url: `http://127.0.0.1:${port}`, max_retries: 2 });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ reward: 0, metrics: { 'judge/failed': 1, 'judge/cached': 0 } });
    expect(result.error).toContain(`http://127.0.0.1:${port}/v1/chat/completions`);
    expect(result.error).toEndWith('(after 3 tries)');
  });

  test('with no model set and the server down, the failure says where it asked', async () => {
    const port = await freePort();
    const result = await score({ base_url: `http://127.0.0.1:${port}`, model: null, max_retries: 0 });
    expect(result.metrics['judge/failed']).toBe(1);
    expect(result.error).toContain(`http://127.0.0.1:${port}/v1/models`);
  });
});

describe('llm_judge: settings', () => {
  afterEach(() => {
    delete process.env.JUDGE_TEST_KEY;
  });

  test('bad settings are one line naming the key', () => {
    const bind = (settings: Record<string, unknown>) => () => bindReward(llmJudge, { name: 'llm_judge', ...settings });
    expect(bind({})).toThrow(/^reward 'llm_judge': base_url: /);
    expect(bind({ base_url: 'ftp://x' })).toThrow(/^reward 'llm_judge': base_url: /);
    expect(bind({ base_url: server.url, parser: 'stars' })).toThrow(/^reward 'llm_judge': parser: /);
    expect(bind({ base_url: server.url, api_key: 'sk-secret' })).toThrow("reward 'llm_judge': api_key: unknown setting");
    expect(bind({ base_url: server.url, api_key_env: 'JUDGE_TEST_UNSET' })).toThrow(
      "reward 'llm_judge': api_key_env: environment variable JUDGE_TEST_UNSET is not set",
    );
  });
});
