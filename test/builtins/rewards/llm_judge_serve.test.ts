/**
 * The judge on a real OpenAI-compatible server: `agentic serve` (a random nano model, so its
 * verdicts are nonsense, but the round trip is real). The reply is asked for, read by the parser
 * (a score or unparseable, never a failure to reach the server), and cached for the replay.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import llmJudge from '../../../plugins/rewards/llm_judge';
import { clearReplyCache } from '../../../plugins/rewards/llm_judge/cache';
import { bindReward } from '../../../src/sdk/reward_reference';
import { scoreSafely } from '../../../src/sdk/score';
import { type ServeProcess, startServe } from '../../serve/helpers';

setDefaultTimeout(60_000);

let server: ServeProcess;
beforeAll(async () => {
  server = await startServe(['pretrain=agentic:nano', 'seed=5', 'sequence_length=512']);
});
afterAll(async () => {
  await server.stop();
});

test('llm_judge asks agentic serve, whose reply is scored or marked unparseable, and a replay is cached', async () => {
  clearReplyCache();
  const judge = bindReward(llmJudge, { name: 'llm_judge', base_url: server.url, parser: 'number', max_tokens: 8, max_retries: 0 });
  const input = { response: '42', trajectory: [], row: { question: 'What is 6 times 7?', answer: '42' } };
  const first = await scoreSafely(judge, input);
  expect(first.metrics['judge/cached']).toBe(0);
  expect(first.metrics['judge/latency_s']).toBeGreaterThan(0);
  // the server answered: either a number in [0, 1] or a reply the parser could not read
  if (first.metrics['judge/unparseable'] === 1) expect(first.error).toMatch(/unparseable|no number|not a number|could not/i);
  else expect(first.metrics['judge/failed']).toBe(0);
  expect(first.error ?? '').not.toMatch(/connect|refused|unreachable|timed out/i);
  const replay = await scoreSafely(judge, input);
  expect(replay.metrics['judge/cached']).toBe(1);
  expect(replay.reward).toBe(first.reward);
});
