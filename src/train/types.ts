/**
 * What the loop shares with the layers above it (trackers, checkpoints, render, the CLI): a
 * step's report, how messages name a step, and the state that carries from one step to the next.
 * A leaf: it imports types only, from below and from the rollout seam's own (./rollout_source.ts).
 */
import type { EpisodeFailures } from '../rollout/failures';
import type { Episode } from '../rollout/types';
import type { HistoryEntry } from '../remote/lineage';
import type { InFlight, LedgerState } from './rollout_source';

/** How messages name a step: as its console line counts it (global step 0 is `step 1/N`). */
export function stepName(step: number): string {
  return `step ${step + 1}`;
}

export interface StepReport {
  /** ROLL's global_step: 0 for the first step; max_steps for the validation after the last. */
  step: number;
  metrics: Record<string, number>;
  /** The training episodes that failed, by kind with the first reason of each (absent when none failed). */
  failures?: EpisodeFailures;
  /** On validation steps: the first few validation episodes, for trackers that show transcripts. */
  valEpisodes?: Episode[];
}

/** What the loop itself carries from step to step, besides the roles' weights and moments. */
export interface LoopState {
  /** Steps done: the global_step the next step has. */
  step: number;
  /**
   * actor_train's policy version: the steps that trained. A step whose every group was dropped
   * (./failed_groups.ts) trains nothing, and the learning-rate schedule and the weights sent to
   * inference servers stay at this version; otherwise it equals `step`.
   */
  policyVersion: number;
  /** The KL coefficient of the reward, which an adaptive controller moves. */
  klCoef: number;
  skippedUpdates: number;
  /** Failed steps in a row up to now (max_failed_steps_in_a_row counts on from it). */
  failedStepsInARow: number;
  /** Per role, the optimizer updates skipped in a row up to now (max_skipped_updates_in_a_row counts on from it). */
  skippedUpdatesInARow: Record<string, number>;
  /** The next episode id of each training group (env seeds and sampling streams follow from it). */
  trainEpisodes: number[];
  /** adv_estimator rae: each role's running baseline (absent: none yet). */
  roleBaselines?: Record<string, number>;
  /** Asynchronous runs: the rollouts played ahead with weights older than the step's. */
  inFlight?: InFlight | null;
  /** Distributed runs: the jobs whose rows the checkpoint counts. */
  ledger?: LedgerState | null;
  /** Runs whose weights leave the process: the histories of the run, oldest first. */
  lineage?: HistoryEntry[] | null;
}
