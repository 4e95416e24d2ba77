/**
 * Training rows from episodes: one per trajectory (StarPO) or one per step (GiGPO). The rows keep
 * the ids exactly as they were fed and sampled, so the trainer recomputes the log-probabilities
 * of the very tokens the policy produced.
 */
import { isStepWise } from '../config/schema';
import type { Episode, Sample, Turn, TurnBounds } from './types';

interface Row {
  inputIds: Int32Array;
  responseMask: Uint8Array;
  logProbs: Float32Array;
  rewards: Float32Array;
  turns: TurnBounds[];
}

function buildRow(turns: readonly Turn[], score: number): Row {
  const length = turns.reduce((n, t) => n + t.promptIds.length + t.responseIds.length, 0);
  const inputIds = new Int32Array(length);
  const responseMask = new Uint8Array(length);
  const logProbs = new Float32Array(length);
  const rewards = new Float32Array(length);
  const bounds: TurnBounds[] = [];
  let at = 0;
  for (const turn of turns) {
    const prompt = at;
    inputIds.set(turn.promptIds, at);
    at += turn.promptIds.length;
    const response = at;
    inputIds.set(turn.responseIds, at);
    responseMask.fill(1, at, at + turn.responseIds.length);
    logProbs.set(turn.logProbs, at);
    at += turn.responseIds.length;
    bounds.push({ prompt, response, end: at });
  }
  const last = responseMask.lastIndexOf(1);
  if (last >= 0) rewards[last] = score;
  return { inputIds, responseMask, logProbs, rewards, turns: bounds };
}

/** The fields every row of an episode shares. */
function fromEpisode(episode: Episode, policyVersion: number) {
  const { trajGroupId, trajId, tag, envId, groupId, episodeId, endReason } = episode;
  return {
    seat: episode.seat ? episode.seat.names[episode.seat.index]! : null,
    policyVersion,
    trajGroupId,
    trajId,
    tag,
    envId,
    groupId,
    episodeId,
    episodeScore: episode.score,
    stepScores: episode.turns.map((t) => t.reward),
    endReason,
    truncated: endReason !== 'terminated',
  };
}

/**
 * One row for the whole episode: every turn's prompt ids and response ids, the response mask on
 * the sampled ids only, and the episode score on the last sampled id. An episode that never got
 * to answer (reset failed, timed out, first prompt too long) gives an empty row, so its group
 * stays whole; it carries no response tokens and so no loss.
 */
export function trajectorySample(episode: Episode, policyVersion = 0): Sample {
  const row = buildRow(episode.turns, episode.score);
  return {
    ...fromEpisode(episode, policyVersion),
    step: null,
    ...row,
    promptLength: row.turns[0]?.response ?? row.inputIds.length,
    score: episode.score,
    stepReward: null,
    stateHash: null,
  };
}

/** One row per turn: its own prompt and response, the step reward on the last sampled id. */
export function stepSamples(episode: Episode, policyVersion = 0): Sample[] {
  const shared = fromEpisode(episode, policyVersion);
  return episode.turns.map((turn, step) => ({
    ...shared,
    step,
    ...buildRow([turn], turn.reward),
    promptLength: turn.promptIds.length,
    score: turn.reward,
    stepReward: turn.reward,
    stateHash: turn.stateHash,
  }));
}

/**
 * An outside agent's session split where a call did not extend the last (Turn.opensRow): one row
 * per part, each with the episode's score on its last sampled id.
 */
function splitTrajectorySamples(episode: Episode, policyVersion: number): Sample[] {
  const parts: Turn[][] = [];
  for (const turn of episode.turns) {
    if (turn.opensRow || parts.length === 0) parts.push([]);
    parts.at(-1)!.push(turn);
  }
  return parts.map((turns) => trajectorySample({ ...episode, turns }, policyVersion));
}

/** The training rows of an episode that `policyVersion`'s weights played. */
export function episodeSamples(episode: Episode, policyVersion = 0): Sample[] {
  if (isStepWise(episode.kind)) return stepSamples(episode, policyVersion);
  return episode.turns.some((t) => t.opensRow) ? splitTrajectorySamples(episode, policyVersion) : [trajectorySample(episode, policyVersion)];
}
