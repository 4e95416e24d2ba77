/**
 * One game of a seated env (two or more players, docs/multi_agent.md): reset with the group's
 * seed, then move by move, each by the seat the env says is to move, until the env ends the game,
 * a seat has used max_steps turns, a prompt no longer fits, or the time budget runs out.
 *
 * A seat the policy plays keeps its own episode state, as if it were alone with the env: its own
 * instruction (naming its seat), its own view of the board, its own turns, and its own KV session
 * and sampling stream (the seat is in the query id, the session and the Rng stream). So its turn
 * prompts are exactly playEpisode's (turn_prompt.ts), and its record is an ordinary Episode whose
 * rows hold only its own ids. A seat an env opponent plays (random, minimax, ...) answers without
 * a prompt and records nothing; so does a seat given a policy of its own that is not recorded
 * (agentic play's model opponent), from its prompts. A seat an outside agent plays (seat_agent,
 * ./seat_agent.ts) moves by what the agent returns; its model calls, answered by the policy through
 * the gateway, become its record's turns, its return on the last (the random and solution proxies
 * of a warm start have no model to call: they play such a seat from its prompts, as the policy's).
 * The observer watches the recorded seats the policy prompts itself.
 *
 * Rewards: every move gives each seat a reward (SeatedStepResult.rewards). A seat's reward for a
 * move goes to its latest turn at or before that move (the opponent's winning reply is charged to
 * the move that allowed it), and a reward before its first turn to its first turn. So a record's
 * score is its seat's return.
 */
import type { CustomEnvConfig } from '../config/schema';
import { Rng } from '../engine/rng';
import type { GuardedEnv } from '../sdk/guarded_env';
import type { SeatedResetResult, SeatedStepResult, SeatOutcome } from '../sdk/types';
import type { ChatFormat } from './chat';
import { Deadline } from './deadline';
import { askPolicy, type EpisodeObserver, type Play, type Progress, resetWithin, stepEnding, stepWithin } from './episode';
import { type EpisodeEnding, type EpisodeLimits, type EpisodeTask, playedTurn, recordEpisode } from './episode_record';
import type { Policy } from './policy';
import { SeatAgent } from './seat_agent';
import type { SeatPlay } from './seat_players';
import { advanceTurnState, TurnPrompts } from './turn_prompt';
import type { Episode, Turn } from './types';

/** One move of the game: who made it, what the env received, and every seat's reward for it. */
interface Move {
  seat: number;
  responseText: string;
  rewards: readonly number[];
}

/** The game so far: each seat's own state, the moves in order, and the env's outcome once it ends. */
interface Game {
  seats: Progress[];
  moves: Move[];
  outcome: readonly SeatOutcome[] | null;
}

export async function playSeatedEpisode(
  env: GuardedEnv,
  custom: CustomEnvConfig,
  task: EpisodeTask,
  limits: EpisodeLimits,
  policy: Policy,
  chat: ChatFormat,
  plays: readonly SeatPlay[],
  observer: EpisodeObserver = {},
): Promise<Episode[]> {
  const spec = env.seats!;
  const started = performance.now();
  const play: Play = { env, custom, task, limits, policy, chat, observer, deadline: new Deadline(custom.episode_timeout_s * 1000) };
  const game: Game = {
    seats: spec.names.map(() => ({ step: 0, instruction: '', observation: '', suffix: '', observations: [], turns: [], toolResults: null })),
    moves: [],
    outcome: null,
  };
  // a proxy (random, solution) has no model for an agent to call: it plays that seat from its prompts
  const proxy = policy.name === 'random' || policy.name === 'solution';
  const agents = plays.map((p) => (p.agent && !proxy ? new SeatAgent(play, p.agent, p.seat, spec.names[p.seat]!) : null));
  let ending: EpisodeEnding;
  try {
    const first = await resetGame(play, game);
    ending = typeof first === 'number' ? await playMoves(play, game, plays, agents, first) : first;
  } finally {
    play.deadline.clear();
    for (const agent of agents) agent?.close();
  }
  const returns = creditSeatRewards(game);
  const agentRecords = agents.map((agent, seat) => {
    if (!agent) return { metrics: {}, untrained: null };
    const { turns, metrics, untrained } = agent.turns(returns[seat]!);
    game.seats[seat]!.turns = turns;
    return { metrics, untrained };
  });
  const outcome = game.outcome ?? (ending.endReason === 'terminated' || ending.endReason === 'truncated' ? outcomeOfReturns(returns) : null);
  const moves = game.moves.map(({ seat, responseText }) => ({ seat, responseText }));
  return plays
    .filter((p) => p.recorded)
    .map(({ seat }) => {
      const state = game.seats[seat]!;
      const record = recordEpisode(task, {
        kind: custom.env_manager_cls,
        instruction: state.instruction,
        turns: state.turns,
        finalObservation: state.observation,
        ...ending,
        remote: policy.remote,
        started,
      });
      return {
        ...record,
        trajId: `${record.trajId}_s${seat}`,
        score: returns[seat]!,
        metrics: { ...record.metrics, ...agentRecords[seat]!.metrics, ...outcomeMetrics(outcome, seat) },
        ...(agentRecords[seat]!.untrained ? { untrained: agentRecords[seat]!.untrained } : {}),
        seat: { index: seat, names: spec.names, players: plays.map((p) => p.player), moves, returns, outcome },
      };
    });
}

