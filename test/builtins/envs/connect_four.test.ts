import { describe, expect, test } from 'bun:test';
import connectFourPlugin from '../../../plugins/envs/connect_four';
import {
  type Board,
  boardFromString,
  boardString,
  boardText,
  type Disc,
  dropWins,
  emptyBoard,
  FIRST_DISC,
  isFull,
  isOver,
  landingRow,
  legalMoves,
  PLAYER_DISCS,
  parseColumn,
  play,
  toMove,
  winner,
} from '../../../plugins/envs/connect_four/board';
import { heuristicChoices, heuristicColumn, safeColumns, winningColumns } from '../../../plugins/envs/connect_four/heuristic';
import { connectFourPicture } from '../../../plugins/envs/connect_four/render';
import { checkEnv } from '../../../src/cli/plugins_check';
import { Rng } from '../../../src/engine/rng';
import { PluginHost } from '../../../src/host/plugin_host';
import { defaultTokenizer } from '../../../src/model/default_tokenizer';
import type { RenderMode, ResetOptions, RgbFrame, SeatedResetResult, SeatedStepResult } from '../../../src/sdk/types';

const context = new PluginHost().envContext();

/** The env's class as the tests drive it: synchronous, with its opponent. */
interface ConnectFourGame {
  reset(seed: number, draw?: undefined, options?: ResetOptions): SeatedResetResult;
  step(response: string): SeatedStepResult;
  render(mode: RenderMode): string | RgbFrame;
  sampleRandomAction(): string;
  opponentAction(name: string): string;
}

function newGame(config: Record<string, unknown> = {}): ConnectFourGame {
  return new connectFourPlugin.env(connectFourPlugin.config.parse(config), context) as unknown as ConnectFourGame;
}

const other = (disc: Disc): Disc => (disc === 'X' ? 'O' : 'X');
/** The board after the given columns are played in turn from the empty one. */
const afterMoves = (columns: number[], start: Board = emptyBoard()) => columns.reduce((b, column) => play(b, column, toMove(b)), start);
/** A board from its rows, top first. */
const rows = (...lines: string[]) => boardFromString(lines.join('/'));

/** `count` positions of random games not yet over, each after a random number of random moves. */
function randomPositions(count: number, seed: number): Board[] {
  const rng = Rng.fromSeed(seed, 'connect_four_test');
  const positions: Board[] = [];
  while (positions.length < count) {
    let board = emptyBoard();
    const length = rng.int(40);
    for (let i = 0; i < length && !isOver(board); i++) board = play(board, rng.choice(legalMoves(board)), toMove(board));
    if (!isOver(board)) positions.push(board);
  }
  return positions;
}

/**
 * A full board without four (the two-column bands "XXOOXXO", flipped every row): no row holds
 * three alike, every column alternates, and no diagonal does the four-step a-b-a-b it would need.
 */
const DRAWN_ROWS = ['XXOOXXO', 'OOXXOOX', 'XXOOXXO', 'OOXXOOX', 'XXOOXXO', 'OOXXOOX'];

