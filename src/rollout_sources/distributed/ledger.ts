/**
 * The distributed ledger (docs/distributed.md, "Exactly once"): every job whose rows a checkpoint
 * counts, by step and job id: the steps trained, and the batches a checkpoint carries. Ledger ids
 * are never ingested again. Jobs are deleted from Redis only after the checkpoint that counts them
 * is on disk, so a trainer killed between ingesting a step and its checkpoint finds that step's
 * results again on resume. Once they are deleted, a later checkpoint keeps only their number
 * (final_jobs): steps before the checkpoint are never asked for again, so the ledger lists the
 * jobs of the steps since the previous checkpoint and the batches still carried, and stays that
 * size however long the run. Redis is not its business: ./player.ts deletes what it says may go.
 */
import type { LedgerEntry, LedgerState } from '../../train/rollout_source';

export class JobLedger {
  /** The ledger by step, then job id: steps since the last checkpoint, and carried batches. */
  private readonly steps = new Map<number, Map<string, LedgerEntry>>();
  private finalJobs = 0;
  /** Results of train steps taken from the queue and not yet counted. */
  private readonly received = new Map<number, LedgerEntry[]>();
  /** Ledger ids still to delete from Redis, after the next checkpoint. */
  private doomed: string[] = [];

  /** Nothing counted, now or in an earlier checkpoint: a run from its start. */
  get empty(): boolean {
    return this.steps.size === 0 && this.finalJobs === 0;
  }

  /** Job `id` of `step` is counted and its rows were trained on. */
  trained(step: number, id: string): boolean {
    return this.steps.get(step)?.get(id)?.trained ?? false;
  }

  /** The results of `step`'s jobs were taken from the queue; count() counts them. */
  receive(step: number, entries: LedgerEntry[]): void {
    this.received.set(step, entries);
  }

  /** The ledger counts the rows of `step`: trained (or, `trained` false, carried by a checkpoint). */
  count(step: number, trained: boolean): void {
    let entries = this.steps.get(step);
    for (const entry of this.received.get(step) ?? []) {
      entries ??= new Map();
      entries.set(entry.id, { ...entry, trained });
      this.doomed.push(entry.id);
    }
    this.received.delete(step);
    if (!entries) return;
    this.steps.set(step, entries);
    // batches a checkpoint carried are trained on after the resume
    if (trained) for (const entry of entries.values()) entry.trained = true;
  }

  entries(): LedgerEntry[] {
    return [...this.steps.keys()].sort((a, b) => a - b).flatMap((step) => [...this.steps.get(step)!.values()].map((e) => ({ ...e })));
  }

  state(): LedgerState {
    return { jobs: this.entries(), finalJobs: this.finalJobs };
  }

  restore(state: LedgerState): void {
    this.steps.clear();
    this.finalJobs = state.finalJobs;
    for (const entry of state.jobs) {
      const entries = this.steps.get(entry.step) ?? new Map<string, LedgerEntry>();
      entries.set(entry.id, { ...entry });
      this.steps.set(entry.step, entries);
    }
  }

  /** A resumed run found these counted jobs still in Redis: they are the ones to delete next. */
  foundInRedis(ids: string[]): void {
    this.doomed = ids;
  }

  /**
   * What may go once a checkpoint holding the ledger is on disk: the ids counted since the last
   * call (to delete from Redis), and the steps whose jobs are all trained on (final, once deleted).
   */
  removable(): { ids: string[]; final: number[] } {
    const ids = this.doomed;
    this.doomed = [];
    const final = [...this.steps].filter(([, entries]) => [...entries.values()].every((e) => e.trained)).map(([step]) => step);
    return { ids, final };
  }

  /** The jobs of the `final` steps are deleted from Redis: only their number stays. */
  finalise(final: readonly number[]): void {
    for (const step of final) {
      this.finalJobs += this.steps.get(step)!.size;
      this.steps.delete(step);
    }
  }
}
