/**
 * The training loop. One step, in ROLL's order:
 *
 *   1. model update      actor_infer takes actor_train's weights (every model_update_frequency steps)
 *   2. validation        every eval_steps steps, with the val env manager
 *   3. rollout           rollout_batch_size trajectories from the train env manager
 *   4. reference         the reference's log-probs of the sampled tokens (when a KL term needs them;
 *                        with skip_zero_advantage_samples, after step 8 and of the kept samples only)
 *   5. old log-probs     recomputed by actor_train, so the PPO ratio compares real policies
 *   6. values            the critic's (gae)
 *   7. rewards           normalised response rewards, then token rewards and the KL penalty
 *   8. advantages        the estimator, then whitening and clipping
 *   9. critic update     (gae)
 *  10. actor update      once global_step >= critic_warmup (skip_zero_advantage_samples: on the
 *                        samples with an advantage), then the reading's rehearsal
 *                        (warm_start.rehearsal_coef: one supervised step on fresh reading rows)
 *  11. metrics           and the step hook (trackers, checkpoints)
 *
 * With async_generation_ratio k >= 1, steps 1-3 move to a worker thread (./async.ts): the batch
 * of step s was played k steps earlier while actor_train trained, the model update sends the
 * weights there after each step's updates, and the validation of a step runs there while the next
 * one trains. The old log-probs are then always recomputed (the sampler's belong to an older policy).
 *
 * Everything here is deterministic given the config: rollout seeds and sampling streams come from
 * the rollout, mini-batch shuffles from (seed, step, role, epoch). What carries over from one step
 * to the next is the weights, the optimizer moments and `LoopState`, which is all a checkpoint
 * needs to continue a run exactly.
 */
import { ADVANTAGE_ESTIMATORS, finishAdvantages, zeroAdvantageFraction, zeroAdvantageRows } from '../algo/advantage';
import { klController, type KlController } from '../algo/kl';
import { PG_VARIANTS } from '../algo/loss';
import { meanRowKl, responseRewards, tokenKl, tokenRewards } from '../algo/rewards';
import { summaryStats } from '../algo/stats';
import { importanceWeights } from '../algo/off_policy';
import { answerTokenMask, dropThinkCredit, outsideAnswerTokenMask, thinkTokenMask } from '../algo/think';
import { normalizationStatistics, type AgenticConfig } from '../config/schema';
import { TrainingError } from '../errors';
import { tf } from '../engine/tf';
import { learningRateAt } from '../model/optim';
import type { PluginHost } from '../plugins/host';
import { ChatFormat } from '../rollout/chat';
import { EnvManager } from '../rollout/env_manager';
import { RolloutWorker } from '../rollout/remote';
import type { Episode, RolloutBatch, Sample } from '../rollout/types';
import { AsyncRollouts, type InFlight } from './async';
import { buildRoles, copyWeights, roleNeeds, type Roles } from './roles';
import { learningRateSchedule } from './schedule';
import { rolloutTemperatures, tokenLogProbs, tokenValues } from './scoring';
import { selectRows, updateActor, updateCritic, updateSupervised, type UpdateResult, type UpdateRows, type UpdateSchedule } from './update';
import { rehearsalRows } from './warm_start';
import { stepDataMetrics } from './step_metrics';

export interface StepReport {
  /** ROLL's global_step: 0 for the first step; max_steps for the validation after the last. */
  step: number;
  metrics: Record<string, number>;
  /** On validation steps: the first few validation episodes, for trackers that show transcripts. */
  valEpisodes?: Episode[];
}

/** How many validation episodes a report carries. */
const REPORTED_VAL_EPISODES = 3;

/** What the loop itself carries from step to step, besides the roles' weights and moments. */
export interface LoopState {
  /** Steps done: the global_step the next step has. */
  step: number;
  /** The KL coefficient of the reward, which an adaptive controller moves. */
  klCoef: number;
  skippedUpdates: number;
  /** The next episode id of each training group (env seeds and sampling streams follow from it). */
  trainEpisodes: number[];
  /** Asynchronous runs: the rollouts played ahead with weights older than the step's. */
  inFlight?: InFlight | null;
}