describe('connect_four board', () => {
  test("TextArena's numbering: player 0 is X and moves first, player 1 is O; 6 rows of 7 columns", () => {
    expect(PLAYER_DISCS).toEqual(['X', 'O']);
    expect(FIRST_DISC).toBe('X');
    const board = emptyBoard();
    expect([board.rows, board.columns]).toEqual([6, 7]);
    expect(toMove(board)).toBe('X');
    expect(toMove(afterMoves([3]))).toBe('O');
    expect(toMove(afterMoves([3, 3]))).toBe('X');
  });

  test('a disc falls to the lowest empty cell, and discs stack; play leaves the old board as it was', () => {
    const before = afterMoves([3]);
    expect(boardString(before)).toBe('......./......./......./......./......./...X...');
    const after = afterMoves([3, 3, 4, 3], before);
    // column 3 from the bottom: X, O, X, X; column 4: O
    expect(boardString(after)).toBe('......./......./...X.../...X.../...O.../...XO..');
    expect(boardString(before)).toBe('......./......./......./......./......./...X...');
    expect(landingRow(after, 3)).toBe(1);
    expect(landingRow(after, 0)).toBe(5);
  });

  test('a full column is refused; play throws on it, off the board, and out of turn', () => {
    const full = afterMoves([0, 0, 0, 0, 0, 0]);
    expect(landingRow(full, 0)).toBeNull();
    expect(legalMoves(full)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(winner(full)).toBeNull();
    expect(() => play(full, 0, 'X')).toThrow('not a legal move');
    expect(() => play(full, 7, 'X')).toThrow('not a legal move');
    expect(() => play(full, -1, 'X')).toThrow('not a legal move');
    expect(() => play(full, 1, 'O')).toThrow("it is X's turn");
  });

  test('four in a row wins horizontally, vertically and along both diagonals, for either disc', () => {
    const horizontal = afterMoves([0, 0, 1, 1, 2, 2, 3]);
    const vertical = afterMoves([6, 5, 6, 5, 6, 5, 6]);
    // X climbs to the right: (5,0) (4,1) (3,2) (2,3); O fills under it
    const rising = afterMoves([0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3]);
    // the mirror image climbs to the left
    const falling = afterMoves([6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3]);
    for (const board of [horizontal, vertical, rising, falling]) {
      expect(winner(board)).toBe('X');
      expect(isOver(board)).toBe(true);
      expect(legalMoves(board)).toEqual([]);
      const swapped = boardFromString(boardString(board).replaceAll('X', 'x').replaceAll('O', 'X').replaceAll('x', 'O'));
      expect(winner(swapped)).toBe('O');
    }
    expect(winner(afterMoves([0, 0, 1, 1, 2, 2]))).toBeNull();
  });

  test('no false wins: a line does not run on across the edge of a row or a column', () => {
    // row by row the cells 4, 5, 6 of one row and 0 of the next are neighbours in memory, not on the board
    expect(winner(rows('.......', '.......', '.......', '.......', 'X......', 'O...XXX'))).toBeNull();
    // the same across the diagonal's edges: (5,5) (4,6) then (3,0) (2,1)
    expect(winner(rows('.......', '.......', '.X.....', 'X......', 'O.....X', 'O....X.'))).toBeNull();
    // and down a column into the next one: (3,6) (4,6) (5,6) then (0,0)
    expect(winner(rows('X......', '.......', '.......', '......X', '......X', '......X'))).toBeNull();
    expect(winner(rows('.......', '.......', '.......', '.......', '.......', 'XXX.XXX'))).toBeNull();
  });

  test("dropWins is TextArena's check through the new disc, and agrees with winner on random positions", () => {
    for (const board of randomPositions(300, 1)) {
      const mover = toMove(board);
      for (const column of legalMoves(board)) expect(dropWins(board, column, mover)).toBe(winner(play(board, column, mover)) === mover);
    }
  });

  test('a full board without four is a draw', () => {
    const drawn = rows(...DRAWN_ROWS);
    expect(winner(drawn)).toBeNull();
    expect(isFull(drawn)).toBe(true);
    expect(isOver(drawn)).toBe(true);
    expect(legalMoves(drawn)).toEqual([]);
  });

  test("the board text is TextArena's: column numbers, dashes, then rows of '.', X and O between spaces", () => {
    const lines = boardText(afterMoves([3, 3, 0])).split('\n');
    expect(lines).toEqual(['0 1 2 3 4 5 6', '-------------', ...Array(4).fill('. . . . . . .'), '. . . O . . .', 'X . . X . . .']);
  });

  test('boards read and write as strings; anything else is refused', () => {
    const text = '......./......./......./......./...O.../X..X...';
    expect(boardString(boardFromString(text))).toBe(text);
    expect(boardFromString('XO/..')).toEqual({ rows: 2, columns: 2, cells: ['X', 'O', null, null] });
    for (const junk of ['', 'X./...', 'x......', 'XO/.-']) expect(() => boardFromString(junk)).toThrow('not a board');
  });

  test('parseColumn reads a column as ConnectFour-v0 does: [3] or [col 3], the last match of the first line that has one', () => {
    expect(parseColumn('[3]')).toBe(3);
    expect(parseColumn('[col 4]')).toBe(4);
    expect(parseColumn('[COL5]')).toBe(5);
    expect(parseColumn('I drop it in the middle: [3].')).toBe(3);
    expect(parseColumn('[2] or better [5]')).toBe(5);
    expect(parseColumn('[2]\nno, [5]')).toBe(2);
    expect(parseColumn('thinking...\n[col 1] and [6]\n[0]')).toBe(6);
    expect(parseColumn('[12]')).toBe(12);
    // a reply with no bracket at all is bracketed first (TextArena's ActionFormattingWrapper)
    expect(parseColumn('3')).toBe(3);
    expect(parseColumn('col 3')).toBe(3);
    for (const junk of ['', 'middle', '[middle]', 'I play 3]', '[3', '[ 3 ]', '[-1]', '[3.5]', '3.', ' 3\n', '(3)']) expect(parseColumn(junk)).toBeNull();
  });
});

describe('connect_four heuristic', () => {
  test('it wins at once when it can, else blocks the other, else keeps off the columns that hand over a win, centre first', () => {
    let wins = 0;
    let blocks = 0;
    let avoided = 0;
    for (const board of randomPositions(3000, 2)) {
      const mover = toMove(board);
      const choices = heuristicChoices(board);
      const winning = winningColumns(board, mover);
      const threats = winningColumns(board, other(mover));
      const safe = safeColumns(board);
      const preferred = winning.length > 0 ? winning : threats.length > 0 ? threats : safe.length > 0 ? safe : legalMoves(board);
      for (const column of choices) expect(preferred).toContain(column);
      // centre-most: no preferred column lies nearer the middle than a choice
      const distance = (column: number) => Math.abs(column - 3);
      for (const column of preferred) expect(distance(column)).toBeGreaterThanOrEqual(distance(choices[0]!));
      if (winning.length > 0) wins++;
      else if (threats.length > 0) blocks++;
      else if (safe.length < legalMoves(board).length) avoided++;
    }
    // the random positions reach every branch often
    expect(Math.min(wins, blocks, avoided)).toBeGreaterThan(50);
  });

  test('in set positions: it completes its own four rather than block, blocks a single threat, and keeps off the cell under a threat', () => {
    // X to move: X has three on the bottom row (0-2), O three up column 6
    expect(heuristicChoices(afterMoves([0, 6, 1, 6, 2, 6]))).toEqual([3]);
    // O to move must block X's three on the bottom row (1-3): at 0 or 4, the nearer the middle
    const open = afterMoves([1, 1, 2, 2, 3]);
    expect(winningColumns(open, 'X')).toEqual([0, 4]);
    expect(heuristicChoices(open)).toEqual([4]);
    // X's three on the second row wants (4,3): a disc in column 3 would land under it and let X in
    const underThreat = rows('.......', '.......', '.......', '.......', 'XXX....', 'OXO.O..');
    expect(toMove(underThreat)).toBe('O');
    expect(winningColumns(underThreat, 'X')).toEqual([]);
    expect(winningColumns(underThreat, 'O')).toEqual([]);
    expect(safeColumns(underThreat)).toEqual([0, 1, 2, 4, 5, 6]);
    expect(heuristicChoices(underThreat)).toEqual([2, 4]);
  });

  test('the heuristic beats the random player in most games, in either seat', () => {
    const game = newGame();
    let heuristicWins = 0;
    for (let seed = 0; seed < 100; seed++) {
      const heuristicSeat = seed % 2;
      game.reset(seed);
      let step: SeatedStepResult;
      let mover = 0;
      do {
        step = game.step(mover === heuristicSeat ? game.opponentAction('heuristic') : game.sampleRandomAction());
        mover = step.seat;
      } while (!step.terminated);
      if (step.outcome![heuristicSeat] === 'win') heuristicWins++;
    }
    expect(heuristicWins).toBeGreaterThan(90);
  });

  test('the env plays it in both seats with valid moves, ties drawn by its seed; another name is refused', () => {
    const game = newGame();
    const games = new Set<string>();
    for (let seed = 0; seed < 10; seed++) {
      game.reset(seed);
      let step: SeatedStepResult;
      const moves: string[] = [];
      do {
        moves.push(game.opponentAction('heuristic'));
        step = game.step(moves.at(-1)!);
        expect(step.info.metrics.action_is_valid).toBe(true);
      } while (!step.terminated);
      games.add(moves.join(''));
    }
    expect(games.size).toBeGreaterThan(1);
    expect(() => game.opponentAction('minimax')).toThrow("no opponent 'minimax'");
    expect(() => heuristicColumn(rows(...DRAWN_ROWS))).toThrow('the game is over');
  });
});

/** Plays random moves to the end; every step's rewards, the last one's included. */
function randomGame(game: ConnectFourGame, seed: number): SeatedStepResult[] {
  game.reset(seed);
  const steps: SeatedStepResult[] = [];
  do steps.push(game.step(game.sampleRandomAction()));
  while (!steps.at(-1)!.terminated);
  return steps;
}

describe('connect_four env', () => {
  test("the textarena style: TextArena's instruction per seat, the board state, each drop told", () => {
    const game = newGame();
    const reset = game.reset(0);
    expect(reset.seat).toBe(0);
    expect(reset.instructions).toHaveLength(2);
    expect(reset.instructions[0]).toStartWith('You are Player 0 in Connect Four.\nYour disc symbol: X.\nThe game board has 6 rows and 7 columns.');
    expect(reset.instructions[1]).toContain(
      'Your disc symbol: O.\nThe game board has 6 rows and 7 columns.\nPlayers take turns dropping their disc into one of the columns (0 to 6).',
    );
    expect(reset.instructions[1]).toEndWith(
      "On your turn, enter the column number in squared brackets to make your move.\nFor example: '[col 4]' or '[col 1]'.",
    );
    expect(reset.observation).toBe(`Board state:\n${boardText(emptyBoard())}`);
    const first = game.step('I take the middle: [col 3]');
    expect(first.seat).toBe(1);
    expect(first.info.action).toBe('[3]');
    expect(first.observation).toBe(`Player 0 dropped their disk (X) into column 3.\nBoard state:\n${boardText(afterMoves([3]))}`);
    const second = game.step('[3]');
    expect(second.seat).toBe(0);
    expect(second.observation).toBe(`Player 1 dropped their disk (O) into column 3.\nBoard state:\n${boardText(afterMoves([3, 3]))}`);
    expect(game.render('text')).toBe(boardText(afterMoves([3, 3])));
  });

  test('the compact style: a short instruction and the board as six lines, one character a cell, column 0 on the left', () => {
    const game = newGame({ prompt_style: 'compact' });
    const reset = game.reset(0);
    expect(reset.instructions).toEqual([
      'You are X, against O. Four in a row wins. Answer with a column 0-6, e.g. [3].',
      'You are O, against X. Four in a row wins. Answer with a column 0-6, e.g. [3].',
    ]);
    expect(reset.observation).toBe(Array(6).fill('.......').join('\n'));
    game.step('[3]');
    game.step('[3]');
    expect(game.step('[0]').observation).toBe(['.......', '.......', '.......', '.......', '...O...', 'X..X...'].join('\n'));
    expect(game.step('[9]').observation).toBe(['Not an open column; once more.', '.......', '.......', '.......', '.......', '...O...', 'X..X...'].join('\n'));
  });

  test('the compact style takes about 80 tokens a turn with the built-in tokenizer (instruction and board)', () => {
    const tokenizer = defaultTokenizer();
    const game = newGame({ prompt_style: 'compact' });
    const counts: number[] = [];
    for (let seed = 0; seed < 20; seed++) {
      const reset = game.reset(seed);
      let [observation, seat] = [reset.observation, reset.seat];
      for (;;) {
        counts.push(tokenizer.encode(`${reset.instructions[seat]}\n${observation}`).length);
        const step = game.step(game.sampleRandomAction());
        if (step.terminated) break;
        [observation, seat] = [step.observation, step.seat];
      }
    }
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(75);
    expect(Math.max(...counts)).toBeLessThanOrEqual(86);
  });

  test('the blind variant (is_open: false) shows no board: TextArena tells the drops, compact lists the moves', () => {
    const blind = newGame({ is_open: false });
    expect(blind.reset(0).observation).toBe('The game board is not visible to players.');
    expect(blind.step('[3]').observation).toBe('Player 0 dropped their disk (X) into column 3.');
    const compact = newGame({ is_open: false, prompt_style: 'compact' });
    const reset = compact.reset(0);
    expect(reset.observation).toBe('Moves: none');
    // no position to replay: the moves that tell a blind game are not in one
    expect(reset.info.episode).toBeUndefined();
    compact.step('[3]');
    expect(compact.step('[2]').observation).toBe('Moves: X [3], O [2]');
  });

  test("a bad move costs a retry (TextArena's error allowance of 1), the second in a row the game; a good one resets the count", () => {
    const game = newGame();
    game.reset(0);
    const retry = game.step('the middle');
    expect(retry.terminated).toBe(false);
    expect(retry.seat).toBe(0);
    expect(retry.rewards).toEqual([0, 0]);
    expect(retry.info.metrics.action_is_valid).toBe(false);
    expect(retry.observation).toStartWith(
      "Player 0 attempted an invalid move. Reason: Player 0, Invalid action format. Expected format: '[col x]'. Please resubmit a valid move",
    );
    expect(retry.observation).toEndWith(boardText(emptyBoard()));
    expect(game.step('[3]').seat).toBe(1);
    expect(game.step('[7]').observation).toContain('Reason: Player 1, Invalid action. Column 7 is out of bounds.');
    const lost = game.step('[8]');
    expect(lost.terminated).toBe(true);
    expect(lost.seat).toBe(1);
    expect(lost.reward).toBe(-1);
    expect(lost.rewards).toEqual([1, -1]);
    expect(lost.outcome).toEqual(['win', 'loss']);
    expect(lost.observation).toStartWith('Player 1 attempted an invalid move. Reason: Player 1, Invalid action. Column 8 is out of bounds.\nPlayer 0 has won!');
  });

  test('a full column is a bad move; error_allowance 0 loses at once, 2 allows two retries', () => {
    const game = newGame();
    game.reset(0);
    for (let i = 0; i < 6; i++) game.step('[0]');
    expect(game.step('[0]').observation).toContain('Reason: Player 0, Invalid action. Column 0 is full.');
    const strict = newGame({ error_allowance: 0 });
    strict.reset(0);
    expect(strict.step('?').outcome).toEqual(['loss', 'win']);
    const lenient = newGame({ error_allowance: 2 });
    lenient.reset(0);
    expect([lenient.step('?').terminated, lenient.step('?').terminated, lenient.step('?').terminated]).toEqual([false, false, true]);
  });

  test('four in a row ends the game: the winner +1, the other -1, as TextArena says it', () => {
    const game = newGame();
    game.reset(0);
    for (const column of [0, 0, 1, 1, 2, 2]) expect(game.step(`[${column}]`).rewards).toEqual([0, 0]);
    const won = game.step('[3]');
    expect(won.terminated).toBe(true);
    expect(won.seat).toBe(0);
    expect(won.reward).toBe(1);
    expect(won.rewards).toEqual([1, -1]);
    expect(won.outcome).toEqual(['win', 'loss']);
    expect(won.observation).toStartWith('Player 0 dropped their disk (X) into column 3.\nPlayer 0 wins by connecting four!');
  });

  test("a full board without four is a draw, 0 each (from a suite's position with one cell left)", () => {
    const game = newGame();
    // the drawn board with the top cell of column 2 (an O) left empty: O to move, and it must fill it
    const position = [DRAWN_ROWS[0]!.replace(/^XXO/, 'XX.'), ...DRAWN_ROWS.slice(1)].join('/');
    const reset = game.reset(0, undefined, { episode: { board: position } });
    expect(reset.seat).toBe(1);
    expect(reset.info.episode).toEqual({ board: position });
    const drawn = game.step('[2]');
    expect(drawn.terminated).toBe(true);
    expect(drawn.rewards).toEqual([0, 0]);
    expect(drawn.outcome).toEqual(['draw', 'draw']);
    expect(drawn.observation).toStartWith('Player 1 dropped their disk (O) into column 2.\nGame ended in a draw.');
  });

  test('a suite position that cannot arise, or is over, is refused', () => {
    const game = newGame();
    const refused = (board: unknown) => () => game.reset(0, undefined, { episode: { board } });
    expect(refused('XX/..')).toThrow('not 6 rows of 7');
    expect(refused('......./......./......./......./......./OO.....')).toThrow('cannot arise');
    expect(refused('......./......./......./......./X....../.......')).toThrow('cannot arise');
    expect(refused('......./......./......./......./OOO..../XXXX...')).toThrow('already over');
    expect(refused(7)).toThrow('a connect_four episode is');
    expect(() => newGame({ is_open: false }).reset(0, undefined, { episode: { board: boardString(emptyBoard()) } })).toThrow('blind');
  });

  test('random games are zero-sum and pay only at the end: +1/-1 or 0/0, with outcomes that agree', () => {
    const game = newGame();
    const endings = { win: 0, draw: 0 };
    for (let seed = 0; seed < 200; seed++) {
      const steps = randomGame(game, seed);
      for (const step of steps.slice(0, -1)) expect(step.rewards).toEqual([0, 0]);
      const last = steps.at(-1)!;
      expect(last.rewards[0]! + last.rewards[1]!).toBe(0);
      expect(last.reward).toBe(last.rewards[last.seat]!);
      expect(last.outcome).toEqual(last.rewards.map((reward) => (reward > 0 ? 'win' : reward < 0 ? 'loss' : 'draw')));
      expect(last.rewards[0] === 0 ? isFull(boardFromString(boardOf(game))) : true).toBe(true);
      endings[last.rewards[0] === 0 ? 'draw' : 'win']++;
    }
    expect(endings.win).toBeGreaterThan(150);
  });

  test('opening_moves starts from random moves that vary by seed and repeat for a seed; 7 is refused', () => {
    const game = newGame({ opening_moves: 3 });
    const starts = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const reset = game.reset(seed);
      const board = (reset.info.episode as { board: string }).board;
      expect(board.replaceAll(/[^XO]/g, '')).toHaveLength(3);
      expect(reset.seat).toBe(1);
      expect((game.reset(seed).info.episode as { board: string }).board).toBe(board);
      expect(newGame({ opening_moves: 3 }).reset(seed).observation).toBe(reset.observation);
      starts.add(board);
    }
    expect(starts.size).toBeGreaterThan(10);
    expect(newGame().reset(5).observation).toBe(newGame().reset(6).observation);
    expect(connectFourPlugin.config.safeParse({ opening_moves: 7 }).success).toBe(false);
    expect(connectFourPlugin.config.safeParse({ opening_moves: 4, num_rows: 1, num_cols: 4 }).success).toBe(false);
  });

  test('opening_moves: [least, most] draws each game its count in the range, by the seed; a backwards range, or one past 6 or the board, is refused', () => {
    const counts = new Set<number>();
    for (let seed = 0; seed < 60; seed++) {
      const reset = newGame({ opening_moves: [1, 3] }).reset(seed);
      const count = (reset.info.episode as { board: string }).board.replaceAll(/[^XO]/g, '').length;
      counts.add(count);
      expect(newGame({ opening_moves: [1, 3] }).reset(seed).observation).toBe(reset.observation);
    }
    expect([...counts].sort()).toEqual([1, 2, 3]);
    expect(connectFourPlugin.config.safeParse({ opening_moves: [3, 1] }).success).toBe(false);
    expect(connectFourPlugin.config.safeParse({ opening_moves: [0, 7] }).success).toBe(false);
    expect(connectFourPlugin.config.safeParse({ opening_moves: [0, 4], num_rows: 1, num_cols: 4 }).success).toBe(false);
  });

  test('another board size plays: its instruction, its text and its column range', () => {
    const game = newGame({ num_rows: 4, num_cols: 5 });
    const reset = game.reset(0);
    expect(reset.instructions[0]).toContain(
      'The game board has 4 rows and 5 columns.\nPlayers take turns dropping their disc into one of the columns (0 to 4).',
    );
    expect(reset.observation).toBe(`Board state:\n${boardText(emptyBoard(4, 5))}`);
    expect(game.step('[5]').observation).toContain('Column 5 is out of bounds.');
  });

  test('render: the text board and a picture of 7 x 6 cells that shows the discs, X unlike O', () => {
    const game = newGame();
    game.reset(0);
    const empty = game.render('rgb') as RgbFrame;
    expect([empty.width, empty.height]).toEqual([140, 120]);
    expect(empty.data.length).toBe(140 * 120 * 3);
    game.step('[3]');
    const played = game.render('rgb') as RgbFrame;
    expect(Buffer.from(played.data).equals(Buffer.from(empty.data))).toBe(false);
    const x = Buffer.from(connectFourPicture(rows('.......', 'X......')).data);
    expect(x.equals(Buffer.from(connectFourPicture(rows('.......', 'O......')).data))).toBe(false);
    expect(game.render('text')).toBe(boardText(afterMoves([3])));
  });

  test('agentic plugins check passes every check, the seated ones included, and skips none, in both prompt styles', async () => {
    for (const settings of [{}, { prompt_style: 'compact' }, { prompt_style: 'compact', is_open: false }]) {
      const report = await checkEnv(connectFourPlugin, settings, { context, episodes: 8, maxSteps: 42 });
      const failed = report.checks.filter((check) => check.status === 'fail');
      const skipped = report.checks.filter((check) => check.status === 'skip');
      expect(failed).toEqual([]);
      expect(skipped).toEqual([]);
      expect(report.checks.map((check) => check.name)).toContain('bad_answer');
      expect(report.passed).toBe(true);
    }
  });
});

/** The board a game shows in its text render, as a boardString. */
function boardOf(game: ConnectFourGame): string {
  const lines = String(game.render('text')).split('\n').slice(2);
  return lines.map((line) => line.replaceAll(' ', '')).join('/');
}
