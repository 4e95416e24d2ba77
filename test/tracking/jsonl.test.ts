import { describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JsonlTracker, readMetricsJsonl } from '../../src/tracking/jsonl';
import { scratch } from '../helpers';

describe('readMetricsJsonl', () => {
  test("reads the jsonl tracker's records, non-finite values included, skipping a torn last line, and names a bad line", () => {
    const dir = scratch();
    const path = join(dir, 'metrics.jsonl');
    writeFileSync(path, '{"step":0,"metrics":{"a":1,"b":"NaN","c":"Infinity"}}\n\n{"step":1,"metrics":{"a":2}}\n{"step":2,"met');
    expect(readMetricsJsonl(path)).toEqual([
      { step: 0, metrics: { a: 1, b: Number.NaN, c: Number.POSITIVE_INFINITY } },
      { step: 1, metrics: { a: 2 } },
    ]);
    writeFileSync(path, '{"step":0,"metrics":{}}\nnot json\n');
    expect(() => readMetricsJsonl(path)).toThrow(`${path}:2: not a JSON line`);
    writeFileSync(path, '{"step":"0","metrics":{}}\n');
    expect(() => readMetricsJsonl(path)).toThrow(`${path}:1: not a metrics record`);
  });

  test("a step's failed episodes are written with their reasons and read back; a malformed record names its line", () => {
    const dir = scratch();
    const tracker = new JsonlTracker(dir);
    const failures = { failed: 3, episodes: 8, kinds: [{ kind: 'env_failure' as const, count: 3, first: 'env Calc#1: runAgent() threw: no' }] };
    tracker.log({ step: 0, metrics: { 'failures/total': 3, 'failures/env_failure': 3 }, failures });
    tracker.log({ step: 1, metrics: { 'failures/total': 0 } });
    expect(readMetricsJsonl(tracker.path)).toEqual([
      { step: 0, metrics: { 'failures/total': 3, 'failures/env_failure': 3 }, failures },
      { step: 1, metrics: { 'failures/total': 0 } },
    ]);
    writeFileSync(tracker.path, '{"step":0,"metrics":{},"failures":{"failed":1,"episodes":2,"kinds":[{"kind":"env_failure","count":"1"}]}}\n');
    expect(() => readMetricsJsonl(tracker.path)).toThrow(
      `${tracker.path}:1: "failures" is not {"failed": <count>, "episodes": <count>, "kinds": [{"kind", "count", "first"}]}`,
    );
  });

  test('reads back what the tracker writes', () => {
    const dir = scratch();
    const tracker = new JsonlTracker(dir);
    tracker.log({ step: 0, metrics: { 'val/score/mean': 0.5, 'actor/kl': Number.NaN } });
    tracker.log({ step: 1, metrics: { 'val/score/mean': 0.75 } });
    expect(readMetricsJsonl(tracker.path)).toEqual([
      { step: 0, metrics: { 'val/score/mean': 0.5, 'actor/kl': Number.NaN } },
      { step: 1, metrics: { 'val/score/mean': 0.75 } },
    ]);
  });
});
