/**
 * Rollouts in this thread (async_generation_ratio 0), in ROLL's order for each step: the model
 * update (actor_infer takes actor_train's weights every model_update_frequency steps), the
 * validation when due, then the rollout, and for remax a greedy rollout of each group.
 *
 * With inference servers (an llm_proxy of type sglang or openai) the env managers' policies ask
 * them, and the model update also brings the servers actor_infer's weights (src/remote/weight_sync.ts),
 * named by the history of this start (src/remote/lineage.ts), which the checkpoint's lineage records.
 * Their log-probs come from another engine, so the batch counts as sampled elsewhere: actor_train
 * recomputes the old log-probs and the gap between the two is reported.
 *
 * With seats played by past (opponent_pool), the pool takes the step's snapshot of actor_train
 * before the rollout (src/rollout/opponent_pool.ts), and its snapshots answer those seats.
 *
 * With filter_groups (DAPO's dynamic sampling, src/train/dynamic_sampling.ts) the rollout is
 * played again, with the same weights and new groups, until enough groups did not all score
 * alike; the greedy baselines are then played for the groups kept only. The extra rollouts advance
 * the episode counters, which the source's state saves, so a resumed run plays the same groups.
 */
import { needsOf } from '../algo/estimators';
import type { AgenticConfig } from '../config/schema';
import type { ChatFormat } from '../rollout/chat';
import type { EnvManager } from '../rollout/env_manager';
import { OpponentPool, usesOpponentPool } from '../rollout/opponent_pool';
import type { RolloutBatch } from '../rollout/types';
import { copyWeights } from '../model/copy_weights';
import type { Roles } from '../train/roles';
import type { StepLog } from '../train/step_log';
import { validatesBefore } from '../train/schedule';
import { genBatch, sampledBatch, samplingDone, type GenBatch } from '../train/dynamic_sampling';
import { Lineage } from '../remote/lineage';
import { logValidation, type PlayedStep, type RolloutSource, type SourceState } from '../train/rollout_source';
import type { WeightSync } from '../remote/weight_sync';

export class LocalRollouts implements RolloutSource {
  readonly sampledElsewhere: boolean;
  private readonly lineage = new Lineage();
  /** The past selves that play the training games' past seats (opponent_pool), when a training tag has some. */
  private readonly pool: OpponentPool | null;

  /** `sync`: the weight updates of the managers' inference servers, when either has some. */
  constructor(
    private readonly config: AgenticConfig,
    private readonly roles: Roles,
    private readonly chat: ChatFormat,
    private readonly train: EnvManager,
    private readonly val: EnvManager | null,
    private readonly sync: WeightSync | null = null,
  ) {
    this.sampledElsewhere = train.servers !== null;
    this.pool = usesOpponentPool(config) ? new OpponentPool(config, roles.tokenizer) : null;
    if (this.pool) train.useOpponentPool(this.pool);
  }

  async begin(from: number): Promise<void> {
    if (this.sync) this.lineage.start(from);
  }

  /** `trained`: actor_train's policy version, which actor_infer follows every model_update_frequency versions. */
  async next(step: number, log: StepLog, trained: number): Promise<PlayedStep> {
    const c = this.config;
    const { roles, sync } = this;
    const frequency = c.actor_infer.model_update_frequency;
    const version = trained - (trained % frequency);
    const copy = roles.infer !== roles.actor && trained % frequency === 0;
    if (sync) {
      await log.timed('model_update', async () => {
        if (copy) copyWeights(roles.actor, roles.infer);
        await sync.bring(this.lineage.current, version, roles.infer, roles.tokenizer);
      });
    } else if (copy) {
      await log.timed('model_update', () => copyWeights(roles.actor, roles.infer));
    }
    if (this.val && validatesBefore(c, step)) logValidation(log, await this.validate());
    const pool = this.pool;
    if (pool) await log.timed('opponent_pool', () => pool.update(trained, roles.actor));
    const batch = c.filter_groups.enable ? await this.playInformative(version) : await this.train.play(c.rollout_batch_size, roles.infer, this.chat, version);
    const baselines = needsOf(c.adv_estimator).greedyBaseline
      ? await log.timed('gen_max', () => this.train.greedyBaselines(batch.episodes, roles.infer, this.chat))
      : null;
    if (pool) log.add(pool.takeMetrics());
    return { batch, baselines, refLogProbs: null };
  }

  /** DAPO's dynamic sampling: rollouts of policy `version` until the step holds enough groups that did not all score alike, or the cap. */
  private async playInformative(version: number): Promise<RolloutBatch> {
    const c = this.config;
    const wanted = c.rollout_batch_size / c.train_env_manager.group_size;
    const gens: GenBatch[] = [];
    do {
      gens.push(genBatch(await this.train.play(c.rollout_batch_size, this.roles.infer, this.chat, version), c.filter_groups.metric));
    } while (!samplingDone(gens, wanted, c.filter_groups.max_num_gen_batches));
    return sampledBatch(gens, wanted);
  }

  async afterUpdate(): Promise<void> {}

  finalValidation(_step: number, version: number): Promise<RolloutBatch> | null {
    return this.val ? this.lastValidation(version) : null;
  }

  /**
   * The validation after the last step, with actor_infer as it is: actor_train's final weights
   * where it shares them (policy `version`), else the copy last taken, which the servers already hold.
   */
  private async lastValidation(version: number): Promise<RolloutBatch> {
    const { roles, sync } = this;
    if (sync) {
      const f = this.config.actor_infer.model_update_frequency;
      await sync.bring(this.lineage.current, roles.infer === roles.actor ? version : (sync.version ?? version - (version % f)), roles.infer, roles.tokenizer);
    }
    return this.validate();
  }

  async state(): Promise<SourceState> {
    return { trainEpisodes: [...this.train.episodeCounters], ...(this.sync ? { lineage: this.lineage.saved() } : {}) };
  }

  restore(state: SourceState): void {
    this.train.restoreEpisodeCounters(state.trainEpisodes);
    this.lineage.restore(state.lineage ?? []);
  }

  async checkpointed(): Promise<void> {}

  async close(): Promise<void> {
    await this.train.close();
    await this.val?.close();
    this.pool?.dispose();
  }

  private validate(): Promise<RolloutBatch> {
    return this.val!.play(this.config.val_batch_size, this.roles.infer, this.chat);
  }
}
