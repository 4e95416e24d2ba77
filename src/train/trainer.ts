/**
 * The training loop. One step, in ROLL's order, as a pipeline of stages over one batch
 * (./batch.ts):
 *
 *   1-3. next batch     the rollout source (./rollout_source.ts) does the model update (actor_infer
 *                       takes actor_train's weights every model_update_frequency steps), the
 *                       validation every eval_steps steps, and the rollout of rollout_batch_size
 *                       trajectories; in this thread, played ahead by a rollout thread, or by
 *                       `agentic worker` processes through Redis. The failed episodes are
 *                       counted by kind, with the first reason of each (../rollout/failures.ts).
 *                       The groups holding an episode the inference servers failed leave it
 *                       (./failed_groups.ts); too many such failures stop the run, and a step
 *                       with nothing left trains nothing. Failed steps in a row (too many failed
 *                       episodes, or nothing left) stop the run before it trains on the last.
 *                       rollout_filter_ratio keeps the groups whose scores spread most
 *                       (./variance_filter.ts)
 *   4-6. score          the reference's log-probs, actor_train's old log-probs, the critic's values
 *   7-8. credit         response rewards, token rewards and the KL penalty, advantages
 *   9-10. learn         the critic's update, then the actor's, then the reading's rehearsal
 *   11. report          metrics, after the source has sent the new weights out
 *
 * Everything here is deterministic given the config: rollout seeds and sampling streams come from
 * the rollout, mini-batch shuffles from (seed, step, role, epoch). What carries over from one step
 * to the next is the weights, the optimizer moments and `LoopState`, which is all a checkpoint
 * needs to continue a run exactly. The learning-rate schedule, the KL coefficient and the policy
 * version move with the steps that trained only.
 */
import { summaryStats } from '../algo/stats';
import { klController, type KlController } from '../algo/kl';
import { RoleBaselines } from '../algo/role_baselines';
import type { AgenticConfig } from '../config/schema';
import { tf } from '../engine/tf';
import { InferenceError, oneLine, TrainingError } from '../errors';
import type { PluginHost } from '../host/plugin_host';
import { ChatFormat } from '../rollout/chat';
import { episodeFailures, type EpisodeFailures } from '../rollout/failures';
import type { Episode } from '../rollout/types';
import { fromRollout, rowCount } from './batch';
import { dropFailedGroups, type KeptGroups } from './failed_groups';
import { filterByScoreStd } from './variance_filter';
import { buildRoles, roleNeeds, type Roles } from './roles';
import { logValidation, type OpenRollouts, type RolloutSource } from './rollout_source';
import type { StepContext } from './stages/context';
import { credit, lossColumns } from './stages/credit';
import { learn } from './stages/learn';
import { score } from './stages/score';
import { StepLog } from './step_log';
import { stepDataMetrics } from './step_metrics';
import { type LoopState, type StepReport, stepName } from './types';
import type { UpdateResult } from './update';

export interface TrainerHooks {
  /** Start-up lines (what was loaded, what is off). */
  info?: (line: string) => void;
  warn?: (line: string) => void;
  /** Called after every step, with its metrics. */
  onStep?: (report: StepReport) => void | Promise<void>;
  /** Test seam: makes the loss of one optimizer step NaN (`update` counts from 0 within the step). */
  poison?: StepContext['poison'];
}

export interface TrainSummary {
  steps: number;
  reports: StepReport[];
  /** Optimizer steps skipped because their loss or gradients were not finite. */
  skippedUpdates: number;
}

export class Trainer {
  readonly chat: ChatFormat;
  /** The text of one token id, memoised (think_credit reads responses token by token). */
  private readonly pieceOf: (id: number) => string;
  private kl: KlController;
  private roleBaselines: RoleBaselines;
  private skipped = 0;
  /** Per role, the optimizer updates skipped in a row up to now (max_skipped_updates_in_a_row). */
  private readonly skippedInARow = new Map<string, number>();
  /** Failed steps in a row up to now (max_failed_steps_in_a_row). */
  private failedInARow = 0;
  private stepsDone = 0;
  /** actor_train's policy version: the steps that trained (LoopState.policyVersion). */
  private version = 0;

  private constructor(
    readonly config: AgenticConfig,
    readonly roles: Roles,
    chat: ChatFormat,
    private readonly rollouts: RolloutSource,
    private readonly hooks: TrainerHooks,
    private readonly host: PluginHost,
  ) {
    this.chat = chat;
    const pieces = new Map<number, string>();
    this.pieceOf = (id) => {
      let piece = pieces.get(id);
      if (piece === undefined) pieces.set(id, (piece = roles.tokenizer.decode([id], { skipSpecialTokens: false })));
      return piece;
    };
    this.kl = klController({ initKlCoef: config.init_kl_coef, targetKl: config.target_kl, klHorizon: config.kl_horizon });
    this.roleBaselines = new RoleBaselines(config.rae_alpha);
  }

