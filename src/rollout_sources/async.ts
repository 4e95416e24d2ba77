/**
 * Asynchronous training's schedule (async_generation_ratio = k >= 1): the rollout thread plays
 * the batches of the next k steps while the trainer's thread trains on the current one.
 * Distributed runs (./distributed/) follow the same schedule with k >= 0, their player being
 * `agentic worker` processes instead of the rollout thread.
 *
 * Policy versions count training steps: version v is actor_train's weights after v steps. actor_infer
 * receives them every model_update_frequency (f) steps, as in synchronous training. The batch of
 * step s is played by the version actor_infer held at step s - k:
 *
 *     playingVersion(s) = f * floor(max(0, s - k) / f)
 *
 * so a sample is at most k + f - 1 versions older than the weights that train on it (f - 1 of
 * them are the lag synchronous training already has). Which weights play which batch is fixed by
 * the config, not by timing, so an asynchronous run is as deterministic as a synchronous one and
 * k = 0 would be exactly it. Samples staler than the bound are dropped, never trained on; the
 * schedule never makes such samples in a run, but batches carried across a resume with a smaller
 * k or f can be, and those are dropped and played again.
 *
 * A checkpoint after step s stores the batches already requested with weights older than the
 * newest sent (the k batches the checkpoint's own weights cannot play again) and the episode
 * counters around them; the batches of the newest weights are played again on resume, which
 * gives exactly the numbers the uninterrupted run had.
 */
import type { AgenticConfig } from '../config/schema';
import { AgenticError } from '../errors';
import type { Qwen2Model } from '../model/qwen2';
import type { EnvManager } from '../rollout/env_manager';
import type { RolloutBatch } from '../rollout/types';
import { copyWeights } from '../model/copy_weights';
import type { Roles } from '../train/roles';
import type { StepLog } from '../train/step_log';
import { validatesBefore } from '../train/schedule';
import {
  type InFlight,
  logValidation,
  type PlayedStep,
  type RemoteRollout,
  type RolloutSource,
  type SourceState,
  type StepRollout,
} from '../train/rollout_source';

/** The version that plays the batch of `step` (header). */
export function playingVersion(step: number, ratio: number, frequency: number): number {
  const lagged = Math.max(0, step - ratio);
  return lagged - (lagged % frequency);
}

/** The most versions a sample may lag the weights that train on it. */
export function stalenessBound(ratio: number, frequency: number): number {
  return ratio + frequency - 1;
}

/**
 * The carried batches a resumed run may still train on: the longest prefix whose staleness is
 * within the bound (the rest are dropped, so episode ids stay in order), and the counters after it.
 */
export function keepFresh(inFlight: InFlight, bound: number): { kept: StepRollout[]; dropped: number; counters: number[] } {
  const kept: StepRollout[] = [];
  let counters = inFlight.countersBefore;
  for (const batch of inFlight.batches) {
    if (batch.step - batch.version > bound) break;
    kept.push(batch);
    counters = batch.countersAfter;
  }
  const dropped = inFlight.batches.slice(kept.length).reduce((n, b) => n + b.batch.samples.length, 0);
  return { kept, dropped, counters };
}

/**
 * Who plays the batches: the rollout thread (./thread/trainer_side.ts), or `agentic worker` processes
 * through Redis (./distributed/player.ts). Each serves what it is asked with the weights pushed before the ask.
 */
export interface RolloutPlayer {
  /** The version of the weights pushed last; -1 before the first. */
  readonly version: number;
  /** Sends `model`'s weights as policy `version`: read before this returns, so the caller may train on. */
  pushWeights(version: number, model: Qwen2Model): Promise<void>;
  /** The training batch of `step`: `batchSize` trajectories with the weights pushed before it. */
  rollout(batchSize: number, step: number): Promise<RemoteRollout>;
  /** The validation of `step` with the weights pushed before it. */
  validate(step: number): Promise<RolloutBatch>;
  /** Sets the train manager's episode counters (a resumed run). */
  restoreCounters(counters: readonly number[]): Promise<void>;
  close(): Promise<void>;
}

interface Requested {
  step: number;
  version: number;
  result: Promise<RemoteRollout>;
}

/** Handled now, awaited later: a rejection waits for its reader instead of killing the process. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** The rollout source of asynchronous training (src/train/rollout_source.ts): the rollout thread (or distributed workers) plays ahead. */
export class AsyncRollouts<P extends RolloutPlayer = RolloutPlayer> implements RolloutSource {
  readonly sampledElsewhere = true;
  private requested: Requested[] = [];
  private readonly validations = new Map<number, Promise<RolloutBatch>>();
  private nextStep = 0;
  /** Counters after the last batch taken (or restored), for checkpoints. */
  private counters: number[] = [];
  /** Samples dropped as stale and not yet reported. */
  private unreportedDrops = 0;
  /** A resumed run's carried rollouts, until begin() starts the pipeline. */
  private carried: InFlight | null = null;

  /** `train`: this thread's train env manager, which keeps the episode counters. */
  constructor(
    private readonly config: AgenticConfig,
    readonly player: P,
    private readonly roles: Roles,
    private readonly train: EnvManager,
  ) {}

  private get ratio(): number {
    return this.config.async_generation_ratio;
  }

  private get bound(): number {
    return stalenessBound(this.ratio, this.config.actor_infer.model_update_frequency);
  }

