/**
 * Connect Four boards and moves, as TextArena's ConnectFour-v0 plays them (read at
 * LeonGuertler/TextArena, textarena/envs/ConnectFour/env.py, commit
 * 580cbde278145d1d832ecd61290d1cb354fa06cf; its registration, `is_open=True, num_rows=6,
 * num_cols=7`, and its default wrappers from textarena/envs/__init__.py; turn order and the error
 * allowance from textarena/state.py, as tic_tac_toe/board.ts reads them).
 *
 * Player 0 is 'X' and moves first; player 1 is 'O'. A move names a column, 0 on the left, in
 * square brackets (`[3]`, or `[col 3]`); the disc falls to the lowest empty cell of that column.
 * Four of one's own discs in a row, column or diagonal win; a full board without four is a draw.
 */

export type Disc = 'X' | 'O';

/** A board of `rows` x `columns` cells, row by row from the top (TextArena's board[0] is the top row); null where no disc is. */
export interface Board {
  readonly rows: number;
  readonly columns: number;
  readonly cells: readonly (Disc | null)[];
}

/** The discs by TextArena player id. */
export const PLAYER_DISCS = ['X', 'O'] as const satisfies readonly Disc[];
export const FIRST_DISC: Disc = PLAYER_DISCS[0];
const SECOND_DISC: Disc = PLAYER_DISCS[1];

/** ConnectFour-v0's board: 6 rows of 7 columns. */
export const DEFAULT_ROWS = 6;
export const DEFAULT_COLUMNS = 7;
const LINE = 4;
/** The four ways a line runs, as (row, column) steps: along a row, down a column, and both diagonals. */
const DIRECTIONS = [
  [0, 1],
  [1, 0],
  [1, 1],
  [1, -1],
] as const;

export function emptyBoard(rows = DEFAULT_ROWS, columns = DEFAULT_COLUMNS): Board {
  return { rows, columns, cells: Array.from({ length: rows * columns }, () => null) };
}

export function discAt(board: Board, row: number, column: number): Disc | null {
  const inside = row >= 0 && row < board.rows && column >= 0 && column < board.columns;
  return inside ? board.cells[row * board.columns + column]! : null;
}

/** The lowest empty row of `column`, where a disc dropped into it comes to rest; null when the column is full. */
export function landingRow(board: Board, column: number): number | null {
  for (let row = board.rows - 1; row >= 0; row--) if (discAt(board, row, column) === null) return row;
  return null;
}

/** How many of `disc` run from (row, column) onwards by (dRow, dColumn), the start cell left out. */
function runLength(board: Board, row: number, column: number, dRow: number, dColumn: number, disc: Disc): number {
  let count = 0;
  while (discAt(board, row + dRow * (count + 1), column + dColumn * (count + 1)) === disc) count++;
  return count;
}

/**
 * Whether `disc` dropped into `column` would complete four in a line through the cell it lands on
 * (TextArena's win check, which counts both ways from the new disc); false for a full column.
 */
export function dropWins(board: Board, column: number, disc: Disc): boolean {
  const row = landingRow(board, column);
  if (row === null) return false;
  return DIRECTIONS.some(
    ([dRow, dColumn]) => 1 + runLength(board, row, column, dRow, dColumn, disc) + runLength(board, row, column, -dRow, -dColumn, disc) >= LINE,
  );
}

/** The disc that holds four in a line anywhere on the board, or null. */
export function winner(board: Board): Disc | null {
  for (let row = 0; row < board.rows; row++) {
    for (let column = 0; column < board.columns; column++) {
      const disc = discAt(board, row, column);
      if (disc && DIRECTIONS.some(([dRow, dColumn]) => runLength(board, row, column, dRow, dColumn, disc) >= LINE - 1)) return disc;
    }
  }
  return null;
}

/** Every column is full: TextArena's draw check, which reads the top row. */
export function isFull(board: Board): boolean {
  return board.cells.slice(0, board.columns).every((disc) => disc !== null);
}

/** Someone has four in a line, or the board is full: TextArena's win and draw. */
export function isOver(board: Board): boolean {
  return winner(board) !== null || isFull(board);
}

