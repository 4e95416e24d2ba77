/**
 * Rebuilds an episode's pictures by playing it again: reset a fresh env of the episode's tag
 * (custom_envs.<tag>) with the episode's seed, then step it with the recorded responses, drawing
 * `render('rgb')` after the reset and after every step. Envs are deterministic given the seed and
 * the responses (the Env contract), so the replay must show what the policy saw; every recorded
 * observation, reward and ending is checked against it, and the first difference is a one-line
 * ReplayError rather than a picture of some other episode.
 *
 * What the replay returns is also a complete record (observations, parsed actions, rewards,
 * metrics), so a saved episode that holds only its responses still gets a full transcript.
 *
 * A failed episode is shown as it failed. One saved with its failure line whose replay does not
 * reach the same failure (the env failed for a reason outside it: a server down, a sandbox
 * missing, the time budget) is shown as recorded, with that line, rather than as a divergence.
 * An outside agent's episode (an env with runAgent) is not stepped turn by turn: its turns are the
 * agent's model calls, which only the agent can make again. Its reset and the scoring of its answer
 * (the last turn's action) are replayed; a failed one, which has no answer to score, is shown as recorded.
 */
import type { AgenticConfig } from '../config/schema';
import { AgenticError, PluginError } from '../errors';
import type { PluginHost } from '../host/plugin_host';
import type { EpisodeDraw, MetricAgg, MetricValue, RgbFrame, SuiteEpisode } from '../sdk/types';
import { entryEnv } from '../rollout/entry_env';
import type { EndReason } from '../rollout/types';
import type { GuardedEnv } from '../sdk/guarded_env';

/** A turn as saved: the response is required, the rest is checked when present. */
export interface RecordedTurn {
  responseText: string;
  observation?: string;
  reward?: number;
  /** The action the env parsed (an outside agent's answer, on its last turn). */
  action?: string | null;
}

/** An episode as saved (a rollout's Episode is one). */
export interface RecordedEpisode {
  tag: string;
  seed: number;
  /** Reset's second argument when an env manager played it (datasets read in epochs). */
  draw?: EpisodeDraw;
  /** The suite episode it replayed (reset's options.episode), when validation played a val_suite. */
  suiteEpisode?: SuiteEpisode;
  turns: readonly RecordedTurn[];
  finalObservation?: string;
  endReason?: EndReason;
  /** Why the episode failed, in one line, as the rollout recorded it. */
  failure?: string | null;
  /** The task as the first prompt showed it. */
  instruction?: string;
  /** A seated env's game (Episode.seat): its seat, and every seat's moves in play order. */
  seat?: { index: number; names: readonly string[]; players: readonly string[]; moves: readonly { seat: number; responseText: string }[] };
  /** The record's score: a seat's return, checked against the replay. */
  score?: number;
}

export interface ReplayedTurn {
  observation: string;
  responseText: string;
  /** The action the env parsed, null if it found none, undefined if the env does not say. */
  action: string | null | undefined;
  reward: number;
  metrics: Record<string, MetricValue>;
  metricsAgg: Record<string, MetricAgg>;
  /** The reward function could not score this turn (info.reward_error). */
  rewardError?: string;
}

export interface Replay {
  instruction: string;
  turns: ReplayedTurn[];
  finalObservation: string;
  endReason: EndReason;
  /** One line about the failure the episode ended with (replayed, else recorded), else null. */
  failure: string | null;
  /** The state after the reset and after each turn (turns + 1 pictures); null if the env draws none. */
  frames: RgbFrame[] | null;
  /** One caption per state: the turn, the action (or "invalid"), the reward; the score at the end. */
  captions: string[];
}

/** The replay does not match the recording (or could not be played at all). */
export class ReplayError extends AgenticError {}

const REWARD_TOLERANCE = 1e-9;

/** Endings that are failures; a recording with one of them failed even when saved without its line. */
const FAILED_ENDINGS: readonly EndReason[] = ['env_failure', 'infer_failure', 'timeout'];

/** Where two observations first differ, as a short phrase for a one-line error. */
function firstDifference(recorded: string, replayed: string): string {
  const a = recorded.split('\n');
  const b = replayed.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      const show = (line: string | undefined) => (line === undefined ? 'nothing' : JSON.stringify(line.length > 40 ? `${line.slice(0, 40)}...` : line));
      return `line ${i + 1}: recorded ${show(a[i])}, replayed ${show(b[i])}`;
    }
  }
  return 'they differ in whitespace only';
}

const formatNumber = (value: number) => String(+value.toFixed(3));