  /**
   * Starts the pipeline at step `from`: actor_infer holds the weights it has at that step
   * (actor_train's, or the lagging copy), the train manager the episode counters, and `carried`
   * what a checkpoint kept.
   */
  async begin(from: number): Promise<void> {
    const infer = this.roles.infer;
    const counters = this.train.episodeCounters;
    const carried = this.carried;
    this.carried = null;
    const fresh = carried ? keepFresh(carried, this.bound) : { kept: [], dropped: 0, counters: [...counters] };
    this.unreportedDrops = fresh.dropped;
    this.counters = carried ? [...carried.countersBefore] : [...counters];
    await this.player.restoreCounters(fresh.counters);
    this.requested = fresh.kept.map((b) => ({ step: b.step, version: b.version, result: Promise.resolve(b) }));
    this.nextStep = from + fresh.kept.length;
    const f = this.config.actor_infer.model_update_frequency;
    await this.player.pushWeights(from - (from % f), infer);
    this.requestValidation(from);
    this.requestDue();
  }

  async next(step: number, log: StepLog): Promise<PlayedStep> {
    const taken = await log.timed('rollout_wait', () => this.take(step));
    const { batch, version, baselines, refLogProbs } = taken.rollout;
    const staleness = batch.samples.map((s) => step - s.policyVersion);
    log.add({
      'async/staleness_mean': staleness.reduce((a, b) => a + b, 0) / Math.max(1, staleness.length),
      'async/staleness_max': Math.max(0, ...staleness),
      'async/dropped_samples': taken.dropped,
      'async/policy_version': version,
    });
    return { batch, baselines: baselines ? new Map(baselines) : null, refLogProbs };
  }

  /** After step's updates: the weights go to the player (which plays on meanwhile), then this step's validation. */
  async afterUpdate(step: number, log: StepLog): Promise<void> {
    const { roles } = this;
    if (roles.infer !== roles.actor && (step + 1) % this.config.actor_infer.model_update_frequency === 0) copyWeights(roles.actor, roles.infer);
    await log.timed('model_update', () => this.afterStep(step + 1, roles.infer));
    const val = this.validation(step);
    if (val) logValidation(log, await log.timed('val_wait', () => val));
  }

  finalValidation(step: number): Promise<RolloutBatch> | null {
    return this.validation(step);
  }

  async state(): Promise<SourceState> {
    const { state: inFlight, countersAfter } = await this.inFlight();
    return { trainEpisodes: countersAfter, inFlight };
  }

  restore(state: SourceState): void {
    this.train.restoreEpisodeCounters(state.trainEpisodes);
    this.carried = state.inFlight ?? null;
  }

  async checkpointed(): Promise<void> {}

  /** The batch of `step`, waiting for the player if it is not ready. */
  private async take(step: number): Promise<{ rollout: RemoteRollout; dropped: number }> {
    const next = this.requested.shift();
    if (!next || next.step !== step) throw new AgenticError(`async rollouts: step ${step} asked for, ${next ? `step ${next.step}` : 'nothing'} queued`);
    const rollout = await next.result;
    this.counters = rollout.countersAfter;
    // the schedule keeps every batch within the bound; this is the guarantee, not a hope
    if (step - rollout.version > this.bound) {
      throw new AgenticError(`async rollouts: the batch of step ${step} was played by version ${rollout.version}, beyond the staleness bound ${this.bound}`);
    }
    const dropped = this.unreportedDrops;
    this.unreportedDrops = 0;
    return { rollout, dropped };
  }

  /** The validation of `step`, if one was requested. */
  private validation(step: number): Promise<RolloutBatch> | null {
    const val = this.validations.get(step) ?? null;
    this.validations.delete(step);
    return val;
  }

  /**
   * After the step that makes `done` steps: send the weights when actor_infer's update is due
   * (`infer` holds them: actor_train's, or the lagging copy just refreshed), then ask for the
   * validation and the batches they make due.
   */
  private async afterStep(done: number, infer: Qwen2Model): Promise<void> {
    if (done % this.config.actor_infer.model_update_frequency === 0) await this.player.pushWeights(done, infer);
    this.requestValidation(done);
    this.requestDue();
  }

  /** For a checkpoint after the steps taken so far: the batches its weights cannot play again. */
  private async inFlight(): Promise<{ state: InFlight; countersAfter: number[] }> {
    const older = this.requested.filter((r) => r.version < this.player.version);
    const batches: StepRollout[] = [];
    for (const r of older) batches.push({ ...(await r.result), step: r.step });
    const countersAfter = batches.at(-1)?.countersAfter ?? this.counters;
    return { state: { countersBefore: [...this.counters], batches }, countersAfter: [...countersAfter] };
  }

  async close(): Promise<void> {
    await this.player.close();
    await this.train.close();
  }

  private requestValidation(step: number): void {
    const c = this.config;
    const due = step === c.max_steps || validatesBefore(c, step);
    if (due && c.eval_steps > 0 && c.val_env_manager.tags.length > 0) this.validations.set(step, quiet(this.player.validate(step)));
  }

  private requestDue(): void {
    const c = this.config;
    const f = c.actor_infer.model_update_frequency;
    const held = this.player.version;
    while (this.nextStep < c.max_steps && playingVersion(this.nextStep, this.ratio, f) <= held) {
      this.requested.push({ step: this.nextStep, version: held, result: quiet(this.player.rollout(c.rollout_batch_size, this.nextStep)) });
      this.nextStep++;
    }
  }
}