export interface TrainerHooks {
  /** Start-up lines (what was loaded, what is off). */
  info?: (line: string) => void;
  warn?: (line: string) => void;
  /** Called after every step, with its metrics. */
  onStep?: (report: StepReport) => void | Promise<void>;
  /** Test seam: makes the loss of one optimizer step NaN (`update` counts from 0 within the step). */
  poison?: (step: number, role: 'actor' | 'critic', update: number) => boolean;
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
  private skipped = 0;
  /** Per role, the optimizer updates skipped in a row up to now (max_skipped_updates_in_a_row). */
  private readonly skippedInARow = new Map<string, number>();
  private stepsDone = 0;
  /** A resumed asynchronous run's carried rollouts, until run() starts the pipeline. */
  private carried: InFlight | null = null;

  private constructor(
    readonly config: AgenticConfig,
    readonly roles: Roles,
    private readonly trainManager: EnvManager,
    private readonly valManager: EnvManager | null,
    private readonly hooks: TrainerHooks,
    private readonly host: PluginHost,
    /** async_generation_ratio > 0: the rollout worker's pipeline (steps 1-3 happen there). */
    private readonly async: AsyncRollouts | null,
  ) {
    this.chat = new ChatFormat(roles.tokenizer);
    const pieces = new Map<number, string>();
    this.pieceOf = (id) => {
      let piece = pieces.get(id);
      if (piece === undefined) pieces.set(id, (piece = roles.tokenizer.decode([id], { skipSpecialTokens: false })));
      return piece;
    };
    this.kl = klController({ initKlCoef: config.init_kl_coef, targetKl: config.target_kl, klHorizon: config.kl_horizon });
  }

  static async create(config: AgenticConfig, host: PluginHost, hooks: TrainerHooks = {}): Promise<Trainer> {
    const roles = await buildRoles(config, roleNeeds(config));
    let train: EnvManager | null = null;
    let worker: RolloutWorker | null = null;
    try {
      train = await EnvManager.build('train', config, host);
      const val = config.eval_steps > 0 && config.val_env_manager.tags.length > 0 ? await EnvManager.build('val', config, host) : null;
      if (config.async_generation_ratio > 0) {
        worker = await RolloutWorker.start(config, { cwd: host.cwd, threads: 1 });
        const ahead = `${config.async_generation_ratio} step${config.async_generation_ratio > 1 ? 's' : ''}`;
        roles.sources.actor_infer = `a worker thread with its own engine, playing ${ahead} ahead of actor_train (old log-probs recomputed by actor_train)`;
      }
      return new Trainer(config, roles, train, val, hooks, host, worker ? new AsyncRollouts(config, worker) : null);
    } catch (error) {
      await worker?.close();
      await train?.close();
      roles.dispose();
      throw error;
    }
  }

  /** Runs steps `from`..max_steps-1, then a last validation. */
  async run(from = 0): Promise<TrainSummary> {
    const reports: StepReport[] = [];
    await this.async?.begin(from, this.roles.infer, this.trainManager.episodeCounters, this.carried);
    this.carried = null;
    for (let step = from; step < this.config.max_steps; step++) {
      const report = await this.step(step);
      reports.push(report);
      await this.hooks.onStep?.(report);
    }
    if (this.valManager) {
      const started = performance.now();
      const val = await (this.async?.validation(this.config.max_steps) ?? this.validate());
      const report: StepReport = {
        step: this.config.max_steps,
        metrics: { ...val.metrics, 'time/step_total': (performance.now() - started) / 1000 },
        valEpisodes: val.episodes.slice(0, REPORTED_VAL_EPISODES),
      };
      reports.push(report);
      await this.hooks.onStep?.(report);
    }
    return { steps: this.config.max_steps - from, reports, skippedUpdates: this.skipped };
  }

  /** What a checkpoint saves besides weights and moments (waits for the rollouts it must carry). */
  async loopState(): Promise<LoopState> {
    const state: LoopState = {
      step: this.stepsDone,
      klCoef: this.kl.value,
      skippedUpdates: this.skipped,
      trainEpisodes: [...this.trainManager.episodeCounters],
    };
    if (!this.async) return state;
    const { state: inFlight, countersAfter } = await this.async.inFlight();
    return { ...state, trainEpisodes: countersAfter, inFlight };
  }