/** What a caption calls a turn's action: the parsed action, "invalid", or the start of the response. */
export function actionLabel(turn: Pick<ReplayedTurn, 'action' | 'metrics' | 'responseText'>): string {
  if (typeof turn.action === 'string') return turn.action;
  if (turn.action === null || turn.metrics.action_is_valid === false) return 'invalid';
  const text = turn.responseText.trim().replace(/\s+/g, ' ');
  return text.length > 24 ? `"${text.slice(0, 24)}..."` : `"${text}"`;
}

function captionsOf(turns: readonly ReplayedTurn[], seed: number): string[] {
  const score = turns.reduce((sum, t) => sum + t.reward, 0);
  const captions = [`start\nseed ${seed}`];
  turns.forEach((turn, i) => captions.push(`turn ${i + 1}: ${actionLabel(turn)}\nreward ${formatNumber(turn.reward)}`));
  captions[captions.length - 1] += `\nscore ${formatNumber(score)}`;
  return captions;
}

/** An episode being replayed: the env playing it again, the recording, and how errors name it. */
interface Replaying {
  env: GuardedEnv;
  episode: RecordedEpisode;
  label: string;
}

/** The turns replayed, and where they left the env. */
interface ReplayedTurns {
  turns: ReplayedTurn[];
  observation: string;
  /** How the env ended the episode; null: still running after the recorded turns. */
  endReason: EndReason | null;
  failure: string | null;
  frames: RgbFrame[] | null;
}

/**
 * Replays `episode` with the env its tag names in `config`. `label` names the episode in errors
 * (default: its tag and seed).
 */
export async function replayEpisode(
  config: AgenticConfig,
  host: PluginHost,
  episode: RecordedEpisode,
  label = `episode (${episode.tag}, seed ${episode.seed})`,
): Promise<Replay> {
  const custom = config.custom_envs[episode.tag];
  if (!custom) {
    const defined = Object.keys(config.custom_envs);
    throw new ReplayError(`${label}: tag '${episode.tag}' is not in custom_envs (defined: ${defined.join(', ') || 'none'})`);
  }
  const plugin = await host.resolveEnv(custom.env_type);
  const env = entryEnv(plugin, custom, host.envContext(), `env ${episode.tag}`);
  const replaying: Replaying = { env, episode, label };
  try {
    if (env.playedByAgent) return await replayAgentEpisode(replaying);
    if (episode.seat) return await replaySeatedGame(replaying, episode.seat);
    return await replayEnvEpisode(replaying);
  } catch (error) {
    // a failure from outside the env does not come back on replay: the recording says what it was
    if (error instanceof ReplayError && typeof episode.failure === 'string') return asRecorded(episode);
    throw error;
  } finally {
    await env.close();
  }
}

/** The recording as it was saved, without pictures: an episode the replay cannot play again. */
function asRecorded(episode: RecordedEpisode): Replay {
  return {
    instruction: episode.instruction ?? '',
    turns: episode.turns.map(recordedTurn),
    finalObservation: episode.finalObservation ?? '',
    endReason: episode.endReason ?? 'env_failure',
    failure: episode.failure ?? null,
    frames: null,
    captions: [],
  };
}

function recordedTurn(turn: RecordedTurn): ReplayedTurn {
  return { observation: turn.observation ?? '', responseText: turn.responseText, action: turn.action, reward: turn.reward ?? 0, metrics: {}, metricsAgg: {} };
}

/** An env's episode: reset, then every recorded response stepped again (see the header). */
async function replayEnvEpisode(replaying: Replaying): Promise<Replay> {
  const { env, episode, label } = replaying;
  const reset = await env.reset(episode.seed, episode.draw, episode.suiteEpisode ? { episode: episode.suiteEpisode } : undefined);
  if (reset.failure) {
    if (episode.endReason === 'env_failure' && episode.turns.length === 0) {
      return { instruction: '', turns: [], finalObservation: '', endReason: 'env_failure', failure: reset.failure.reason, frames: null, captions: [] };
    }
    throw new ReplayError(`${label}: the env failed on replay: ${reset.failure.reason}`);
  }
  const first = await picture(replaying);
  const replayed = await replayTurns(replaying, reset.observation, first ? [first] : null);
  checkEnding(replaying, replayed);
  const { turns, observation, failure, frames } = replayed;
  // a failed last step left no picture of its own: the caption list follows the pictures
  const captions = captionsOf(turns, episode.seed);
  if (frames && frames.length < captions.length) captions.length = frames.length;
  return {
    instruction: reset.info.instruction,
    turns,
    finalObservation: observation,
    endReason: replayed.endReason ?? episode.endReason ?? 'max_actions',
    // a timeout or an inference failure ends the recording with no failure of the env's own
    failure: failure ?? episode.failure ?? null,
    frames,
    captions,
  };
}

/**
 * An outside agent's episode: the reset, the recorded model calls as they were, and the agent's
 * answer (the last turn's action) scored again by step(); a failed one is shown as recorded.
 */
