/**
 * Rollouts in this thread (async_generation_ratio 0), in ROLL's order for each step: the model
 * update (actor_infer takes actor_train's weights every model_update_frequency steps), the
 * validation when due, then the rollout, and for remax a greedy rollout of each group.
 */
import { needsOf } from '../../algo/estimators';
import type { AgenticConfig } from '../../config/schema';
import type { ChatFormat } from '../../rollout/chat';
import type { EnvManager } from '../../rollout/env_manager';
import type { RolloutBatch } from '../../rollout/types';
import { copyWeights, type Roles } from '../roles';
import type { StepLog } from '../step_log';
import { logValidation, type PlayedStep, type RolloutSource, type SourceState } from './source';

export class LocalRollouts implements RolloutSource {
  readonly playsAhead = false;

  constructor(
    private readonly config: AgenticConfig,
    private readonly roles: Roles,
    private readonly chat: ChatFormat,
    private readonly train: EnvManager,
    private readonly val: EnvManager | null,
  ) {}

  async begin(): Promise<void> {}

  async next(step: number, log: StepLog): Promise<PlayedStep> {
    const c = this.config;
    const { roles } = this;
    const frequency = c.actor_infer.model_update_frequency;
    if (roles.infer !== roles.actor && step % frequency === 0) {
      await log.timed('model_update', () => copyWeights(roles.actor, roles.infer));
    }
    if (this.val && step % c.eval_steps === 0) logValidation(log, await this.validate());
    const batch = await this.train.play(c.rollout_batch_size, roles.infer, this.chat, step - (step % frequency));
    const baselines = needsOf(c.adv_estimator).greedyBaseline
      ? await log.timed('gen_max', () => this.train.greedyBaselines(batch.episodes, roles.infer, this.chat))
      : null;
    return { batch, baselines, refLogProbs: null };
  }

  async afterUpdate(): Promise<void> {}

  finalValidation(): Promise<RolloutBatch> | null {
    return this.val ? this.validate() : null;
  }

  async state(): Promise<SourceState> {
    return { trainEpisodes: [...this.train.episodeCounters] };
  }

  restore(state: SourceState): void {
    this.train.restoreEpisodeCounters(state.trainEpisodes);
  }

  async close(): Promise<void> {
    await this.train.close();
    await this.val?.close();
  }

  private validate(): Promise<RolloutBatch> {
    return this.val!.play(this.config.val_batch_size, this.roles.infer, this.chat);
  }
}