  /** `openRollouts` opens the rollout source (the run passes src/rollout_sources/open.ts's). */
  static async create(config: AgenticConfig, host: PluginHost, openRollouts: OpenRollouts, hooks: TrainerHooks = {}): Promise<Trainer> {
    const roles = await buildRoles(config, roleNeeds(config));
    try {
      const chat = new ChatFormat(roles.tokenizer);
      return new Trainer(config, roles, chat, await openRollouts(config, host, roles, chat, hooks.warn), hooks, host);
    } catch (error) {
      roles.dispose();
      throw error;
    }
  }

  /** Runs steps `from`..max_steps-1, then a last validation. */
  async run(from = 0): Promise<TrainSummary> {
    const reports: StepReport[] = [];
    await this.rollouts.begin(from);
    for (let step = from; step < this.config.max_steps; step++) {
      const report = await this.step(step);
      reports.push(report);
      await this.hooks.onStep?.(report);
    }
    const val = this.rollouts.finalValidation(this.config.max_steps, this.version);
    if (val) {
      const log = new StepLog();
      logValidation(log, await val);
      const report = this.report(this.config.max_steps, log, { 'time/step_total': log.seconds });
      reports.push(report);
      await this.hooks.onStep?.(report);
    }
    return { steps: this.config.max_steps - from, reports, skippedUpdates: this.skipped };
  }

  /** One training step (see the header). */
  async step(step: number): Promise<StepReport> {
    const ctx = this.context(step, new StepLog());
    const rollout = await this.rollouts.next(step, ctx.log, this.version);
    ctx.log.add(rollout.batch.metrics);
    const failures = episodeFailures(rollout.batch.episodes);
    ctx.log.addFailures(failures);
    const kept = dropFailedGroups(rollout);
    ctx.log.add(kept.metrics);
    this.checkInferFailures(step, kept);
    const filtered = filterByScoreStd(kept.played, this.config.rollout_filter_ratio, this.config.rollout_filter_type);
    ctx.log.add(filtered.metrics);
    const played = filtered.played;
    const nothingLeft = !played.batch.samples.some((s) => s.responseMask.includes(1));
    this.checkFailedSteps(step, failures, nothingLeft, rollout.batch.episodes);
    if (nothingLeft) return this.idle(step, ctx.log);
    if (played.baselines) ctx.log.add(summaryStats('critic/remax_baseline', [...played.baselines.values()]));
    const batch = fromRollout(played.batch, this.config, this.chat, { baselines: played.baselines, sourceRefLogProbs: played.refLogProbs });
    const scored = await score(batch, ctx);
    const trained = lossColumns(await credit(scored, ctx), ctx);
    await learn(trained, ctx);
    this.version += 1;
    await this.rollouts.afterUpdate(step, ctx.log);
    this.stepsDone = step + 1;
    const seconds = ctx.log.seconds;
    const tokens = trained.ids.reduce((n, row) => n + row.length, 0);
    return this.report(step, ctx.log, {
      ...stepDataMetrics(trained, trained.recomputedLogProbs),
      'time/step_total': seconds,
      'system/tps': tokens / seconds,
      'system/samples': rowCount(trained),
      'system/skipped_updates': this.skipped,
      'system/tensors': tf.memory().numTensors,
    });
  }

  /**
   * A step with no sampled token left to learn from: no update, so the weights, the optimizer, the
   * learning-rate schedule, the KL coefficient and the policy version stay as they were, and the
   * inference servers keep the weights they have; the rollout's metrics are still reported.
   */
  private async idle(step: number, log: StepLog): Promise<StepReport> {
    this.hooks.warn?.(
      `${stepName(step)}: no episode left to learn from; the update is skipped (weights, learning rate, KL coefficient and policy version unchanged)`,
    );
    await this.rollouts.afterUpdate(step, log);
    this.stepsDone = step + 1;
    return this.report(step, log, {
      'time/step_total': log.seconds,
      'system/samples': 0,
      'system/skipped_updates': this.skipped,
      'system/tensors': tf.memory().numTensors,
    });
  }

  /** Over max_infer_failure_rate the servers, not the policy, shape the step: the run stops. */
  private checkInferFailures(step: number, kept: KeptGroups): void {
    const bound = this.config.max_infer_failure_rate;
    const rate = kept.episodes === 0 ? 0 : kept.failed / kept.episodes;
    if (rate <= bound) return;
    throw new InferenceError(
      `${stepName(step)}: ${kept.failed} of ${kept.episodes} episodes (${(rate * 100).toFixed(0)}%) got no response from the inference servers (infer_failure), above max_infer_failure_rate=${bound}; check the servers of train_env_manager.llm_proxy (the first failure: ${oneLine(kept.firstFailure ?? '')})`,
    );
  }