/** Resets the env into every seat's state; the seat to move first, or the ending if the reset failed or ran out of time. */
async function resetGame(play: Play, game: Game): Promise<number | EpisodeEnding> {
  const reset = await resetWithin(play);
  if ('endReason' in reset) return reset;
  const { seat, instructions } = reset as unknown as SeatedResetResult;
  game.seats.forEach((state, s) => {
    state.instruction = instructions[s]!;
    state.suffix = reset.info.suffix ?? '';
  });
  const first = game.seats[seat]!;
  first.observation = reset.observation;
  first.observations.push(reset.observation);
  return seat;
}

/** Move after move until the env, a seat's turn limit, the context or the time budget ends the game. */
async function playMoves(play: Play, game: Game, plays: readonly SeatPlay[], agents: readonly (SeatAgent | null)[], first: number): Promise<EpisodeEnding> {
  const { env, custom, task, limits, chat, observer } = play;
  const prompts = new TurnPrompts(custom, chat);
  for (let mover = first; ; ) {
    const state = game.seats[mover]!;
    if (state.step >= custom.max_steps) return { endReason: 'max_actions', failure: null };
    let responseText: string;
    let asked: { promptIds: number[]; reply: { tokens: number[]; logProbs: number[] } } | null = null;
    const seatPlay = plays[mover]!;
    const agent = agents[mover];
    if (agent) {
      const moved = await agent.move(state.instruction, state.observation);
      if ('endReason' in moved) return moved;
      responseText = moved.text;
    } else if (seatPlay.recorded || seatPlay.policy) {
      const promptIds = prompts.turnIds(state);
      const contextIds = prompts.contextIds(state, promptIds);
      const room = limits.sequenceLength - contextIds.length;
      const { step, instruction, observation } = state;
      if (seatPlay.recorded) await observer.beforeTurn?.({ step, instruction, observation, promptIds, contextIds, room, seat: mover });
      if (room <= 0) return { endReason: 'context_full', failure: null };
      const reply = await askPolicy(
        seatPlay.policy ? { ...play, policy: seatPlay.policy } : play,
        {
          id: `${task.mode}:${task.envId}:${task.episodeId}:s${mover}:${step}`,
          session: `${task.mode}:${task.envId}:s${mover}`,
          rng: Rng.fromSeed(limits.runSeed, 'rollout', task.mode, task.tag, task.envId, task.episodeId, 'seat', mover, step),
        },
        contextIds,
        room,
      );
      if ('endReason' in reply) return reply;
      responseText = chat.responseText(reply.tokens);
      asked = { promptIds, reply };
    } else {
      const answer = await env.opponentAction(seatPlay.player);
      if (answer.failure) return { endReason: 'env_failure', failure: answer.failure.reason };
      responseText = answer.response;
    }
    const result = await stepWithin(play, responseText);
    if ('endReason' in result) return result;
    const { seat: next, rewards, outcome } = result as typeof result & Partial<SeatedStepResult>;
    game.moves.push({ seat: mover, responseText, rewards: rewards ?? game.seats.map(() => 0) });
    if (asked) {
      const turn = playedTurn(state, asked.promptIds, asked.reply, responseText, result);
      state.turns.push(turn);
      if (seatPlay.recorded) await observer.afterTurn?.(turn, result);
    }
    state.step += 1;
    const ended = stepEnding(result);
    if (ended) {
      game.outcome = outcome ?? null;
      return ended;
    }
    mover = next!;
    advanceTurnState(game.seats[mover]!, result);
  }
}

/**
 * Puts each seat's rewards on its turns (the header's rule) and returns each seat's return. A
 * seat with no turn keeps its return on the record's score alone.
 */
export function creditSeatRewards(game: { seats: readonly { turns: readonly Turn[] }[]; moves: readonly Move[] }): number[] {
  const returns = game.seats.map(() => 0);
  // a recorded seat has a turn for each of its moves: the index of its latest turn so far
  const latest = game.seats.map(() => -1);
  for (const { turns } of game.seats) for (const turn of turns) turn.reward = 0;
  for (const move of game.moves) {
    latest[move.seat]! += 1;
    move.rewards.forEach((reward, seat) => {
      returns[seat]! += reward;
      const turn = game.seats[seat]!.turns[Math.max(0, latest[seat]!)];
      if (turn) turn.reward += reward;
    });
  }
  return returns;
}

/** A finished game's outcome from its returns: the highest return wins, all equal is a draw. */
export function outcomeOfReturns(returns: readonly number[]): SeatOutcome[] {
  const best = Math.max(...returns);
  if (returns.every((r) => r === best)) return returns.map(() => 'draw');
  return returns.map((r) => (r === best ? 'win' : 'loss'));
}

/**
 * A seat's 0/1 win, draw and loss (all 0 for a game that did not finish), its index, and its
 * success: not losing (a win or a draw), what a game whose best play draws asks of a player, and
 * what validation's success and the held-out result then read.
 */
function outcomeMetrics(outcome: readonly SeatOutcome[] | null, seat: number): Record<string, number> {
  const result = outcome?.[seat];
  return {
    win: Number(result === 'win'),
    draw: Number(result === 'draw'),
    loss: Number(result === 'loss'),
    success: Number(result === 'win' || result === 'draw'),
    seat,
  };
}
