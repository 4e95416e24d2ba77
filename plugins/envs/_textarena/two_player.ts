/**
 * What TextArena's two-player games share (tic_tac_toe, connect_four, kuhn_poker,
 * simple_negotiation): the words of an invalid move and its retry, the setting that counts the
 * retries, and the result of a game one seat won or none did.
 * (This folder starts with `_`, so the plugin loader does not take it for a plugin.)
 */
import { type SeatOutcome, z } from 'agentic';

/** TextArena's announcement of player `seat`'s invalid move. */
export function invalidMoveMessage(seat: number, reason: string): string {
  return `Player ${seat} attempted an invalid move. Reason: ${reason}`;
}

/** What TextArena adds to an invalid move that the player may retry. */
export const RETRY_NOTE = 'Please resubmit a valid move and remember to follow the game rules to avoid penalties.';

/** The env_config field of the retries a seat gets (TextArena's error_allowance). */
export const errorAllowance = () =>
  z.int().min(0).default(1).describe("Bad moves a seat may make in a row and retry (TextArena's error_allowance); the next one loses it the game.");

/** Every seat's reward and outcome in a game of `seats` won by `winner` (+1, the others -1), or drawn (null: 0 each). */
export function gameResult(seats: number, winner: number | null): { rewards: number[]; outcome: SeatOutcome[] } {
  const rewards = Array.from({ length: seats }, (_, seat) => (winner === null ? 0 : seat === winner ? 1 : -1));
  return { rewards, outcome: rewards.map((reward) => (reward > 0 ? 'win' : reward < 0 ? 'loss' : 'draw')) };
}