  /** Continues from a saved state: the next step is `state.step`. */
  restoreLoopState(state: LoopState): void {
    const c = this.config;
    this.trainManager.restoreEpisodeCounters(state.trainEpisodes);
    this.carried = state.inFlight ?? null;
    // only an adaptive coefficient is state; a fixed one is the config's, overrides included
    const klCoef = c.target_kl === null ? c.init_kl_coef : state.klCoef;
    this.kl = klController({ initKlCoef: klCoef, targetKl: c.target_kl, klHorizon: c.kl_horizon });
    this.skipped = state.skippedUpdates;
    this.stepsDone = state.step;
  }

  async close(): Promise<void> {
    await this.async?.close();
    await this.trainManager.close();
    await this.valManager?.close();
    this.roles.dispose();
  }

  private validate(): Promise<RolloutBatch> {
    return this.valManager!.play(this.config.val_batch_size, this.roles.infer, this.chat);
  }

  /** One training step (see the header). */
  async step(step: number): Promise<StepReport> {
    const c = this.config;
    const { roles } = this;
    const metrics: Record<string, number> = {};
    const timed = async <T>(name: string, work: () => T | Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await work();
      metrics[`time/step_${name}`] = (performance.now() - started) / 1000;
      return result;
    };
    const stepStarted = performance.now();

    // 1-3. model update, validation, rollout: here, or played ahead by the rollout worker
    let valEpisodes: Episode[] | undefined;
    let rollout: RolloutBatch;
    let scores: Map<string, number> | null = null;
    // asynchronous runs: the worker scored the batch with the reference right after playing it
    let scoredRef: Float32Array[] | null = null;
    if (this.async) {
      const taken = await timed('rollout_wait', () => this.async!.take(step));
      rollout = taken.rollout.batch;
      scoredRef = taken.rollout.refLogProbs;
      if (taken.rollout.baselines) scores = new Map(taken.rollout.baselines);
      const staleness = rollout.samples.map((s) => step - s.policyVersion);
      Object.assign(metrics, {
        'async/staleness_mean': staleness.reduce((a, b) => a + b, 0) / Math.max(1, staleness.length),
        'async/staleness_max': Math.max(0, ...staleness),
        'async/dropped_samples': taken.dropped,
        'async/policy_version': taken.rollout.version,
      });
    } else {
      if (roles.infer !== roles.actor && step % c.actor_infer.model_update_frequency === 0) {
        await timed('model_update', () => copyWeights(roles.actor, roles.infer));
      }
      if (this.valManager && step % c.eval_steps === 0) {
        const val = await this.validate();
        Object.assign(metrics, val.metrics);
        valEpisodes = val.episodes.slice(0, REPORTED_VAL_EPISODES);
      }
      rollout = await this.trainManager.play(c.rollout_batch_size, roles.infer, this.chat, step - (step % c.actor_infer.model_update_frequency));
      const played = rollout;
      if (c.adv_estimator === 'remax') scores = await timed('gen_max', () => this.trainManager.greedyBaselines(played.episodes, roles.infer, this.chat));
    }
    Object.assign(metrics, rollout.metrics);
    const samples = rollout.samples;
    const baselines = scores ? samples.map((s) => scores.get(s.trajGroupId) ?? 0) : null;
    if (scores) Object.assign(metrics, summaryStats('critic/remax_baseline', [...scores.values()]));

    // 4-6. reference, old log-probs, values
    const ids = samples.map((s) => s.inputIds);
    const masks = samples.map((s) => s.responseMask);
    const temperature = rolloutTemperatures(c, this.chat, samples, masks);
    // skipping samples without advantage, the reference scores only those the actor learns from,
    // once the advantages are known, unless the reward's KL needs it on every sample first
    const refAfterCredit = roles.reference !== null && c.skip_zero_advantage_samples && !c.add_token_level_kl;
    const refLogProbs =
      roles.reference && !refAfterCredit ? (scoredRef ?? (await timed('ref', () => tokenLogProbs(roles.reference!, ids, temperature, masks)))) : null;
    // The sampler's log-probs are over the whole vocabulary at the training temperature, so without
    // a recompute they stand in as the behaviour policy's (docs/training.md)
    const recomputed =
      c.enable_old_logprobs_recompute || this.async ? await timed('old_logp', () => tokenLogProbs(roles.actor, ids, temperature, masks)) : null;
    const oldLogProbs = recomputed ?? samples.map((s) => s.logProbs);
    const values = roles.critic ? await timed('values', () => tokenValues(roles.critic!, ids, masks)) : null;

    // 7-8. rewards and advantages
    // where each row thinks, read once for the settings that need it
    const needsThink = !c.think_credit || c.kl_loss_tokens === 'think';
    const thinkMasks = needsThink ? samples.map((s, i) => thinkTokenMask(s.inputIds, masks[i]!, this.pieceOf)) : null;
    const credit = await timed('adv', () => this.credit(samples, masks, oldLogProbs, refLogProbs, values, baselines, thinkMasks));
    Object.assign(metrics, credit.metrics);
    // the gap between the policy that sampled and the one that trains, and its correction
    let isWeights: Float32Array[] | null = null;
    const correction = c.train_infer_correction.is_weight;
    if (recomputed && (correction.enabled || this.async)) {
      const weighed = importanceWeights(
        recomputed,
        samples.map((s) => s.logProbs),
        masks,
        { type: correction.weight_type, upperBound: correction.upper_bound },
      );
      Object.assign(metrics, weighed.metrics);
      if (correction.enabled) isWeights = weighed.weights;
    }
    const rows: UpdateRows = {
      ids,
      masks,
      oldLogProbs,
      refLogProbs,
      advantages: credit.advantages,
      returns: credit.returns,
      values,
      klScope: this.klScope(samples, masks, thinkMasks),
      entropyScope: c.entropy_loss_tokens === 'answer' ? samples.map((s, i) => answerTokenMask(s.inputIds, masks[i]!, this.pieceOf)) : null,
      isWeights,
      scores: PG_VARIANTS[c.actor_train.pg_variant].scores ? samples.map((s) => s.episodeScore) : null,
    };

    // 9-10. updates
    const lrStep = (role: 'actor_train' | 'critic') => learningRateAt(step, learningRateSchedule(c, role));
    const schedule = (role: 'actor_train' | 'critic'): UpdateSchedule => {
      const args = c[role].training_args;
      const poison = this.hooks.poison;
      return {
        epochs: c.ppo_epochs,
        miniBatchRows: args.per_device_train_batch_size * args.gradient_accumulation_steps,
        microBatchRows: args.per_device_train_batch_size,
        gradientAccumulationSteps: args.gradient_accumulation_steps,
        sequenceLength: c.sequence_length,
        learningRate: lrStep(role),
        maxGradNorm: args.max_grad_norm ?? c.max_grad_norm,
        shuffleSeed: [c.seed, 'shuffle', role, step],
        poison: poison ? (update) => poison(step, role === 'critic' ? 'critic' : 'actor', update) : undefined,
      };
    };
    if (roles.critic && roles.criticOptimizer) {
      const result = await timed('critic_train', () =>
        updateCritic(roles.critic!, roles.criticOptimizer!, rows, schedule('critic'), { valueClip: c.value_clip, aggMode: c.loss_agg_mode }),
      );
      Object.assign(metrics, result.metrics);
      this.noteSkipped('critic', step, result);
    }
    // the samples the actor learns from: all, or those with an advantage (skip_zero_advantage_samples)
    const informative = c.skip_zero_advantage_samples ? zeroAdvantageRows(credit.advantages, masks).flatMap((silent, i) => (silent ? [] : [i])) : null;
    let actorRows = informative ? selectRows(rows, informative) : rows;
    const actorTemperature = informative && typeof temperature !== 'number' ? informative.map((i) => temperature[i]!) : temperature;
    if (informative) metrics['actor/update_samples'] = informative.length;
    if (refAfterCredit && actorRows.ids.length > 0) {
      const ref =
        scoredRef && informative
          ? informative.map((i) => scoredRef[i]!)
          : await timed('ref', () => tokenLogProbs(roles.reference!, actorRows.ids, actorTemperature, actorRows.masks));
      actorRows = { ...actorRows, refLogProbs: ref };
      metrics['critic/kl'] = meanRowKl(tokenKl(actorRows.masks, actorRows.oldLogProbs, ref, c.kl_penalty), actorRows.masks);
    }
    if (step >= c.critic_warmup && actorRows.ids.length > 0) {
      const result = await timed('actor_train', () =>
        updateActor(roles.actor, roles.actorOptimizer, actorRows, schedule('actor_train'), {
          pgVariant: c.actor_train.pg_variant,
          policy: {
            clipLow: c.use_pg_clip_range ? c.pg_clip_low : c.pg_clip,
            clipHigh: c.use_pg_clip_range ? c.pg_clip_high : c.pg_clip,
            dualClip: c.dual_clip_loss ? 1 + 2 * c.pg_clip : null,
            aggMode: c.loss_agg_mode,
            topr: { positiveWeight: c.actor_train.topr_positive_weight, negativeWeight: c.actor_train.topr_negative_weight },
          },
          temperature: actorTemperature,
          klLoss: c.use_kl_loss && c.kl_loss_coef > 0 && roles.reference ? { coef: c.kl_loss_coef, type: c.kl_loss_type } : null,
          entropyCoef: c.entropy_loss_coef,
        }),
      );
      Object.assign(metrics, result.metrics);
      this.noteSkipped('actor', step, result);
    }
    if (step >= c.critic_warmup && c.warm_start.rehearsal_coef > 0) {
      const rehearsal = await timed('rehearsal', () => this.rehearse(step, lrStep('actor_train') * c.warm_start.rehearsal_coef));
      Object.assign(metrics, rehearsal.metrics);
      this.noteSkipped('rehearsal', step, rehearsal);
    }

    // asynchronous: the weights go to the worker (which plays on meanwhile), then this step's validation
    if (this.async) {
      const update = c.actor_infer.model_update_frequency;
      if (roles.infer !== roles.actor && (step + 1) % update === 0) copyWeights(roles.actor, roles.infer);
      await timed('model_update', () => this.async!.afterStep(step + 1, roles.infer));
      const val = this.async.validation(step);
      if (val) {
        const played = await timed('val_wait', () => val);
        Object.assign(metrics, played.metrics);
        valEpisodes = played.episodes.slice(0, REPORTED_VAL_EPISODES);
      }
    }

    // 11. metrics
    const seconds = (performance.now() - stepStarted) / 1000;
    const tokens = ids.reduce((n, row) => n + row.length, 0);
    Object.assign(metrics, stepDataMetrics(samples, recomputed), {
      'time/step_total': seconds,
      'system/tps': tokens / seconds,
      'system/samples': samples.length,
      'system/skipped_updates': this.skipped,
      'system/tensors': tf.memory().numTensors,
    });
    this.stepsDone = step + 1;
    return valEpisodes ? { step, metrics, valEpisodes } : { step, metrics };
  }

