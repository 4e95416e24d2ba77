/**
 * The distributed ledger (src/rollout_sources/distributed/ledger.ts) without Redis: what a step's
 * jobs count as, what may be deleted once a checkpoint is on disk, and what a checkpoint keeps.
 */
import { describe, expect, test } from 'bun:test';
import { JobLedger } from '../../../src/rollout_sources/distributed/ledger';
import type { LedgerEntry } from '../../../src/train/rollout_source';

function entry(step: number, group: number): LedgerEntry {
  return {
    id: `q.s${step}.train.W.g${group}.e${step}`,
    step,
    worker: 'w1',
    version: step,
    history: 'h1',
    attempts_started: 1,
    attempts_made: 1,
    stalled_counter: 0,
    trained: false,
  };
}

describe('the distributed ledger', () => {
  test('a step counts its received jobs once: trained, or carried by a checkpoint until trained', () => {
    const ledger = new JobLedger();
    expect(ledger.empty).toBe(true);
    ledger.receive(0, [entry(0, 0), entry(0, 1)]);
    ledger.count(0, true);
    ledger.receive(1, [entry(1, 0)]);
    ledger.count(1, false);
    expect(ledger.entries().map((e) => [e.step, e.trained])).toEqual([
      [0, true],
      [0, true],
      [1, false],
    ]);
    expect(ledger.trained(0, entry(0, 1).id)).toBe(true);
    expect(ledger.trained(1, entry(1, 0).id)).toBe(false);
    // counted again (nothing received since): the carried batch is trained on after a resume
    ledger.count(1, true);
    expect(ledger.trained(1, entry(1, 0).id)).toBe(true);
    expect(ledger.entries()).toHaveLength(3);
  });

  test('once a checkpoint is on disk the counted jobs may go, and the steps all trained on keep only their number', () => {
    const ledger = new JobLedger();
    ledger.receive(0, [entry(0, 0), entry(0, 1)]);
    ledger.count(0, true);
    ledger.receive(1, [entry(1, 0)]);
    ledger.count(1, false);
    const { ids, final } = ledger.removable();
    expect(ids).toEqual([entry(0, 0).id, entry(0, 1).id, entry(1, 0).id]);
    expect(final).toEqual([0]);
    ledger.finalise(final);
    expect(ledger.state()).toEqual({ jobs: [{ ...entry(1, 0), trained: false }], finalJobs: 2 });
    expect(ledger.removable()).toEqual({ ids: [], final: [] });
    expect(ledger.empty).toBe(false);
  });

  test('a restored ledger is the one saved, apart from what was received and not yet counted', () => {
    const ledger = new JobLedger();
    ledger.receive(0, [entry(0, 0)]);
    ledger.count(0, true);
    ledger.receive(1, [entry(1, 0)]);
    const restored = new JobLedger();
    restored.restore(ledger.state());
    expect(restored.state()).toEqual(ledger.state());
    expect(restored.removable().ids).toEqual([]);
    restored.foundInRedis([entry(0, 0).id]);
    expect(restored.removable()).toEqual({ ids: [entry(0, 0).id], final: [0] });
  });
});