  /**
   * A step fails when more than max_failed_step_fraction of its episodes failed, or when none is
   * left to learn from and some failed. max_failed_steps_in_a_row failed steps in a row mean the
   * run learns from nothing: it stops before the last of them trains, naming the most common
   * failure. A step left empty by the group filters alone (dynamic sampling at its cap, every group
   * scoring alike: a policy that solves every map) is not a failure: nothing went wrong.
   */
  private checkFailedSteps(step: number, failures: EpisodeFailures, nothingLeft: boolean, episodes: readonly Episode[]): void {
    const bound = this.config.max_failed_step_fraction;
    const failedShare = failures.episodes === 0 ? 0 : failures.failed / failures.episodes;
    const emptiedByFailures = nothingLeft && (failures.failed > 0 || episodes.some((e) => e.untrained !== undefined));
    this.failedInARow = emptiedByFailures || failedShare > bound ? this.failedInARow + 1 : 0;
    const limit = this.config.max_failed_steps_in_a_row;
    if (limit === 0 || this.failedInARow < limit) return;
    const common = failures.kinds[0];
    // without a failed episode, nothing was left because every group held an untrained episode
    const why = common
      ? `${failures.failed} of ${failures.episodes} episodes failed, most often ${common.kind} (${common.count}): ${common.first}`
      : `no episode was left to learn from (${episodes.find((e) => e.untrained !== undefined)?.untrained})`;
    throw new TrainingError(
      `${stepName(step)}: the run learns from nothing, ${this.failedInARow} failed steps in a row (max_failed_steps_in_a_row=${limit}; a step fails when more than max_failed_step_fraction=${bound} of its episodes fail, or when none is left to learn from because episodes failed or went untrained); in this one ${why}`,
    );
  }

  /** What a checkpoint saves besides weights and moments (waits for the rollouts it must carry). */
  async loopState(): Promise<LoopState> {
    return {
      step: this.stepsDone,
      policyVersion: this.version,
      klCoef: this.kl.value,
      skippedUpdates: this.skipped,
      failedStepsInARow: this.failedInARow,
      skippedUpdatesInARow: Object.fromEntries(this.skippedInARow),
      roleBaselines: { ...this.roleBaselines.values },
      ...(await this.rollouts.state()),
    };
  }

  /** A checkpoint of loopState() is on disk (the rollout source may now let go of what it counted). */
  checkpointed(): Promise<void> {
    return this.rollouts.checkpointed();
  }

  /** Continues from a saved state: the next step is `state.step`. */
  restoreLoopState(state: LoopState): void {
    const c = this.config;
    this.rollouts.restore(state);
    // only an adaptive coefficient is state; a fixed one is the config's, overrides included
    const klCoef = c.target_kl === null ? c.init_kl_coef : state.klCoef;
    this.kl = klController({ initKlCoef: klCoef, targetKl: c.target_kl, klHorizon: c.kl_horizon });
    this.skipped = state.skippedUpdates;
    this.failedInARow = state.failedStepsInARow;
    this.skippedInARow.clear();
    for (const [role, inARow] of Object.entries(state.skippedUpdatesInARow)) this.skippedInARow.set(role, inARow);
    this.roleBaselines = new RoleBaselines(c.rae_alpha, state.roleBaselines);
    this.stepsDone = state.step;
    this.version = state.policyVersion;
  }

  async close(): Promise<void> {
    await this.rollouts.close();
    this.roles.dispose();
  }

  private context(step: number, log: StepLog): StepContext {
    return {
      step,
      version: this.version,
      config: this.config,
      roles: this.roles,
      chat: this.chat,
      host: this.host,
      log,
      pieceOf: this.pieceOf,
      kl: this.kl,
      roleBaselines: this.roleBaselines,
      sampledElsewhere: this.rollouts.sampledElsewhere,
      noteSkipped: (role, result) => this.noteSkipped(role, step, result),
      poison: this.hooks.poison,
    };
  }

  private report(step: number, log: StepLog, last: Record<string, number>): StepReport {
    log.add(last);
    return {
      step,
      metrics: log.metrics,
      ...(log.failures ? { failures: log.failures } : {}),
      ...(log.valEpisodes ? { valEpisodes: log.valEpisodes } : {}),
    };
  }

  /** Counts a role's skipped updates; too many in a row means it diverged, and the run stops. */
  private noteSkipped(role: string, step: number, result: Pick<UpdateResult, 'optimizerSteps' | 'skipped' | 'skippedAtEnd'>): void {
    const inARow = result.optimizerSteps > 0 ? result.skippedAtEnd : (this.skippedInARow.get(role) ?? 0) + result.skipped;
    this.skippedInARow.set(role, inARow);
    const skipped = result.skipped;
    if (skipped === 0) return;
    this.skipped += skipped;
    this.hooks.warn?.(
      `${stepName(step)}: skipped ${skipped} ${role} update${skipped > 1 ? 's' : ''} whose loss or gradients were not finite (weights unchanged; ${this.skipped} so far)`,
    );
    const limit = this.config.max_skipped_updates_in_a_row;
    if (limit > 0 && inARow >= limit) {
      throw new TrainingError(
        `${stepName(step)}: the last ${inARow} ${role} updates in a row were skipped (loss or gradients not finite): the policy has diverged; resume from an earlier checkpoint with a lower learning rate or max_grad_norm (max_skipped_updates_in_a_row=${limit} stopped it)`,
      );
    }
  }
}
