/**
 * How an `agentic worker` plays one BullMQ job: its group episode, with the config's environments
 * (./env_pool.ts) and the policy of the job's mode (./policies.ts), returned as the job's result.
 * A job from a trainer of other rollout settings, or one whose weights folder this machine cannot
 * read, fails for good (UnrecoverableError): the worker then stops with its line (./worker.ts).
 */
import { type Job, UnrecoverableError } from 'bullmq';
import type { AgenticConfig } from '../config/schema';
import { type GroupJobData, type GroupJobResult, rolloutFingerprint } from '../remote/jobs';
import type { ChatFormat } from '../rollout/chat';
import { episodeLimits, memberTask } from '../rollout/env_manager';
import { playEpisode } from '../rollout/episode';
import type { RolloutMode } from '../rollout/types';
import type { EnvPool } from './env_pool';
import { LocalWeights, unreadableWeights, type WorkerPolicy } from './policies';

export type PlayJob = (mode: RolloutMode, job: Job<GroupJobData, GroupJobResult>) => Promise<GroupJobResult>;

/** Plays the jobs of worker `name`, each with the policy of its mode in `policies`. */
export function jobPlayer(config: AgenticConfig, name: string, chat: ChatFormat, policies: ReadonlyMap<RolloutMode, WorkerPolicy>, pool: EnvPool): PlayJob {
  return async (mode, job) => {
    const { group, fingerprint } = job.data;
    if (fingerprint !== rolloutFingerprint(config, mode)) {
      // BullMQ fails the job for good; the 'failed' handler then stops this worker
      throw new UnrecoverableError(
        `distributed: job ${job.id} comes from a trainer whose rollout settings (seed, sequence_length, ${mode}_env_manager, custom_envs) differ from this worker's config; start the worker with the trainer's config`,
      );
    }
    const policy = policies.get(mode)!;
    const unreadable = policy instanceof LocalWeights ? unreadableWeights(job.data.weightsDir) : null;
    if (unreadable) {
      throw new UnrecoverableError(
        `distributed: job ${job.id} asks for the trainer's weights from its model_update_dir, but ${unreadable}; run the worker where that folder is at the same path (a shared folder, docs/distributed.md)`,
      );
    }
    const started = performance.now();
    const custom = config.custom_envs[group.tag]!;
    const limits = episodeLimits(config, mode);
    const lease = await policy.acquire(mode, job.data);
    try {
      const episodes = await Promise.all(
        group.envIds.map(async (envId) => {
          const env = await pool.take(group.tag, envId);
          try {
            return await playEpisode(env, custom, memberTask(group, envId), limits, lease.policy, chat);
          } finally {
            pool.give(envId, env);
          }
        }),
      );
      return { episodes, version: lease.version, history: lease.history, worker: name, seconds: (performance.now() - started) / 1000 };
    } finally {
      lease.release();
    }
  };
}
