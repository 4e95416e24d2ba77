/**
 * What TextArena's two-player games share (tic_tac_toe, connect_four, kuhn_poker,
 * simple_negotiation): the words of an invalid move and its retry, the setting that counts the
 * retries, the random opening of the board games, and the result of a game one seat won or none did.
 * (This folder starts with `_`, so the plugin loader does not take it for a plugin.)
 */
import { type Rng, type SeatOutcome, z } from 'agentic';

/** TextArena's announcement of player `seat`'s invalid move. */
export function invalidMoveMessage(seat: number, reason: string): string {
  return `Player ${seat} attempted an invalid move. Reason: ${reason}`;
}

/** What TextArena adds to an invalid move that the player may retry. */
export const RETRY_NOTE = 'Please resubmit a valid move and remember to follow the game rules to avoid penalties.';

/** The env_config field of the retries a seat gets (TextArena's error_allowance). */
export const errorAllowance = () =>
  z.int().min(0).default(1).describe("Bad moves a seat may make in a row and retry (TextArena's error_allowance); the next one loses it the game.");

/** A board game's random opening (env_config.opening_moves): a count, or the least and most a game may draw. */
export type OpeningMoves = number | readonly [number, number];

/**
 * The env_config field of the random opening, up to `most` moves: `2` plays two random moves (by
 * the seed) before the first seat moves; `[0, 4]` draws each game's count between 0 and 4, so
 * training meets every stage of the game, the empty board included.
 */
export const openingMoves = (most: number) => {
  const count = z.int().min(0).max(most);
  return z
    .union([count, z.tuple([count, count]).refine(([least, most]) => least <= most, '[least, most] needs least <= most')])
    .default(0)
    .describe(
      `Random moves (by the seed) played before the first seat moves, so games start from varied positions: a count (0 starts from the empty board), or [least, most], each game drawing its count in that range. At most ${most}, so no opening ends the game.`,
    );
};

/** The most moves an opening may play. */
export const mostOpeningMoves = (setting: OpeningMoves): number => (typeof setting === 'number' ? setting : setting[1]);

/** This game's opening length: the count itself (drawing nothing), or one drawn from the range with `rng`. */
export function openingLength(setting: OpeningMoves, rng: Rng): number {
  if (typeof setting === 'number') return setting;
  return setting[0] + rng.int(setting[1] - setting[0] + 1);
}

/** Every seat's reward and outcome in a game of `seats` won by `winner` (+1, the others -1), or drawn (null: 0 each). */
export function gameResult(seats: number, winner: number | null): { rewards: number[]; outcome: SeatOutcome[] } {
  const rewards = Array.from({ length: seats }, (_, seat) => (winner === null ? 0 : seat === winner ? 1 : -1));
  return { rewards, outcome: rewards.map((reward) => (reward > 0 ? 'win' : reward < 0 ? 'loss' : 'draw')) };
}
