/**
 * One episode of one environment: reset with the group's seed, then ask the policy and step the
 * env turn by turn until the env ends it, the action budget (max_steps) is spent, the next prompt
 * no longer fits in sequence_length, or the episode's time budget runs out.
 *
 * Trajectory-wise (traj) the context grows: each turn's new ids are appended after the previous
 * response exactly as sampled (see chat.ts). Step-wise (step) every turn is a fresh prompt built
 * from the instruction, the last `history_length` steps and the current observation. Prompts come
 * from turn_prompt.ts, which the warm start's rows share.
 *
 * Function calling: an env whose reset info gives `tools` (OpenAI function definitions) has them
 * listed by the chat template in every first turn, and a step whose info gives `tool_results`
 * has them shown as tool messages in the next trajectory turn (agent_template does not apply).
 *
 * The time budget (episode_timeout_s) is the straggler guard: whatever is in flight when it runs
 * out (a generation, an env call) is abandoned, the episode ends as `timeout`, and the envs and
 * sequences of the other episodes never wait for it.
 */
import type { CustomEnvConfig } from '../config/schema';
import { Rng } from '../engine/rng';
import type { GuardedEnv, GuardedReset, GuardedStep } from '../sdk/guarded_env';
import { playAgentEpisode } from './agent_episode';
import type { ChatFormat } from './chat';
import { Deadline, EXPIRED } from './deadline';
import { type EpisodeEnding, type EpisodeLimits, type EpisodePlay, type EpisodeTask, playedTurn, recordEpisode } from './episode_record';
import type { Policy, TurnQuery, TurnReply } from './policy';
import { advanceTurnState, TurnPrompts, type TurnState } from './turn_prompt';
import type { Episode, Turn } from './types';

/** A turn as the policy is about to see it. */
export interface TurnStart {
  /** 0-based. */
  step: number;
  instruction: string;
  observation: string;
  /** This turn's new ids (traj: appended to the chat so far; step: the whole prompt). */
  promptIds: readonly number[];
  /** Everything the policy's response continues: exactly the ids it is given. */
  contextIds: readonly number[];
  /** Ids the response may still take before sequence_length; 0 or less ends the episode (context_full). */
  room: number;
  /** A seated env's game: the seat to move (seated_episode.ts); absent for one agent facing an env. */
  seat?: number;
}

/**
 * Watches an episode turn by turn, for `agentic play`; rollouts pass none. Its calls are awaited
 * outside the race against the episode's time budget, but the budget's clock runs on meanwhile,
 * so play lifts the budget (episode_timeout_s: Infinity) while a person is in the loop.
 */
export interface EpisodeObserver {
  /** The prompt is built; the policy is asked next, unless the prompt leaves no room. */
  beforeTurn?(turn: TurnStart): void | Promise<void>;
  /** The env has taken the response: the turn as recorded, and the env's whole step result (its info too). */
  afterTurn?(turn: Turn, step: GuardedStep): void | Promise<void>;
}

/** A reply the policy gave. */
export type Replied = Extract<TurnReply, { failure: null }>;

/** What one env episode is played with: the episode's inputs, who watches it, and its time budget. */
export interface Play extends EpisodePlay {
  observer: EpisodeObserver;
  deadline: Deadline;
}

/** The episode so far, as the turns advance it. */
export interface Progress extends TurnState {
  observations: string[];
  turns: Turn[];
}

export async function playEpisode(
  env: GuardedEnv,
  custom: CustomEnvConfig,
  task: EpisodeTask,
  limits: EpisodeLimits,
  policy: Policy,
  chat: ChatFormat,
  observer: EpisodeObserver = {},
): Promise<Episode> {
  if (env.playedByAgent) return playAgentEpisode(env, custom, task, limits, policy, chat);
  const started = performance.now();
  const play: Play = { env, custom, task, limits, policy, chat, observer, deadline: new Deadline(custom.episode_timeout_s * 1000) };
  const progress: Progress = { step: 0, instruction: '', observation: '', suffix: '', observations: [], turns: [], toolResults: null };
  let ending: EpisodeEnding;
  try {
    ending = (await resetEpisode(play, progress)) ?? (await playTurns(play, progress));
  } finally {
    play.deadline.clear();
  }
  const { instruction, turns, observation } = progress;
  return recordEpisode(task, { kind: custom.env_manager_cls, instruction, turns, finalObservation: observation, ...ending, remote: policy.remote, started });
}