async function replayAgentEpisode(replaying: Replaying): Promise<Replay> {
  const { env, episode, label } = replaying;
  if (typeof episode.failure === 'string' || (episode.endReason !== undefined && FAILED_ENDINGS.includes(episode.endReason))) return asRecorded(episode);
  const reset = await env.reset(episode.seed, episode.draw, episode.suiteEpisode ? { episode: episode.suiteEpisode } : undefined);
  if (reset.failure) throw new ReplayError(`${label}: the env failed on replay: ${reset.failure.reason}`);
  const first = episode.turns[0];
  if (first?.observation !== undefined && first.observation !== reset.observation) {
    throw diverges(replaying, 'at the reset', `the task differs from the recorded one (${firstDifference(first.observation, reset.observation)})`);
  }
  const start = await picture(replaying);
  const answer = episode.turns.at(-1)?.action;
  if (typeof answer !== 'string')
    throw new ReplayError(`${label}: an outside agent's episode saved without its answer (the last turn's action) cannot be scored again`);
  const scored = await env.step(answer);
  if (scored.failure) throw new ReplayError(`${label}: the env failed on replay scoring the answer: ${scored.failure.reason}`);
  const recordedReward = episode.turns.at(-1)!.reward;
  if (recordedReward !== undefined && Math.abs(recordedReward - scored.reward) > REWARD_TOLERANCE) {
    throw diverges(replaying, 'scoring the answer', `reward ${formatNumber(scored.reward)}, recorded ${formatNumber(recordedReward)}`);
  }
  const turns = episode.turns.map(recordedTurn);
  const last = turns.at(-1)!;
  Object.assign(last, { reward: scored.reward, metrics: scored.info.metrics, metricsAgg: scored.info.metricsAgg ?? {} });
  if (scored.info.reward_error !== undefined) last.rewardError = scored.info.reward_error;
  const end = start ? await picture(replaying) : null;
  return {
    instruction: reset.info.instruction,
    turns,
    finalObservation: scored.observation,
    endReason: scored.terminated ? 'terminated' : 'truncated',
    failure: null,
    frames: start && end ? [start, end] : null,
    captions: start && end ? [`start\nseed ${episode.seed}`, `answer: ${actionLabel(last)}\nscore ${formatNumber(scored.reward)}`] : [],
  };
}

/**
 * A seated env's game: reset, then every seat's moves in play order, a picture after each (the
 * whole board, so both seats show). The replay must end as the recording did and give the
 * record's seat the recorded return; each turn of the replay is one move, captioned with its seat,
 * its reward the record's seat's for that move.
 */
async function replaySeatedGame(replaying: Replaying, seat: NonNullable<RecordedEpisode['seat']>): Promise<Replay> {
  const { env, episode, label } = replaying;
  const reset = await env.reset(episode.seed, episode.draw, episode.suiteEpisode ? { episode: episode.suiteEpisode } : undefined);
  if (reset.failure) throw new ReplayError(`${label}: the env failed on replay: ${reset.failure.reason}`);
  const first = await picture(replaying);
  const frames = first ? [first] : null;
  const turns: ReplayedTurn[] = [];
  const captions = [`start\nseed ${episode.seed}`];
  let observation = reset.observation;
  let endReason: EndReason | null = null;
  let seatReturn = 0;
  for (const [i, move] of seat.moves.entries()) {
    if (endReason !== null)
      throw diverges(replaying, `at move ${i + 1}`, `the env ended the game after move ${i}, but ${seat.moves.length} moves are recorded`);
    const step = await env.step(move.responseText);
    if (step.failure) throw new ReplayError(`${label}: the env failed on replay at move ${i + 1}: ${step.failure.reason}`);
    // each move's reward as this record's seat got it, so the turns add up to its return
    const reward = (step as typeof step & { rewards?: readonly number[] }).rewards?.[seat.index] ?? 0;
    seatReturn += reward;
    const turn: ReplayedTurn = {
      observation,
      responseText: move.responseText,
      action: step.info.action,
      reward,
      metrics: step.info.metrics,
      metricsAgg: step.info.metricsAgg ?? {},
    };
    turns.push(turn);
    captions.push(`move ${i + 1} (${seat.names[move.seat]}: ${seat.players[move.seat]}): ${actionLabel(turn)}`);
    observation = step.observation;
    if (step.terminated) endReason = 'terminated';
    else if (step.truncated) endReason = 'truncated';
    if (frames) frames.push((await picture(replaying))!);
  }
  if ((episode.endReason === 'terminated' || episode.endReason === 'truncated') && endReason !== episode.endReason) {
    throw diverges(replaying, 'at the end', `the recording ended ${episode.endReason}, the replay ${endReason ?? 'with the game still running'}`);
  }
  if (episode.score !== undefined && Math.abs(episode.score - seatReturn) > REWARD_TOLERANCE) {
    throw diverges(replaying, 'at the end', `seat ${seat.names[seat.index]}'s return ${formatNumber(seatReturn)}, recorded ${formatNumber(episode.score)}`);
  }
  captions[captions.length - 1] += `\n${seat.names[seat.index]} scores ${formatNumber(seatReturn)}`;
  return {
    instruction: reset.info.instruction,
    turns,
    finalObservation: observation,
    endReason: endReason ?? episode.endReason ?? 'max_actions',
    failure: episode.failure ?? null,
    frames,
    captions,
  };
}

