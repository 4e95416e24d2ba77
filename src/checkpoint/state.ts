/**
 * trainer_state.json: everything of a checkpoint that is not a tensor.
 *
 * Random streams need no state of their own here: every one of them is a fresh Rng derived from
 * the run's seed and labels (env seeds from the episode id, sampling from the episode id and turn,
 * mini-batch shuffles from the step and epoch). So `rng` records the seed and the episode counters
 * from which the next step's streams follow, and a resumed run draws exactly the numbers the
 * uninterrupted run would have.
 */
import { z } from 'zod';
import type { AgenticConfig } from '../config/schema';
import { HISTORY_ID } from '../remote/lineage';
import { learningRateSchedule } from '../train/schedule';
import type { LoopState } from '../train/types';

/** The learning-rate schedule of one trained role, as the step loop computes it. */
const Schedule = z.strictObject({
  type: z.enum(['constant', 'linear', 'cosine']),
  peak: z.number(),
  total_steps: z.int().min(1),
  warmup_steps: z.int().min(0),
});

const Optimizer = z.strictObject({
  /** AdamW's step count (its bias correction depends on it). */
  step: z.int().min(0),
  /** Variables, each with an `m` and a `v` tensor in optimizer.safetensors. */
  variables: z.int().min(0),
});

export const TrainerStateFile = z.strictObject({
  /** Steps done: the resumed run's first global_step. */
  global_step: z.int().min(0),
  max_steps: z.int().min(1),
  exp_name: z.string(),
  rng: z.strictObject({
    seed: z.int().min(0),
    /** The next episode id of each training group. */
    train_next_episode: z.array(z.int().min(0)),
  }),
  kl_coef: z.number(),
  /** Steps that trained (absent in checkpoints written before it was kept: every step did). */
  policy_version: z.int().min(0).optional(),
  skipped_updates: z.int().min(0),
  /** Failed steps in a row up to global_step (max_failed_steps_in_a_row; absent in checkpoints written before it was kept: 0). */
  failed_steps_in_a_row: z.int().min(0).optional(),
  /** Per role, the updates skipped in a row up to global_step (max_skipped_updates_in_a_row; absent in checkpoints written before it was kept: none). */
  skipped_updates_in_a_row: z.record(z.string(), z.int().min(0)).optional(),
  /** adv_estimator rae: each role's running baseline, by env tag and seat (absent: none yet). */
  role_baselines: z.record(z.string(), z.number()).optional(),
  lr_schedule: z.strictObject({ actor_train: Schedule, critic: Schedule.nullable() }),
  optimizers: z.strictObject({ actor_train: Optimizer, critic: Optimizer.nullable() }),
  /** The model folders saved: actor always; critic, reference and actor_infer when the run has them. */
  roles: z.array(z.enum(['actor', 'critic', 'reference', 'actor_infer'])),
  /** The checkpoint this run was resumed from, if any. */
  resumed_from: z.string().nullable(),
  /** Asynchronous runs: the file of rollouts played ahead, and how many batches it holds. */
  in_flight: z.strictObject({ file: z.literal('in_flight_rollouts.json'), batches: z.int().min(0) }).optional(),
  /** Distributed runs: the file of the job ledger, and how many jobs it counts. */
  ledger: z.strictObject({ file: z.literal('distributed_ledger.json'), jobs: z.int().min(0) }).optional(),
  /**
   * Runs whose weights leave the process (distributed workers, inference servers): one history
   * per start, oldest first, each with the step it started from (src/remote/lineage.ts).
   * Absent: an empty lineage, nothing earlier trusted.
   */
  history: z.array(z.strictObject({ id: z.string().regex(HISTORY_ID), from: z.int().min(0) })).optional(),
});

export type TrainerStateFile = z.output<typeof TrainerStateFile>;
export type SavedRole = TrainerStateFile['roles'][number];
export type ScheduleRecord = z.output<typeof Schedule>;

export const TRAINER_STATE_FILE = 'trainer_state.json';

/** The schedule `learningRateAt` follows for a role under `config`. */
export function scheduleOf(config: AgenticConfig, role: 'actor_train' | 'critic'): ScheduleRecord {
  const { type, peak, totalSteps, warmupSteps } = learningRateSchedule(config, role);
  return { type, peak, total_steps: totalSteps, warmup_steps: warmupSteps ?? 0 };
}

export function loopStateOf(file: TrainerStateFile): LoopState {
  return {
    step: file.global_step,
    policyVersion: file.policy_version ?? file.global_step,
    klCoef: file.kl_coef,
    skippedUpdates: file.skipped_updates,
    failedStepsInARow: file.failed_steps_in_a_row ?? 0,
    skippedUpdatesInARow: { ...file.skipped_updates_in_a_row },
    roleBaselines: { ...file.role_baselines },
    trainEpisodes: [...file.rng.train_next_episode],
  };
}