  /** One supervised step of actor_train on this step's reading rows; its loss is the reading's NLL before the step. */
  private async rehearse(step: number, learningRate: number) {
    const c = this.config;
    const rows = await rehearsalRows(c, this.host, this.chat, step);
    const args = c.actor_train.training_args;
    const result = await updateSupervised(this.roles.actor, this.roles.actorOptimizer, rows, {
      epochs: 1,
      miniBatchRows: rows.ids.length,
      microBatchRows: args.per_device_train_batch_size,
      gradientAccumulationSteps: 1,
      sequenceLength: c.sequence_length,
      learningRate,
      maxGradNorm: args.max_grad_norm ?? c.max_grad_norm,
      shuffleSeed: [c.seed, 'rehearsal', step],
    });
    return {
      ...result,
      metrics: {
        'rehearsal/loss': result.metrics['sft/loss']!,
        'rehearsal/grad_norm': result.metrics['sft/grad_norm']!,
        'rehearsal/rows': rows.ids.length,
        'rehearsal/lr': learningRate,
      },
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
      `step ${step}: skipped ${skipped} ${role} update${skipped > 1 ? 's' : ''} whose loss or gradients were not finite (weights unchanged; ${this.skipped} so far)`,
    );
    const limit = this.config.max_skipped_updates_in_a_row;
    if (limit > 0 && inARow >= limit) {
      throw new TrainingError(
        `step ${step}: the last ${inARow} ${role} updates in a row were skipped (loss or gradients not finite): the policy has diverged; resume from an earlier checkpoint with a lower learning rate or max_grad_norm (max_skipped_updates_in_a_row=${limit} stopped it)`,
      );
    }
  }