/** The first disc when both have dropped as many, else the second. */
export function toMove(board: Board): Disc {
  const firsts = board.cells.filter((disc) => disc === FIRST_DISC).length;
  const seconds = board.cells.filter((disc) => disc === SECOND_DISC).length;
  return firsts === seconds ? FIRST_DISC : SECOND_DISC;
}

/** The columns that are not full, ascending; none once the game is over. */
export function legalMoves(board: Board): number[] {
  if (isOver(board)) return [];
  return Array.from({ length: board.columns }, (_, column) => column).filter((column) => landingRow(board, column) !== null);
}

/** The board after `disc` drops into `column`; throws unless the column is a legal move and it is `disc`'s turn. */
export function play(board: Board, column: number, disc: Disc): Board {
  if (!legalMoves(board).includes(column)) throw new Error(`column ${column} is not a legal move on ${boardString(board)}`);
  if (disc !== toMove(board)) throw new Error(`it is ${toMove(board)}'s turn, not ${disc}'s, on ${boardString(board)}`);
  const at = landingRow(board, column)! * board.columns + column;
  return { ...board, cells: board.cells.map((old, cell) => (cell === at ? disc : old)) };
}

const EMPTY_SYMBOL = '.';

function rowSymbols(board: Board, row: number): string[] {
  return Array.from({ length: board.columns }, (_, column) => discAt(board, row, column) ?? EMPTY_SYMBOL);
}

/**
 * The board as TextArena shows it to the players: the column numbers, a line of dashes, then each
 * row from the top, every cell its disc or '.', between single spaces.
 */
export function boardText(board: Board): string {
  const numbers = Array.from({ length: board.columns }, (_, column) => String(column)).join(' ');
  const rows = Array.from({ length: board.rows }, (_, row) => rowSymbols(board, row).join(' '));
  return [numbers, '-'.repeat(board.columns * 2 - 1), ...rows].join('\n');
}

/** TextArena's move pattern: a column number in square brackets, optionally after `col` (any case). */
export const COLUMN_PATTERN = /\[(?:col\s*)?(\d+)\]/i;

/**
 * The column a reply names, or null where it names none (TextArena's "Invalid action format").
 * As ConnectFour-v0 reads it: a reply with neither '[' nor ']' is first wrapped in brackets (its
 * ActionFormattingWrapper, so a bare "3" is [3] and "col 3" is [col 3]); then Python's
 * `re.search('.*\[(?:col\s*)?(\d+)\].*')`, whose greedy lead that stops at a line break takes the
 * LAST match on the first line that has one. The number is not checked against the board: one
 * outside it, or a full column, is TextArena's other invalid move.
 */
export function parseColumn(response: string): number | null {
  const text = response.includes('[') || response.includes(']') ? response : `[${response}]`;
  let chosen: RegExpExecArray | null = null;
  for (const match of text.matchAll(new RegExp(COLUMN_PATTERN.source, 'gi'))) {
    const line = lineOf(text, match.index);
    if (chosen !== null && line !== lineOf(text, chosen.index)) break;
    chosen = match;
  }
  return chosen === null ? null : Number(chosen[1]);
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length - 1;
}

/** One character a cell, the rows from the top split by '/': 'X', 'O' or '.' ("......./.../...XO.."). */
export function boardString(board: Board): string {
  return Array.from({ length: board.rows }, (_, row) => rowSymbols(board, row).join('')).join('/');
}

/** The board that `boardString` writes as `text`: rows of equal length, each cell X, O or '.'. */
export function boardFromString(text: string): Board {
  const rows = text.split('/');
  const columns = rows[0]!.length;
  if (columns === 0 || rows.some((row) => row.length !== columns || !new RegExp(`^[XO${EMPTY_SYMBOL}]+$`).test(row))) {
    throw new Error(`not a board: "${text}" (want rows of equal length split by '/', each cell X, O or ${EMPTY_SYMBOL})`);
  }
  const cells = [...rows.join('')].map((symbol) => (symbol === EMPTY_SYMBOL ? null : (symbol as Disc)));
  return { rows: rows.length, columns, cells };
}

/** Whether every disc rests on the bottom or on another disc, as dropped discs do. */
export function isSettled(board: Board): boolean {
  for (let row = 0; row < board.rows - 1; row++) {
    for (let column = 0; column < board.columns; column++) {
      if (discAt(board, row, column) !== null && discAt(board, row + 1, column) === null) return false;
    }
  }
  return true;
}
