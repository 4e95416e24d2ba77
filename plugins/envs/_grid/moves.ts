/**
 * Several moves per turn in a grid game, under RAGEN's names (agent_proxy.max_actions_per_turn,
 * action_sep). With max_actions_per_turn N > 1 the answer is split at action_sep into moves
 * (blank pieces dropped) and the turn is played as RAGEN's env state manager plays it:
 * - only the first N moves are kept; the rest are dropped unplayed, without a penalty (RAGEN's
 *   ctx_manager cuts them the same way);
 * - of those, the ones that name no action are skipped and the valid ones are played in order,
 *   the turn then carrying the format penalty once and reporting action_is_valid false; a turn
 *   with no valid move at all is the usual invalid turn (invalid.ts);
 * - play stops at the first move that ends the episode (hole, goal, solved);
 * - the turn's reward is the sum of its moves' rewards.
 * With N = 1 the answer is read whole, as it always was: `Right || Down` is then not an action.
 * The env's max_steps still counts turns (step() calls), not moves; RAGEN counts moves.
 */
import { parseAnswer, type Rng, type StepResult, z } from 'agentic';
import { responseFor, responseWith } from './response';

/** The env_config keys of a grid game's moves per turn, checked against its action names. */
export function movesPerTurnKeys(actions: readonly string[]) {
  return {
    max_actions_per_turn: z
      .int()
      .min(1)
      .default(1)
      .describe(
        "Most moves one answer may give, separated by action_sep and played in order until the episode ends (RAGEN's agent_proxy.max_actions_per_turn). 1: exactly one action per answer, read whole.",
      ),
    action_sep: z
      .string()
      .min(1)
      // a separator inside an action name would cut that name in two
      .refine(
        (sep) => !actions.some((action) => action.toLowerCase().includes(sep.toLowerCase())),
        `must not be part of an action name (${actions.join(', ')})`,
      )
      .default('||')
      .describe("What separates the moves of one answer (RAGEN's agent_proxy.action_sep); read only when max_actions_per_turn > 1."),
  };
}

export interface MoveSettings {
  action_pattern: string;
  max_actions_per_turn: number;
  action_sep: string;
}

export interface TurnMoves<A extends string> {
  /** The valid moves among the first max_actions_per_turn given, in order, by their action names. */
  moves: A[];
  /** The pieces among the first max_actions_per_turn that name no action, as written. */
  invalid: string[];
  /** How many moves were given past max_actions_per_turn (dropped unplayed). */
  dropped: number;
}

const actionNamed = <A extends string>(piece: string, actions: readonly A[]) => actions.find((action) => action.toLowerCase() === piece.toLowerCase()) ?? null;

/** The moves a response gives, read with the env's answer pattern. */
export function parseMoves<A extends string>(response: string, settings: MoveSettings, actions: readonly A[]): TurnMoves<A> {
  if (settings.max_actions_per_turn === 1) {
    const { action } = parseAnswer(response, { pattern: settings.action_pattern, actions });
    return { moves: action === null ? [] : [action as A], invalid: [], dropped: 0 };
  }
  const { content } = parseAnswer(response, { pattern: settings.action_pattern });
  const given = content
    .split(settings.action_sep)
    .map((piece) => piece.trim())
    .filter((piece) => piece !== '');
  const kept = given.slice(0, settings.max_actions_per_turn);
  const moves: A[] = [];
  const invalid: string[] = [];
  for (const piece of kept) {
    const move = actionNamed(piece, actions);
    if (move === null) invalid.push(piece);
    else moves.push(move);
  }
  return { moves, invalid, dropped: given.length - kept.length };
}

/**
 * A random answer (the env's sampleRandomAction): one random move at N = 1; at N > 1 a count drawn
 * uniformly from 1 to N, then that many random moves joined by action_sep, so the warm start's
 * random episodes show the several-move form the instruction offers (a base that has only ever
 * written one move would almost never sample the separator, and RL could not find it).
 */
