import { describe, expect, test } from 'bun:test';
import { curvesPage, failedStepsList } from '../../src/tracking/curves';
import type { StepReport } from '../../src/train/types';

const failing = (step: number): StepReport => ({
  step,
  metrics: { 'rollout/score/mean': 0 },
  failures: { failed: 1, episodes: 4, kinds: [{ kind: 'env_failure', count: 1, first: `step ${step}: <tool> went away` }] },
});

describe("curves.html's failed episodes", () => {
  test('each failing step, counted as the console counts it, with every kind, its count and its whole first reason, escaped', () => {
    const page = curvesPage('run', [{ label: 'run', reports: [failing(0), { step: 1, metrics: { 'rollout/score/mean': 1 } }] }]);
    expect(page).toContain('<h3>Failed episodes</h3><ul><li>step 1: failed 1/4<ul><li>env_failure 1: step 0: &lt;tool&gt; went away</li></ul></li></ul>');
    expect(page).not.toContain('step 2: failed');
    expect(curvesPage('run', [{ label: 'run', reports: [{ step: 0, metrics: { 'rollout/score/mean': 1 } }] }])).not.toContain('Failed episodes');
  });

  test('a long run lists its latest 50 failing steps and says how many more metrics.jsonl has', () => {
    const list = failedStepsList(Array.from({ length: 60 }, (_, step) => failing(step)));
    expect(list).toContain('<p>10 earlier step(s) with failed episodes are not listed; metrics.jsonl has them.</p>');
    expect(list.match(/<li>step \d+: failed/g)).toHaveLength(50);
    expect(list).toContain('<li>step 11: failed');
    expect(list).not.toContain('<li>step 10: failed');
  });
});
