import { describe, expect, test } from 'bun:test';
import {
  type Board,
  boardFromString,
  boardString,
  boardText,
  completingCells,
  emptyBoard,
  FIRST_MARK,
  isFull,
  isOver,
  legalMoves,
  type Mark,
  PLAYER_MARKS,
  parseCell,
  play,
  toMove,
  winner,
} from '../../../plugins/envs/tic_tac_toe/board';
import ticTacToePlugin from '../../../plugins/envs/tic_tac_toe';
import { bestMoves, minimaxCell, value } from '../../../plugins/envs/tic_tac_toe/minimax';
import { ticTacToePicture } from '../../../plugins/envs/tic_tac_toe/render';
import { PluginHost } from '../../../src/host/plugin_host';
import type { SeatedResetResult, SeatedStepResult } from '../../../src/sdk/types';

const board = boardFromString;
const other = (mark: Mark): Mark => (mark === 'X' ? 'O' : 'X');
/** A value from the other mark's view; a draw stays 0, not -0 (which toBe tells apart). */
const negate = (v: number) => (v === 0 ? 0 : -v);
/** The board after the given cells are played in turn from the empty one. */
const afterMoves = (cells: number[]) => cells.reduce((b, cell) => play(b, cell, toMove(b)), emptyBoard());

/** Every board that can arise in a game, each once, by its string. */
function reachableBoards(): Map<string, Board> {
  const seen = new Map<string, Board>();
  const visit = (b: Board) => {
    if (seen.has(boardString(b))) return;
    seen.set(boardString(b), b);
    for (const cell of legalMoves(b)) visit(play(b, cell, toMove(b)));
  };
  visit(emptyBoard());
  return seen;
}
const REACHABLE = reachableBoards();

/** The test's own negamax: the result for the mark to move under perfect play, with no tie-breaks. */
function plainValue(b: Board, memo: Map<string, number>): number {
  const key = boardString(b);
  if (memo.has(key)) return memo.get(key)!;
  const result = winner(b) !== null ? -1 : isFull(b) ? 0 : Math.max(...legalMoves(b).map((cell) => negate(plainValue(play(b, cell, toMove(b)), memo))));
  memo.set(key, result);
  return result;
}

/** The cells where `mark` would complete a line at once. */
const winningCells = (b: Board, mark: Mark) =>
  b.flatMap((cell, at) => (cell === null && winner(b.map((old, i) => (i === at ? mark : old))) === mark ? [at] : []));

/** How `mark`'s games end when it plays any of minimax's best cells and the other mark plays every legal cell. */
function resultsAgainstEveryReply(mark: Mark): Record<'win' | 'draw' | 'loss', number> {
  const results = { win: 0, draw: 0, loss: 0 };
  const walk = (b: Board) => {
    if (isOver(b)) {
      const won = winner(b);
      results[won === null ? 'draw' : won === mark ? 'win' : 'loss']++;
      return;
    }
    const cells = toMove(b) === mark ? bestMoves(b) : legalMoves(b);
    for (const cell of cells) walk(play(b, cell, toMove(b)));
  };
  walk(emptyBoard());
  return results;
}