export function randomMovesResponse<A extends string>(rng: Rng, actions: readonly A[], settings: MoveSettings): string {
  if (settings.max_actions_per_turn === 1) return responseFor(rng.choice(actions), settings.action_pattern, actions);
  const moves = Array.from({ length: 1 + rng.int(settings.max_actions_per_turn) }, () => rng.choice(actions));
  return responseWith(moves.join(` ${settings.action_sep} `), (text) => parseMoves(text, settings, actions).moves.join() === moves.join());
}

/** What one move did. */
export interface MoveResult {
  reward: number;
  /** The move ended the episode (a hole, the goal, the last box on its target). */
  ends: boolean;
  /** The move changed the state. */
  effective: boolean;
  /** What happened, to follow "you " in the turn's description ("moved Left"). */
  said: string;
}

export interface PlayedMoves<A extends string> {
  /** The moves played, in order: up to the first that ended the episode. */
  played: A[];
  reward: number;
  ended: boolean;
  /** Some move changed the state. */
  effective: boolean;
  said: string[];
}

/** Plays `moves` in order with `play`, stopping at the first that ends the episode; the rewards add up. */
export function playMoves<A extends string>(moves: readonly A[], play: (move: A) => MoveResult): PlayedMoves<A> {
  const turn: PlayedMoves<A> = { played: [], reward: 0, ended: false, effective: false, said: [] };
  for (const move of moves) {
    const result = play(move);
    turn.played.push(move);
    turn.reward += result.reward;
    turn.effective ||= result.effective;
    turn.said.push(result.said);
    if (result.ends) {
      turn.ended = true;
      break;
    }
  }
  return turn;
}

/**
 * The per-turn count of moves played, when a turn may hold several (reduced over the episode by
 * the default mean, so `env/<tag>/actions_per_turn` is the moves per turn); none at N = 1, whose
 * metrics stay as they were.
 */
export function movesMetric(settings: MoveSettings, played: number): Record<string, number> {
  return settings.max_actions_per_turn > 1 ? { actions_per_turn: played } : {};
}

export interface MovesTurn<A extends string> {
  observation: string;
  parsed: TurnMoves<A>;
  turn: PlayedMoves<A>;
  success: boolean;
  formatPenalty: number;
  /** The turn used up the episode's turns. */
  outOfTurns: boolean;
  /** The turn's number, 1 first. */
  number: number;
}

const quoted = (pieces: readonly string[]) => pieces.map((piece) => JSON.stringify(piece)).join(', ');

/** The step result of a turn that played at least one valid move. */
export function movesStep<A extends string>(
  settings: MoveSettings,
  { observation, parsed, turn, success, formatPenalty, outOfTurns, number }: MovesTurn<A>,
): StepResult {
  const penalty = parsed.invalid.length > 0 ? formatPenalty : 0;
  const notes = [
    parsed.invalid.length > 0
      ? `${quoted(parsed.invalid)} ${parsed.invalid.length === 1 ? 'is not an action and was' : 'are not actions and were'} skipped`
      : '',
    parsed.dropped > 0 ? `the moves after the first ${settings.max_actions_per_turn} were not played` : '',
  ].filter((note) => note !== '');
  return {
    observation,
    reward: turn.reward + penalty,
    terminated: turn.ended,
    truncated: !turn.ended && outOfTurns,
    info: {
      action: turn.played.join(` ${settings.action_sep} `),
      actionDesc: `Turn ${number}: you ${turn.said.join(', then you ')}${notes.map((note) => `; ${note}`).join('')}.`,
      metrics: {
        success,
        action_is_valid: parsed.invalid.length === 0,
        action_is_effective: turn.effective,
        format_penalty: penalty,
        ...movesMetric(settings, turn.played.length),
      },
      metricsAgg: { success: 'last' },
    },
  };
}
