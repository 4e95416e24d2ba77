/**
 * What TextArena's two-player games share (tic_tac_toe, connect_four, kuhn_poker,
 * simple_negotiation): the words of an invalid move and its retry, and the result of a game one
 * seat won or none did.
 * (This folder starts with `_`, so the plugin loader does not take it for a plugin.)
 */
import type { SeatOutcome } from 'agentic';

/** TextArena's announcement of player `seat`'s invalid move. */
export function invalidMoveMessage(seat: number, reason: string): string {
  return `Player ${seat} attempted an invalid move. Reason: ${reason}`;
}

/** What TextArena adds to an invalid move that the player may retry. */
export const RETRY_NOTE = 'Please resubmit a valid move and remember to follow the game rules to avoid penalties.';

/** Every seat's reward and outcome in a game of `seats` won by `winner` (+1, the others -1), or drawn (null: 0 each). */
export function gameResult(seats: number, winner: number | null): { rewards: number[]; outcome: SeatOutcome[] } {
  const rewards = Array.from({ length: seats }, (_, seat) => (winner === null ? 0 : seat === winner ? 1 : -1));
  return { rewards, outcome: rewards.map((reward) => (reward > 0 ? 'win' : reward < 0 ? 'loss' : 'draw')) };
}
