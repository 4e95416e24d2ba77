/**
 * The step result of a GEM language game, built the same way for every game: the game judges the
 * turn (its feedback, its reward, the action it read, whether its rules took it, whether the game
 * is won or lost) and this adds GEM's plumbing. A response with no action in the game's form is
 * GEM's format error: -0.1 and the episode ends. A turn that leaves the game going on at
 * max_turns ends it with GEM's line, terminated and truncated both true, as GEM sets them.
 *
 * The metrics follow one rule in every game (and in GEM's dataset envs, ./dataset_env.ts):
 * `action_is_valid` says the response held an action in the game's form (false exactly on a
 * format error); `action_is_effective` says the rules took it (false for a move they refuse, which
 * pays 0 and spends the turn); `success` says the game was won (the episode's last value).
 */
import type { MetricAgg, MetricValue, StepResult } from 'agentic';
import { LanguageGameReward } from './rewards';

export interface GameTurn {
  /** GEM's feedback on the turn. */
  feedback: string;
  reward: number;
  /** The action as read from the response (the step's `info.action`); null: none in the game's form. */
  action: string | null;
  /** Whether the rules took the action; false for a move they refuse. */
  effective: boolean;
  /** Set when the turn ends the game. */
  outcome?: 'won' | 'lost';
}

/** The game around the turn: how far it is, its suffix, and metrics of its own. */
export interface GameState {
  turn: number;
  maxTurns: number;
  suffix: string;
  /** The game's own metrics, states of the game reported with the episode's last value. */
  metrics?: Record<string, MetricValue>;
}

/** GEM's format error: the response held no action in the game's form. */
export function formatError(feedback: string): GameTurn {
  return { feedback, reward: LanguageGameReward.formatError, action: null, effective: false };
}

/** A move the rules refuse: it pays 0 and spends the turn. */
export function refused(feedback: string, action: string): GameTurn {
  return { feedback, reward: LanguageGameReward.invalidAction, action, effective: false };
}

export function gameStep(turn: GameTurn, game: GameState): StepResult {
  const gameOver = turn.action === null || turn.outcome !== undefined;
  const outOfTurns = game.turn >= game.maxTurns;
  const gameMetrics = game.metrics ?? {};
  return {
    observation: !gameOver && outOfTurns ? 'You have reached the maximum number of turns.' : turn.feedback,
    reward: turn.reward,
    terminated: gameOver || outOfTurns,
    truncated: turn.outcome === undefined && outOfTurns,
    info: {
      action: turn.action,
      suffix: game.suffix,
      metrics: { success: turn.outcome === 'won', action_is_valid: turn.action !== null, action_is_effective: turn.effective, ...gameMetrics },
      metricsAgg: Object.fromEntries(['success', ...Object.keys(gameMetrics)].map((name): [string, MetricAgg] => [name, 'last'])),
    },
  };
}