describe('tic_tac_toe board', () => {
  test('TextArena numbering: player 0 is O and moves first, player 1 is X', () => {
    expect(PLAYER_MARKS).toEqual(['O', 'X']);
    expect(FIRST_MARK).toBe('O');
    expect(toMove(emptyBoard())).toBe('O');
    expect(toMove(board('....O....'))).toBe('X');
    expect(toMove(board('X...O....'))).toBe('O');
  });

  test('a line of three wins: every row, column and diagonal, for either mark', () => {
    const lines = ['XXX......', '...XXX...', '......XXX', 'X..X..X..', '.X..X..X.', '..X..X..X', 'X...X...X', '..X.X.X..'];
    for (const line of lines) {
      expect(winner(board(line))).toBe('X');
      expect(winner(board(line.replaceAll('X', 'O')))).toBe('O');
    }
    expect(winner(board('XX.OO....'))).toBeNull();
    expect(winner(board('XOX......'))).toBeNull();
  });

  test('a full board without a line is a draw; a game ends on a win or a full board', () => {
    const draw = board('OXOOXXXOO');
    expect(winner(draw)).toBeNull();
    expect(isFull(draw)).toBe(true);
    expect(isOver(draw)).toBe(true);
    expect(legalMoves(draw)).toEqual([]);
    expect(isOver(board('OOO.XX...'))).toBe(true);
    expect(legalMoves(board('OOO.XX...'))).toEqual([]);
    expect(isOver(board('OO..XX...'))).toBe(false);
  });

  test('play returns a new board and leaves the old one; illegal moves throw', () => {
    const before = board('O...X....');
    const after = play(before, 8, 'O');
    expect(boardString(after)).toBe('O...X...O');
    expect(boardString(before)).toBe('O...X....');
    expect(legalMoves(before)).toEqual([1, 2, 3, 5, 6, 7, 8]);
    expect(() => play(before, 4, 'O')).toThrow('not a legal move');
    expect(() => play(before, 9, 'O')).toThrow('not a legal move');
    expect(() => play(before, 1.5, 'O')).toThrow('not a legal move');
    expect(() => play(before, 1, 'X')).toThrow("it is O's turn");
    expect(() => play(board('OOO.XX...'), 8, 'X')).toThrow('not a legal move');
  });

  test('boards read and write as strings', () => {
    expect(boardString(board('X.O......'))).toBe('X.O......');
    expect(board('X.O......')).toEqual(['X', null, 'O', null, null, null, null, null, null]);
    expect(() => board('X.O')).toThrow('not a board');
    expect(() => board('x........')).toThrow('not a board');
  });

  test("the board text is TextArena's: marks, numbers on empty cells, ---+---+--- between rows", () => {
    expect(boardText(emptyBoard())).toBe(' 0 | 1 | 2 \n---+---+---\n 3 | 4 | 5 \n---+---+---\n 6 | 7 | 8 ');
    expect(boardText(board('O...X...O'))).toBe(' O | 1 | 2 \n---+---+---\n 3 | X | 5 \n---+---+---\n 6 | 7 | O ');
  });

  test('parseCell reads the first bracketed number, as TextArena does, and brackets a reply that has none', () => {
    expect(parseCell('[4]')).toBe(4);
    expect(parseCell('I take the centre: [ 4 ].')).toBe(4);
    expect(parseCell('[2] or maybe [7]')).toBe(2);
    expect(parseCell('[12]')).toBe(12);
    expect(parseCell('4')).toBe(4);
    expect(parseCell(' 7\n')).toBe(7);
    for (const junk of ['', 'centre', '[centre]', 'I play 4', '[4', '4]', '[-1]', '[4.5]', '(4)']) expect(parseCell(junk)).toBeNull();
  });

  test('parseCell takes a pattern whose last group holds the number, as a string or a RegExp', () => {
    const answer = '<think>(.*?)</think>\\s*<answer>\\s*\\[?(.*?)\\]?\\s*</answer>';
    expect(parseCell('<think>centre</think><answer>[4]</answer>', answer)).toBe(4);
    expect(parseCell('<think>centre</think><answer>4</answer>', answer)).toBe(4);
    expect(parseCell('<think>centre</think><answer>middle</answer>', answer)).toBeNull();
    expect(parseCell('cell 6', /cell (\d)/)).toBe(6);
  });
});

