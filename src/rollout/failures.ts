/**
 * Why a batch's episodes failed, by kind, as every place that shows a batch reports it: the step
 * line of `agentic train`, metrics.jsonl and the trackers, the table of `agentic eval`.
 *
 * An episode failed when it ended with a failure line (env_failure: the env or the outside agent
 * went wrong; infer_failure: the inference servers gave no response; timeout: episode_timeout_s
 * ran out; an outside agent's context_full says so too), or when its reward function could not
 * score it (reward_error: it threw, returned no number, or its judge was down; the env then
 * scored 0). Each kind keeps its count and the first episode's line, so a user reads why without
 * opening a transcript.
 */
import { oneLine } from '../errors';
import type { EndReason, Episode, Turn } from './types';

/** An episode's failure kind: how it ended (with a failure line), or reward_error. */
export type FailureKind = EndReason | 'reward_error';

/** The failed episodes of one kind: how many, and the first one's line. */
export interface FailedKind {
  kind: FailureKind;
  count: number;
  first: string;
}

/** A batch's failed episodes, kinds by count (most first; ties in the order they first came). */
export interface EpisodeFailures {
  failed: number;
  episodes: number;
  kinds: FailedKind[];
}

/** What a failure is read from: a rollout's Episode, or a replayed one. */
export type FailingEpisode = Pick<Episode, 'endReason' | 'failure'> & { turns: readonly Pick<Turn, 'rewardError'>[] };

/** The episode's failure, or null when it did not fail. */
export function episodeFailure(episode: FailingEpisode): { kind: FailureKind; reason: string } | null {
  if (episode.failure !== null) return { kind: episode.endReason, reason: oneLine(episode.failure) };
  const scored = episode.turns.find((turn) => turn.rewardError !== undefined);
  return scored ? { kind: 'reward_error', reason: oneLine(scored.rewardError!) } : null;
}

export function episodeFailures(episodes: readonly FailingEpisode[]): EpisodeFailures {
  const kinds = new Map<FailureKind, FailedKind>();
  for (const episode of episodes) {
    const failure = episodeFailure(episode);
    if (!failure) continue;
    const seen = kinds.get(failure.kind);
    if (seen) seen.count++;
    else kinds.set(failure.kind, { kind: failure.kind, count: 1, first: failure.reason });
  }
  const sorted = [...kinds.values()].sort((a, b) => b.count - a.count);
  return { failed: sorted.reduce((n, k) => n + k.count, 0), episodes: episodes.length, kinds: sorted };
}

/** `failures/total` (every step) and `failures/<kind>` (the kinds that occurred): counts of episodes. */
export function failureMetrics(failures: EpisodeFailures): Record<string, number> {
  return { 'failures/total': failures.failed, ...Object.fromEntries(failures.kinds.map((k) => [`failures/${k.kind}`, k.count])) };
}

/** Longest reason a line shows; metrics.jsonl and eval.json keep it whole. */
const SHOWN_REASON = 160;

const shortened = (reason: string) => (reason.length > SHOWN_REASON ? `${reason.slice(0, SHOWN_REASON - 3)}...` : reason);

/** `failed 8/16: env_failure 6 (runAgent() threw: ...); timeout 2 (...)`, or null when none failed. */
export function failuresLine(failures: EpisodeFailures): string | null {
  if (failures.failed === 0) return null;
  const kinds = failures.kinds.map((k) => `${k.kind} ${k.count} (${shortened(k.first)})`);
  return `failed ${failures.failed}/${failures.episodes}: ${kinds.join('; ')}`;
}
