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
