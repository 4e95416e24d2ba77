import { describe, expect, test } from 'bun:test';
import { episodeFailure, episodeFailures, failureMetrics, failuresLine, type FailingEpisode } from '../../src/rollout/failures';

const ok: FailingEpisode = { endReason: 'terminated', failure: null, turns: [{}] };
const threw: FailingEpisode = { endReason: 'env_failure', failure: 'env Calc#0: runAgent() threw: no\n  at run (agent.ts:1)', turns: [] };
const late: FailingEpisode = { endReason: 'timeout', failure: 'the agent did not finish within the episode budget of 5 s', turns: [{}] };
const unscored: FailingEpisode = { endReason: 'terminated', failure: null, turns: [{}, { rewardError: "reward 'judge': judge failed: ECONNREFUSED" }] };

describe("a batch's failed episodes", () => {
  test('an episode fails with its ending and line, or with its reward that could not score; the ending wins', () => {
    expect(episodeFailure(ok)).toBeNull();
    expect(episodeFailure(threw)).toEqual({ kind: 'env_failure', reason: 'env Calc#0: runAgent() threw: no at run (agent.ts:1)' });
    expect(episodeFailure(unscored)).toEqual({ kind: 'reward_error', reason: "reward 'judge': judge failed: ECONNREFUSED" });
    expect(episodeFailure({ ...late, turns: unscored.turns })?.kind).toBe('timeout');
  });

  test('kinds are counted, most first (ties as they came), each with its first reason; metrics count every kind that occurred', () => {
    const failures = episodeFailures([ok, late, unscored, threw, { ...threw, failure: 'another' }, ok]);
    expect(failures).toEqual({
      failed: 4,
      episodes: 6,
      kinds: [
        { kind: 'env_failure', count: 2, first: 'env Calc#0: runAgent() threw: no at run (agent.ts:1)' },
        { kind: 'timeout', count: 1, first: late.failure! },
        { kind: 'reward_error', count: 1, first: "reward 'judge': judge failed: ECONNREFUSED" },
      ],
    });
    expect(failureMetrics(failures)).toEqual({ 'failures/total': 4, 'failures/env_failure': 2, 'failures/timeout': 1, 'failures/reward_error': 1 });
    expect(failureMetrics(episodeFailures([ok]))).toEqual({ 'failures/total': 0 });
  });

  test('one short line: the count of the batch, each kind with its count and first reason, a long reason cut', () => {
    expect(failuresLine(episodeFailures([ok, ok]))).toBeNull();
    expect(failuresLine(episodeFailures([threw, late, ok]))).toBe(
      'failed 2/3: env_failure 1 (env Calc#0: runAgent() threw: no at run (agent.ts:1)); timeout 1 (the agent did not finish within the episode budget of 5 s)',
    );
    const long = failuresLine(episodeFailures([{ ...threw, failure: 'x'.repeat(500) }]))!;
    expect(long).toBe(`failed 1/1: env_failure 1 (${'x'.repeat(157)}...)`);
  });
});
