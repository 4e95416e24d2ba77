/**
 * Episodes the inference servers gave no response to (infer_failure) and the update. Such an
 * episode stops where the server failed: its row holds the turns played before it and the score
 * of those turns only, or nothing at all. Its group's mean and std would take that score for an
 * outcome, so every group holding one leaves the step's rollout before any statistic (group
 * normalisation, advantages, the KL controller) sees it, and the step counts what left.
 * Responses generated in this process never end so; only a remote policy's episodes carry the
 * infer_failure metric, and only their steps get the infer_failure rate.
 *
 * An episode the rollout marked untrained (an outside agent's session split under
 * gateway.on_mismatch: drop) leaves with its group the same way, for the same reason: a group
 * short of a member would be normalised over the others as if it were whole.
 */
import { playedWithoutGroups } from './groups';
import type { PlayedStep } from './rollout_source';

export interface KeptGroups {
  /** The step's rollout without the episodes and rows of the groups that hold an infer_failure. */
  played: PlayedStep;
  /** Episodes that ended as infer_failure. */
  failed: number;
  /** Episodes played. */
  episodes: number;
  /** The first failure's line (which server, what went wrong), null without one. */
  firstFailure: string | null;
  /**
   * `rollout/infer_failure_rate` (remote policies), `rollout/dropped_groups` and
   * `rollout/dropped_samples` (remote policies, and rollouts with an untrained episode).
   */
  metrics: Record<string, number>;
}

export function dropFailedGroups(played: PlayedStep): KeptGroups {
  const { episodes, samples } = played.batch;
  const failed = episodes.filter((e) => e.endReason === 'infer_failure');
  const untrained = episodes.filter((e) => e.untrained !== undefined);
  const groups = new Set([...failed, ...untrained].map((e) => e.trajGroupId));
  const remote = episodes.some((e) => 'infer_failure' in e.metrics);
  const metrics: Record<string, number> = {
    ...(remote ? { 'rollout/infer_failure_rate': episodes.length === 0 ? 0 : failed.length / episodes.length } : {}),
    ...(remote || untrained.length > 0
      ? { 'rollout/dropped_groups': groups.size, 'rollout/dropped_samples': samples.filter((s) => groups.has(s.trajGroupId)).length }
      : {}),
  };
  const counts = { failed: failed.length, episodes: episodes.length, firstFailure: failed[0]?.failure ?? null, metrics };
  return { played: playedWithoutGroups(played, groups), ...counts };
}