describe('tic_tac_toe minimax', () => {
  test('the empty board is a draw; every reachable board has the value of a plain negamax', () => {
    expect(value(emptyBoard())).toBe(0);
    expect(REACHABLE.size).toBe(5478);
    const memo = new Map<string, number>();
    for (const b of REACHABLE.values()) expect<number>(value(b)).toBe(plainValue(b, memo));
  });

  test('a board that cannot arise in play is refused', () => {
    expect(() => value(board('XXX......'))).toThrow('cannot arise');
  });

  test('best moves keep the value, ascending, and none once the game is over', () => {
    for (const b of REACHABLE.values()) {
      const cells = bestMoves(b);
      expect(cells).toEqual([...cells].sort((p, q) => p - q));
      if (isOver(b)) expect(cells).toEqual([]);
      for (const cell of cells) expect(negate(value(play(b, cell, toMove(b))))).toBe(value(b));
    }
  });

  test('it wins at once when it can, and blocks a single threat when it cannot', () => {
    for (const b of REACHABLE.values()) {
      if (isOver(b)) continue;
      const mark = toMove(b);
      const wins = winningCells(b, mark);
      const threats = winningCells(b, other(mark));
      if (wins.length > 0) expect(bestMoves(b)).toEqual(wins);
      else if (threats.length === 1) expect(bestMoves(b)).toEqual(threats);
    }
  });

  test('minimaxCell takes the first best cell, or what pick chooses among them; none once the game is over', () => {
    const opening = emptyBoard();
    expect(minimaxCell(opening)).toBe(bestMoves(opening)[0]!);
    let offered: number[] = [];
    const last = minimaxCell(opening, (cells) => {
      offered = cells;
      return cells.at(-1)!;
    });
    expect(offered).toEqual(bestMoves(opening));
    expect(last).toBe(offered.at(-1)!);
    expect(() => minimaxCell(board('OOO.XX...'))).toThrow('is over');
  });

  test('exhaustive: playing O (first), any best cell never loses to any sequence of X replies', () => {
    const results = resultsAgainstEveryReply('O');
    expect(results.loss).toBe(0);
    expect(results.win).toBeGreaterThan(0);
    expect(results.draw).toBeGreaterThan(0);
  });

  test('exhaustive: playing X (second), any best cell never loses to any sequence of O replies', () => {
    const results = resultsAgainstEveryReply('X');
    expect(results.loss).toBe(0);
    expect(results.win).toBeGreaterThan(0);
    expect(results.draw).toBeGreaterThan(0);
  });

  test('minimax against minimax is a draw', () => {
    let b = emptyBoard();
    while (!isOver(b)) b = play(b, minimaxCell(b), toMove(b));
    expect(winner(b)).toBeNull();
  });
});

/** The env as the tests drive it: synchronous. */
interface TicTacToeGame {
  reset(seed: number, draw?: undefined, options?: { episode: Record<string, unknown> }): SeatedResetResult;
  step(response: string): SeatedStepResult;
  stateNotes(): string;
}
const newGame = (config: Record<string, unknown> = {}) =>
  new ticTacToePlugin.env(ticTacToePlugin.config.parse(config), new PluginHost().envContext()) as unknown as TicTacToeGame;

describe('tic_tac_toe compact prompt', () => {
  test("the board as the seat to move sees it: its marks #, the other seat's *, one token a cell; no cell number outside the board", () => {
    const game = newGame({ prompt_style: 'compact' });
    // O to move (O at 0 and 4, X at 2 and 8): O sees its own marks as #
    const asO = game.reset(1, undefined, { episode: { board: 'O.X.O...X' } });
    expect(asO.seat).toBe(0);
    expect(asO.observation).toBe('#1*\n3#5\n67*');
    expect(asO.instructions).toEqual([
      'You are O, shown #; X is *. Three in a row wins. Answer with a free cell in brackets.',
      'You are X, shown #; O is *. Three in a row wins. Answer with a free cell in brackets.',
    ]);
    for (const instruction of asO.instructions) expect(instruction).not.toMatch(/\d/);
    // after O's move X is to move, and the same marks read the other way round
    const asX = game.step('[3]');
    expect(asX.seat).toBe(1);
    expect(asX.observation).toBe('*1#\n**5\n67#');
    // X to move reads its own mark as # too
    const xView = newGame({ prompt_style: 'compact' }).reset(1, undefined, { episode: { board: 'O...X...O' } });
    expect(xView.seat).toBe(1);
    expect(xView.observation).toBe('*12\n3#5\n67*');
  });
});

