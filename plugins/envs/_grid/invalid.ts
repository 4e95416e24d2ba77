/** The step result of a grid game's turn whose response held no valid action. */
import type { StepResult } from 'agentic';

export interface InvalidTurn {
  observation: string;
  reward: number;
  formatPenalty: number;
  /** The turn used up the episode's last action. */
  outOfTurns: boolean;
  turn: number;
  /** What the turn left unchanged, for actionDesc ("you stayed where you were"). */
  effect: string;
  /** Metrics the env reports beside the usual four (actions_per_turn: 0, when a turn may hold several moves). */
  moreMetrics?: Readonly<Record<string, number>>;
}

export function invalidActionStep(turn: InvalidTurn): StepResult {
  return {
    observation: turn.observation,
    reward: turn.reward,
    terminated: false,
    truncated: turn.outOfTurns,
    info: {
      action: null,
      actionDesc: `Turn ${turn.turn}: no valid action was given, so ${turn.effect}.`,
      metrics: { success: false, action_is_valid: false, action_is_effective: false, format_penalty: turn.formatPenalty, ...turn.moreMetrics },
      metricsAgg: { success: 'last' },
    },
  };
}