/** The env reset with the task's seed (its suite episode, if any) within the time budget; the ending if it failed or ran out of time. */
export async function resetWithin({ env, task, custom, deadline }: Play): Promise<Extract<GuardedReset, { failure: null }> | EpisodeEnding> {
  const reset = await deadline.race(env.reset(task.seed, task.draw, task.episode ? { episode: task.episode } : undefined));
  if (reset === EXPIRED) {
    env.abandon();
    return { endReason: 'timeout', failure: `reset() did not finish within the episode budget of ${custom.episode_timeout_s} s` };
  }
  if (reset.failure) return { endReason: 'env_failure', failure: reset.failure.reason };
  return reset;
}

/** The env stepped with `response` within the time budget; the timeout ending if it ran out. */
export async function stepWithin({ env, custom, deadline }: Play, response: string): Promise<GuardedStep | EpisodeEnding> {
  const result = await deadline.race(env.step(response));
  if (result !== EXPIRED) return result;
  env.abandon();
  return { endReason: 'timeout', failure: `step() did not finish within the episode budget of ${custom.episode_timeout_s} s` };
}

/** Resets the env with the task's seed into `progress`; the ending if the reset failed or ran out of time. */
async function resetEpisode(play: Play, progress: Progress): Promise<EpisodeEnding | null> {
  const reset = await resetWithin(play);
  if ('endReason' in reset) return reset;
  progress.instruction = reset.info.instruction;
  progress.observation = reset.observation;
  progress.suffix = reset.info.suffix ?? '';
  progress.observations.push(reset.observation);
  if (Array.isArray(reset.info.tools)) progress.tools = reset.info.tools;
  return null;
}

/** Turn after turn until the env, the action budget, the context or the time budget ends the episode. */
async function playTurns(play: Play, progress: Progress): Promise<EpisodeEnding> {
  const { custom, limits, observer } = play;
  const prompts = new TurnPrompts(custom, play.chat);
  for (let step = 0; step < custom.max_steps; step++) {
    progress.step = step;
    const promptIds = prompts.turnIds(progress);
    const contextIds = prompts.contextIds(progress, promptIds);
    const room = limits.sequenceLength - contextIds.length;
    await observer.beforeTurn?.({ step, instruction: progress.instruction, observation: progress.observation, promptIds, contextIds, room });
    if (room <= 0) return { endReason: 'context_full', failure: null };
    const { task, limits: run } = play;
    const reply = await askPolicy(
      play,
      {
        id: `${task.mode}:${task.envId}:${task.episodeId}:${step}`,
        session: `${task.mode}:${task.envId}`,
        rng: Rng.fromSeed(run.runSeed, 'rollout', task.mode, task.tag, task.envId, task.episodeId, step),
      },
      contextIds,
      room,
    );
    if ('endReason' in reply) return reply;
    const responseText = play.chat.responseText(reply.tokens);
    const result = await stepWithin(play, responseText);
    if ('endReason' in result) return result;
    const turn = playedTurn(progress, promptIds, reply, responseText, result);
    progress.turns.push(turn);
    await observer.afterTurn?.(turn, result);
    advanceTurnState(progress, result);
    const ended = stepEnding(result);
    if (ended) return ended;
  }
  return { endReason: 'max_actions', failure: null };
}

/** Who asks: the query's id (unique in flight), its KV session and its sampling stream. */
export type TurnAsk = Pick<TurnQuery, 'id' | 'session' | 'rng'>;

/** The policy's reply to this turn's context; the ending if it failed or the time budget ran out first. */
export async function askPolicy(
  { env, custom, limits, policy, deadline }: Play,
  { id, session, rng }: TurnAsk,
  contextIds: number[],
  room: number,
): Promise<Replied | EpisodeEnding> {
  const reply = await deadline.race(
    policy.respond({ id, promptIds: contextIds, maxNewTokens: Math.min(custom.max_tokens_per_step, limits.maxNewTokens, room), rng, env, session }),
  );
  if (reply === EXPIRED) {
    policy.cancel(id);
    return { endReason: 'timeout', failure: `the policy's response did not come within the episode budget of ${custom.episode_timeout_s} s` };
  }
  if (reply.failure) return { endReason: reply.failure.kind === 'infer' ? 'infer_failure' : 'env_failure', failure: reply.failure.reason };
  return reply;
}

/** The ending a step gives: a failure, the env's end (terminated, then truncated), or none (play on). */
export function stepEnding(result: GuardedStep): EpisodeEnding | null {
  if (result.failure) return { endReason: 'env_failure', failure: result.failure.reason };
  if (result.terminated) return { endReason: 'terminated', failure: null };
  if (result.truncated) return { endReason: 'truncated', failure: null };
  return null;
}