/** The env's picture of its state; null if it draws none. */
async function picture({ env, label }: Replaying): Promise<RgbFrame | null> {
  const drawn = await env.render('rgb');
  if (drawn.failure) throw new PluginError(`${label}: ${drawn.failure.reason}`);
  // the guard has already refused text for 'rgb'; this only narrows the type
  return typeof drawn.value === 'string' ? null : drawn.value;
}

function diverges({ label }: Replaying, where: string, what: string): ReplayError {
  return new ReplayError(`${label}: the replay diverges ${where}: ${what}`);
}

/** Steps the env with each recorded response from `observation`, checking what it shows against the recording. */
async function replayTurns(replaying: Replaying, observation: string, frames: RgbFrame[] | null): Promise<ReplayedTurns> {
  const { env, episode, label } = replaying;
  const recordingFailed = episode.endReason === 'env_failure';
  const turns: ReplayedTurn[] = [];
  let endReason: EndReason | null = null;
  let failure: string | null = null;
  for (const [i, recorded] of episode.turns.entries()) {
    const where = `at turn ${i + 1}`;
    if (endReason !== null)
      throw diverges(replaying, where, `the env ended the episode (${endReason}) after turn ${i}, but ${episode.turns.length} turns are recorded`);
    if (recorded.observation !== undefined && recorded.observation !== observation) {
      throw diverges(replaying, where, `the observation differs from the recorded one (${firstDifference(recorded.observation, observation)})`);
    }
    const step = await env.step(recorded.responseText);
    if (step.failure) {
      if (!recordingFailed || i !== episode.turns.length - 1) throw new ReplayError(`${label}: the env failed on replay ${where}: ${step.failure.reason}`);
      failure = step.failure.reason;
      endReason = 'env_failure';
    }
    if (recorded.reward !== undefined && Math.abs(recorded.reward - step.reward) > REWARD_TOLERANCE) {
      throw diverges(replaying, where, `reward ${formatNumber(step.reward)}, recorded ${formatNumber(recorded.reward)}`);
    }
    turns.push({
      observation,
      responseText: recorded.responseText,
      action: step.info.action,
      reward: step.reward,
      metrics: step.info.metrics,
      metricsAgg: step.info.metricsAgg ?? {},
      ...(step.info.reward_error === undefined ? {} : { rewardError: step.info.reward_error }),
    });
    observation = step.observation;
    if (endReason === null) {
      if (step.terminated) endReason = 'terminated';
      else if (step.truncated) endReason = 'truncated';
    }
    if (frames && endReason !== 'env_failure') {
      const next = await picture(replaying);
      if (!next) throw new PluginError(`${label}: env ${episode.tag}: render('rgb') returned null after turn ${i + 1}, though it drew the start`);
      frames.push(next);
    }
  }
  return { turns, observation, endReason, failure, frames };
}

/** The replay must end as the recording did: the same final observation, the env's own ending, and a failed one's failure. */
function checkEnding(replaying: Replaying, { turns, observation, endReason }: ReplayedTurns): void {
  const { episode } = replaying;
  if (episode.finalObservation !== undefined && episode.finalObservation !== observation && endReason !== 'env_failure') {
    throw diverges(replaying, 'at the end', `the final observation differs from the recorded one (${firstDifference(episode.finalObservation, observation)})`);
  }
  const recordedEnd = episode.endReason;
  if ((recordedEnd === 'terminated' || recordedEnd === 'truncated') && endReason !== recordedEnd) {
    throw diverges(
      replaying,
      'at the end',
      `the recording ended ${recordedEnd}, the replay ${endReason ?? `with the episode still running after ${turns.length} turns`}`,
    );
  }
  // a recording that failed ends the replay the same way, or leaves it running (a timeout, an inference failure)
  if (recordedEnd !== undefined && FAILED_ENDINGS.includes(recordedEnd) && endReason !== null && endReason !== recordedEnd) {
    throw diverges(replaying, 'at the end', `the recording ended ${recordedEnd}, the replay ${endReason}`);
  }
}
