/**
 * tool_use with `reward: {name: llm_judge, ...}`: whole episodes graded by a judge on a real
 * OpenAI-compatible HTTP server, and by one that is down.
 */
import { afterAll, beforeEach, expect, test } from 'bun:test';
import toolUse from '../../../plugins/envs/tool_use';
import { clearReplyCache } from '../../../plugins/rewards/llm_judge/cache';
import { PluginHost } from '../../../src/host/plugin_host';
import { episodeMetrics } from '../../../src/rollout/episode_record';
import { rolloutMetrics } from '../../../src/rollout/metrics';
import type { Episode } from '../../../src/rollout/types';
import type { StepResult } from '../../../src/sdk/types';
import { freePort } from '../../../src/util/free_port';
import { scratch } from '../../helpers';
import { startJudgeServer } from '../rewards/judge_server';
import { guarded } from './guarded';

const ROWS = scratch({ 'q.jsonl': '{"question": "What is 6 times 7?", "answer": "42"}\n' });
const server = startJudgeServer();
afterAll(() => server.stop());
beforeEach(() => {
  server.requests.length = 0;
  clearReplyCache();
});

const call = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

const turn = (result: StepResult) => ({ metrics: result.info.metrics, metricsAgg: result.info.metricsAgg ?? {} });

/** Plays one episode: a calculator call, then the answer; the finishing step's result. */
async function play(reward: Record<string, unknown>, answer: string): Promise<{ last: StepResult; metrics: Record<string, number> }> {
  const env = guarded(
    toolUse,
    { dataset: 'q.jsonl', tools: ['calculator'], reward: { name: 'llm_judge', retry_backoff_s: 0.01, ...reward } },
    new PluginHost(ROWS),
  );
  await env.reset(0);
  const first = await env.step(call('calculator', { expression: '6*7' }));
  const last = await env.step(`<answer>${answer}</answer>`);
  await env.close();
  return { last, metrics: episodeMetrics([turn(first), turn(last)], 'terminated') };
}

test('a judged episode: the judge reads the question and the final answer, and its verdict is the reward', async () => {
  server.behave((request) => ({ reply: request.body!.messages[0]!.content.includes('Answer to grade:\n42') ? 'Right.\nPASS' : 'Wrong.\nFAIL' }));
  const right = await play({ base_url: `${server.url}/v1`, parser: 'pass_fail' }, '42');
  expect(right.last).toMatchObject({ reward: 1, terminated: true });
  expect(right.last.info.reward_error).toBeUndefined();
  expect(right.metrics).toMatchObject({ success: 1, reward_error: 0, 'judge/score': 1, 'judge/failed': 0, 'judge/cached': 0, num_tool_calls: 1 });
  const wrong = await play({ base_url: `${server.url}/v1`, parser: 'pass_fail' }, '41');
  expect(wrong.last.reward).toBe(0);
  expect(wrong.metrics).toMatchObject({ success: 0, reward_error: 0, 'judge/score': 0, 'judge/failed': 0 });
  const replay = await play({ base_url: `${server.url}/v1`, parser: 'pass_fail' }, '42');
  expect(replay.metrics).toMatchObject({ 'judge/score': 1, 'judge/cached': 1 });
  expect(server.chats()).toHaveLength(2);
  // with the model the server lists first
  expect(server.chats()[0]!.body!.model).toBe('judge-model');

  // the reward's metrics become the env's, under env/<tag>/judge/...
  const episode = (metrics: Record<string, number>, score: number) => ({ tag: 'Q', metrics, score, responseTokens: 1 }) as unknown as Episode;
  const logged = rolloutMetrics('train', [episode(right.metrics, 1), episode(wrong.metrics, 0)], { seconds: 1, generatedTokens: 2 });
  expect(logged).toMatchObject({ 'env/Q/judge/score': 0.5, 'env/Q/judge/failed': 0, 'env/Q/success': 0.5 });
});

test('a judge that is down costs the episode its reward, marked, and the episode still ends', async () => {
  const port = await freePort();
  const { last, metrics } = await play({ base_url: `http://127.0.0.1:${port}`, model: 'm', max_retries: 1 }, '42');
  expect(last).toMatchObject({ reward: 0, terminated: true, truncated: false });
  expect(last.info.reward_error).toStartWith(`llm_judge: judge failed: http://127.0.0.1:${port}/v1/chat/completions: `);
  expect(last.info.actionDesc).toStartWith('Answered; the reward function failed: llm_judge: judge failed:');
  expect(metrics).toMatchObject({ success: 0, reward_error: 1, 'judge/failed': 1, 'judge/score': 0 });
});
