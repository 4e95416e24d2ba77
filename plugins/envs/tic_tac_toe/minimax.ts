/**
 * Perfect TicTacToe play: the game-theoretic value of every board reachable from the empty one,
 * solved once when this module loads (5,478 boards, well under the 3^9 possible keys) and looked up
 * after that.
 *
 * Among moves of equal value it takes the fastest win and the slowest loss. A perfect opponent
 * that has a win takes it at once rather than wandering, and one that is lost still blocks each
 * threat it can, so a learner has to play its forced win out to the end: a stricter teacher than
 * one that hands over lost games early.
 */
import { type Board, boardString, emptyBoard, isOver, legalMoves, play, toMove, winner } from './board';

export type Value = -1 | 0 | 1;

/**
 * How the game ends under perfect play, from the view of the mark to move: cells left empty at
 * the end plus one for a win, the same negated for a loss, 0 for a draw. Its sign is the value;
 * its size ranks faster wins and slower losses.
 */
function endScore(board: Board): number {
  const emptyCells = board.filter((mark) => mark === null).length;
  // on a finished board the mark that just moved has won, if anyone has
  return winner(board) === null ? 0 : -(emptyCells + 1);
}

function solveAll(): ReadonlyMap<string, number> {
  const scores = new Map<string, number>();
  const score = (board: Board): number => {
    const key = boardString(board);
    const known = scores.get(key);
    if (known !== undefined) return known;
    const mark = toMove(board);
    const solved = isOver(board) ? endScore(board) : Math.max(...legalMoves(board).map((cell) => -score(play(board, cell, mark))));
    scores.set(key, solved);
    return solved;
  };
  score(emptyBoard());
  return scores;
}

const SCORES = solveAll();

function scoreOf(board: Board): number {
  const score = SCORES.get(boardString(board));
  if (score === undefined) throw new Error(`${boardString(board)} cannot arise in a game`);
  return score;
}

/** 1 where the mark to move can force a win, 0 a draw, -1 where the other mark can force a win. */
export function value(board: Board): Value {
  const sign = Math.sign(scoreOf(board));
  // -0 (the negation of a draw) reads as 0
  return sign === 0 ? 0 : (sign as Value);
}

/** Every optimal cell in ascending order (the best value, then the fastest win or slowest loss); none once the game is over. */
export function bestMoves(board: Board): number[] {
  const mark = toMove(board);
  const worth = legalMoves(board).map((cell) => ({ cell, score: -scoreOf(play(board, cell, mark)) }));
  const best = Math.max(...worth.map(({ score }) => score));
  return worth.filter(({ score }) => score === best).map(({ cell }) => cell);
}

/** The first optimal cell, or `pick`'s choice among them all (a seeded draw, say); throws once the game is over. */
export function minimaxCell(board: Board, pick?: (cells: number[]) => number): number {
  const cells = bestMoves(board);
  if (cells.length === 0) throw new Error(`the game on ${boardString(board)} is over`);
  return pick ? pick(cells) : cells[0]!;
}