  /** The tokens the KL loss covers (kl_loss_tokens); null: every response token. */
  private klScope(samples: readonly Sample[], masks: readonly Uint8Array[], thinkMasks: readonly Uint8Array[] | null): readonly Uint8Array[] | null {
    switch (this.config.kl_loss_tokens) {
      case 'all':
        return null;
      case 'think':
        return thinkMasks;
      case 'outside_answer':
        return samples.map((s, i) => outsideAnswerTokenMask(s.inputIds, masks[i]!, this.pieceOf));
    }
  }

  /** Steps 7-8: response rewards, token rewards with KL, advantages. */
  private credit(
    samples: readonly Sample[],
    masks: readonly Uint8Array[],
    oldLogProbs: readonly Float32Array[],
    refLogProbs: readonly Float32Array[] | null,
    values: readonly Float32Array[] | null,
    baselines: readonly number[] | null,
    thinkMasks: readonly Uint8Array[] | null,
  ) {
    const c = this.config;
    const response = responseRewards(samples, {
      estimator: c.adv_estimator,
      grouping: c.reward_normalization.grouping,
      method: c.reward_normalization.method,
      statistics: normalizationStatistics(c.reward_normalization),
      stepRewardGamma: c.step_reward_gamma,
      episodeRewardWeight: c.episode_reward_weight,
      stepRewardWeight: c.step_reward_weight,
      rewardClip: c.reward_clip,
    });
    const beta = this.kl.value;
    const tokens = tokenRewards(response.rewards, masks, oldLogProbs, refLogProbs, {
      addTokenLevelKl: c.add_token_level_kl && refLogProbs !== null,
      klCoef: beta,
      klPenalty: c.kl_penalty,
      whitenRewards: c.whiten_rewards,
    });
    this.kl.update(tokens.meanKl, samples.length);
    const estimated = ADVANTAGE_ESTIMATORS[c.adv_estimator](
      { masks, tokenRewards: tokens.tokenRewards, values, groups: samples.map((s) => s.trajGroupId), baselines },
      { gamma: c.gamma, lambd: c.lambd },
    );
    const finished = finishAdvantages(estimated.advantages, masks, { whitenAdvantages: c.whiten_advantages, advantageClip: c.advantage_clip });
    const thinkTokens = c.think_credit ? null : dropThinkCredit(finished.advantages, thinkMasks!);
    const metrics: Record<string, number> = {
      ...response.metrics,
      ...maskedStats('critic/advantages', finished.advantages, masks),
      ...maskedStats('critic/returns', estimated.returns, masks),
      ...(values ? maskedStats('critic/values', values, masks) : {}),
      ...summaryStats(
        'critic/rewards',
        tokens.tokenRewards.map((r) => r.reduce((a, b) => a + b, 0)),
      ),
      'critic/kl': tokens.meanKl,
      'critic/kl_coef': c.add_token_level_kl && refLogProbs !== null ? beta : 0,
    };
    if (c.advantage_clip !== null) metrics['critic/advantage_clip_frac'] = finished.clippedFraction;
    if (thinkTokens !== null) {
      const responseTokens = masks.reduce((n, m) => n + m.reduce((a, b) => a + b, 0), 0);
      metrics['critic/think_token_frac'] = responseTokens ? thinkTokens / responseTokens : 0;
    }
    // after the thinking's credit is dropped: what is left for the policy gradient
    metrics['critic/zero_advantage_frac'] = zeroAdvantageFraction(finished.advantages, masks);
    return { advantages: finished.advantages, returns: estimated.returns, metrics };
  }
}

function maskedStats(prefix: string, rows: readonly Float32Array[], masks: readonly Uint8Array[]): Record<string, number> {
  return summaryStats(
    prefix,
    rows.flatMap((row, i) => Array.from(row).filter((_, t) => masks[i]![t])),
  );
}
