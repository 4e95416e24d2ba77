/**
 * The jobs of distributed rollouts, as the trainer (src/rollout_sources/distributed/) and `agentic worker`
 * (src/worker/) both see them. One BullMQ job is one group's episode: the group_size
 * environments of a group play one episode id from one seed, so a batch is always whole groups and
 * a group's trajectories come from one worker and one policy version.
 *
 * Job ids are deterministic, built from (queue, step, mode, tag, group, episode), so enqueueing a
 * job again (after a Redis restart lost it, or on a resumed run) is a no-op while it exists:
 * BullMQ keeps one job per id. A run resumed from an earlier checkpoint asks for the same ids with
 * other weights: the job's history (./lineage.ts) says which weights it and its result belong to. Each manager has its own queue, `<queue>-train` and `<queue>-val`,
 * so its workers take as many jobs at once as its max_env_num_per_worker allows.
 */
import { createHash } from 'node:crypto';
import type { AgenticConfig } from '../config/schema';
import { generatingArgs, type GroupEpisode, managerOf } from '../rollout/env_manager';
import type { Episode, RolloutMode } from '../rollout/types';

/** What a job asks a worker to play. */
export interface GroupJobData {
  /** The training step the episode is for (validation: the step it validates). */
  step: number;
  /** The policy version the schedule gives it: a worker with a local copy of the actor loads these weights. */
  version: number;
  /** The history (./lineage.ts) whose weights of `version` the job asks for: weights-<version>-<history>. */
  history: string;
  /** rolloutFingerprint() of the trainer's config: a worker whose own differs refuses the job. */
  fingerprint: string;
  group: GroupEpisode;
  /**
   * The absolute folder the trainer writes each version's weights-N to (its model_update_dir), or
   * null when it writes none: a worker with a local copy of the actor reads them there, wherever it
   * was started, so every machine must see that folder at that path.
   */
  weightsDir: string | null;
  /** The LoRA adapter the inference servers hold for this version, which every request names; null: their own weights. */
  adapter: string | null;
}

/** What a worker returns for a job: the group's episodes, one per env, and who played them how. */
export interface GroupJobResult {
  episodes: Episode[];
  /** The policy version that played them, never above the job's. */
  version: number;
  /** The history whose weights played them: a worker drops weights of another history than the job's. */
  history: string;
  /** The worker's name (BullMQ's worker name). */
  worker: string;
  /** Seconds the worker spent on the job. */
  seconds: number;
}

/** The BullMQ queue of a manager's jobs. */
export function queueName(config: AgenticConfig, mode: RolloutMode): string {
  return `${config.distributed.queue}-${mode}`;
}

/** The job id of a group episode: BullMQ refuses ':' in ids, so the parts are joined with '.'. */
export function jobId(config: AgenticConfig, step: number, group: GroupEpisode): string {
  return `${config.distributed.queue}.s${step}.${group.mode}.${group.tag}.g${group.groupId}.e${group.episodeId}`;
}

/** How many jobs a worker plays at once for `mode`: its environments over the group size, at least one group. */
export function workerConcurrency(config: AgenticConfig, mode: RolloutMode): number {
  const manager = managerOf(config, mode);
  return Math.max(1, Math.floor(manager.max_env_num_per_worker / manager.group_size));
}

/**
 * A hash of every setting that decides what an episode of `mode` plays: the seed, the sequence
 * length, the manager's groups and sampling, and its environments. Where the servers are, how many
 * envs a worker runs and where weights are read from may differ between machines; these may not.
 */
export function rolloutFingerprint(config: AgenticConfig, mode: RolloutMode): string {
  const manager = managerOf(config, mode);
  const { max_env_num_per_worker: _perWorker, llm_proxy, ...groups } = manager;
  const settings = {
    seed: config.seed,
    sequence_length: config.sequence_length,
    groups,
    proxy_type: llm_proxy.proxy_type,
    generating_args: generatingArgs(config, mode),
    envs: manager.tags.map((tag) => [tag, config.custom_envs[tag]]),
  };
  return createHash('sha256').update(JSON.stringify(settings)).digest('hex').slice(0, 16);
}