describe('tic_tac_toe opening', () => {
  const marks = (reset: SeatedResetResult) => (reset.info.episode as { board: string }).board.replaceAll(/[^XO]/g, '').length;

  test('opening_moves: a count plays that many random moves, by the seed; the same seed, the same board', () => {
    const starts = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const reset = newGame({ opening_moves: 2 }).reset(seed);
      expect(marks(reset)).toBe(2);
      expect(reset.seat).toBe(0);
      expect(newGame({ opening_moves: 2 }).reset(seed).observation).toBe(reset.observation);
      starts.add(reset.observation);
    }
    expect(starts.size).toBeGreaterThan(10);
    expect(marks(newGame().reset(3))).toBe(0);
  });

  test('opening_moves: [least, most] draws each game its count in the range, by the seed; a range backwards or past 4 is refused', () => {
    const counts = new Map<number, number>();
    for (let seed = 0; seed < 200; seed++) {
      const reset = newGame({ opening_moves: [0, 4] }).reset(seed);
      const count = marks(reset);
      counts.set(count, (counts.get(count) ?? 0) + 1);
      expect(reset.seat).toBe(count % 2);
      expect(newGame({ opening_moves: [0, 4] }).reset(seed).observation).toBe(reset.observation);
    }
    expect([...counts.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    for (const count of counts.values()) expect(count).toBeGreaterThan(20);
    expect(marks(newGame({ opening_moves: [3, 3] }).reset(7))).toBe(3);
    expect(ticTacToePlugin.config.safeParse({ opening_moves: [3, 1] }).success).toBe(false);
    expect(ticTacToePlugin.config.safeParse({ opening_moves: [0, 5] }).success).toBe(false);
    expect(ticTacToePlugin.config.safeParse({ opening_moves: 5 }).success).toBe(false);
  });
});

describe('tic_tac_toe notes', () => {
  test('completingCells are the free cells where a mark wins at once, for both marks on every reachable board', () => {
    for (const b of REACHABLE.values()) {
      if (isOver(b)) continue;
      for (const mark of PLAYER_MARKS) expect(completingCells(b, mark)).toEqual(winningCells(b, mark));
    }
  });

  test("the notes read where each seat would complete a line, the mover first, in its prompt's marks", () => {
    const compact = newGame({ prompt_style: 'compact' });
    // O to move (O at 0 and 4, X at 2 and 8): X completes 2-5-8 at 5, O completes nothing
    compact.reset(1, undefined, { episode: { board: 'O.X.O...X' } });
    expect(compact.stateNotes()).toBe('#- *5');
    // O blocks at 5; now X to move, and O completes 3-4-5 at 3
    compact.step('[5]');
    expect(compact.stateNotes()).toBe('#- *3');
    const textarena = newGame();
    textarena.reset(1, undefined, { episode: { board: 'O.X.O...X' } });
    expect(textarena.stateNotes()).toBe('O- X5');
    textarena.reset(1, undefined, { episode: { board: 'OO.XX....' } });
    expect(textarena.stateNotes()).toBe('O2 X5');
  });
});

describe('tic_tac_toe picture', () => {
  test('a 60x60 RGB frame that shows the marks, a cross unlike a ring', () => {
    const empty = ticTacToePicture(emptyBoard());
    expect(empty.width).toBe(60);
    expect(empty.height).toBe(60);
    expect(empty.data.length).toBe(empty.width * empty.height * 3);
    const played = ticTacToePicture(afterMoves([4, 0]));
    expect(played.data.length).toBe(empty.data.length);
    expect(Buffer.from(played.data).equals(Buffer.from(empty.data))).toBe(false);
    expect(Buffer.from(ticTacToePicture(afterMoves([4, 0])).data).equals(Buffer.from(played.data))).toBe(true);
    const cross = Buffer.from(ticTacToePicture(board('X........')).data);
    expect(cross.equals(Buffer.from(ticTacToePicture(board('O........')).data))).toBe(false);
  });
});
