import { describe, expect, test } from 'bun:test';
import { ConsoleTracker, stepLine } from '../../src/tracking/console';

const failures = { failed: 2, episodes: 8, kinds: [{ kind: 'env_failure' as const, count: 2, first: 'env Calc#0: runAgent() threw: no' }] };

describe('the console tracker', () => {
  test("a step's line ends with its failed episodes, by kind with the first reason", () => {
    const report = { step: 0, metrics: { 'rollout/score/mean': 0.25, 'time/step_total': 1.5 }, failures };
    expect(stepLine(report, 10)).toBe('step  1/10  score 0.250  1.5s  failed 2/8: env_failure 2 (env Calc#0: runAgent() threw: no)');
    expect(stepLine({ ...report, failures: undefined }, 10)).toBe('step  1/10  score 0.250  1.5s');
  });

  test('a step with failed episodes is printed whatever logging_steps says', () => {
    const written: string[] = [];
    const tracker = new ConsoleTracker(10, 5, 0, (text) => written.push(text), false);
    for (const step of [1, 2, 3]) tracker.log({ step, metrics: { 'time/step_total': 1 }, ...(step === 2 ? { failures } : {}) });
    expect(written).toEqual(['step  3/10  1.0s  failed 2/8: env_failure 2 (env Calc#0: runAgent() threw: no)\n']);
  });
});
