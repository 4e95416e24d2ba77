/**
 * Distributed rollouts (distributed.redis_url; docs/distributed.md), the trainer's side: every
 * group episode of a rollout is a BullMQ job (src/remote/jobs.ts) that `agentic worker` processes
 * (src/worker/) play, and the trainer owns what is trained on.
 *
 * The schedule is the asynchronous one (../async.ts) with k = async_generation_ratio, 0 included:
 * after the weights of version v are out, the steps that version plays are enqueued, each job
 * carrying v. So which weights a job asks for is fixed by the config, as in an asynchronous run;
 * a worker that plays with other weights returns its version, and rows more than k + f - 1
 * versions older than the step that trains on them are dropped, counted and played again.
 *
 * Exactly once, by job id: the trainer reads each job's result once (./producer.ts), and its
 * ledger (./ledger.ts) records every job whose rows a checkpoint counts; its jobs are deleted from
 * Redis once that checkpoint is on disk. Every start of the run is a history of its lineage
 * (src/remote/lineage.ts), which the checkpoint keeps too.
 *
 *   ./player.ts     the weights out, the steps as jobs, the batches back (AsyncRollouts' player)
 *   ./producer.ts   the queues: jobs added, followed, their results checked and taken once
 *   ./ledger.ts     the jobs a checkpoint counts
 *   ./unserved.ts   the watch over queues no worker takes jobs from
 */
import { resolve } from 'node:path';
import type { AgenticConfig } from '../../config/schema';
import { queueName } from '../../remote/jobs';
import { shownUrl } from '../../remote/redis';
import type { EnvManager } from '../../rollout/env_manager';
import type { RolloutBatch } from '../../rollout/types';
import type { PlayedStep, RolloutSource, SourceState } from '../../train/rollout_source';
import type { Roles } from '../../train/roles';
import type { StepLog } from '../../train/step_log';
import { AsyncRollouts } from '../async';
import type { DistributedPlayer } from './player';

/** The rollout source of distributed runs (src/train/rollout_source.ts): AsyncRollouts' schedule over a DistributedPlayer, with its ledger. */
export class DistributedRollouts implements RolloutSource {
  readonly sampledElsewhere = true;
  private readonly inner: AsyncRollouts<DistributedPlayer>;

  constructor(
    config: AgenticConfig,
    private readonly player: DistributedPlayer,
    roles: Roles,
    train: EnvManager,
  ) {
    this.inner = new AsyncRollouts(config, player, roles, train);
  }

  async begin(from: number): Promise<void> {
    await this.player.prepare(from);
    await this.inner.begin(from);
  }

  async next(step: number, log: StepLog): Promise<PlayedStep> {
    const played = await this.inner.next(step, log);
    this.player.ledger.count(step, true);
    return played;
  }

  afterUpdate(step: number, log: StepLog): Promise<void> {
    return this.inner.afterUpdate(step, log);
  }

  finalValidation(step: number): Promise<RolloutBatch> | null {
    return this.inner.finalValidation(step);
  }

  async state(): Promise<SourceState> {
    const state = await this.inner.state();
    for (const batch of state.inFlight?.batches ?? []) this.player.ledger.count(batch.step, false);
    return { ...state, ledger: this.player.ledger.state(), lineage: this.player.lineage.saved() };
  }

  restore(state: SourceState): void {
    this.inner.restore(state);
    this.player.ledger.restore(state.ledger ?? { jobs: [], finalJobs: 0 });
    this.player.lineage.restore(state.lineage ?? []);
  }

  checkpointed(): Promise<void> {
    return this.player.removeCounted();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The start line of a distributed run's actor_infer. */
export function distributedSource(config: AgenticConfig): string {
  const c = config.distributed;
  const proxy = config.train_env_manager.llm_proxy.proxy_type;
  const policy =
    proxy === 'random'
      ? "each environment's random action"
      : proxy === 'policy'
        ? `a copy of actor_infer each, loading ${resolve(config.model_update_dir)}/weights-N (the jobs name the folder)`
        : `the ${proxy} servers of their config`;
  const ahead = config.async_generation_ratio > 0 ? `, ${config.async_generation_ratio} step(s) ahead of actor_train` : '';
  return `agentic worker processes through Redis ${shownUrl(c.redis_url!)} (BullMQ queues ${queueName(config, 'train')}, ${queueName(config, 'val')}), playing with ${policy}${ahead}; old log-probs recomputed by actor_train`;
}
