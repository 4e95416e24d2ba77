/**
 * The `heuristic` opponent: a one-move lookahead, NOT an optimal player. It wins at once when it
 * can; else it blocks a column where the other would win at once; else it keeps to the columns
 * after which the other cannot win at once (all of them, when none is); among what is left it
 * plays the centre-most, the seeded stream breaking ties.
 *
 * It sees no further than the other's next move, so a double threat set up two moves ahead beats
 * it, and it will lose to a good player. Connect Four is solved (the first player wins with
 * perfect play, Allis 1988), but only a deep search knows the winning moves, so the env offers
 * no solution hook: a one-move lookahead is not an honest solution.
 */
import { type Board, type Disc, dropWins, legalMoves, play, toMove } from './board';

const other = (disc: Disc): Disc => (disc === 'X' ? 'O' : 'X');

/** The columns where `disc` would complete four at once, ascending. */
export function winningColumns(board: Board, disc: Disc): number[] {
  return legalMoves(board).filter((column) => dropWins(board, column, disc));
}

/** The columns after which the other player cannot win at once, ascending. */
export function safeColumns(board: Board): number[] {
  const mover = toMove(board);
  return legalMoves(board).filter((column) => winningColumns(play(board, column, mover), other(mover)).length === 0);
}

/** The columns closest to the middle of the board among `columns`, ascending. */
function centreMost(board: Board, columns: readonly number[]): number[] {
  const middle = (board.columns - 1) / 2;
  const nearest = Math.min(...columns.map((column) => Math.abs(column - middle)));
  return columns.filter((column) => Math.abs(column - middle) === nearest);
}

/** Every column the heuristic may play, ascending (one, or two equally central ones); none once the game is over. */
export function heuristicChoices(board: Board): number[] {
  const legal = legalMoves(board);
  if (legal.length === 0) return [];
  const mover = toMove(board);
  const wins = winningColumns(board, mover);
  const blocks = winningColumns(board, other(mover));
  const safe = safeColumns(board);
  const preferred = wins.length > 0 ? wins : blocks.length > 0 ? blocks : safe.length > 0 ? safe : legal;
  return centreMost(board, preferred);
}

/** The heuristic's column: the first of its choices, or `pick`'s (a seeded draw, say); throws once the game is over. */
export function heuristicColumn(board: Board, pick?: (columns: number[]) => number): number {
  const columns = heuristicChoices(board);
  if (columns.length === 0) throw new Error('the game is over: the heuristic has no column to play');
  return pick ? pick(columns) : columns[0]!;
}
