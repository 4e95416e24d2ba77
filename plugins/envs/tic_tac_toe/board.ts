/**
 * TicTacToe boards and moves, as TextArena's TicTacToe-v0 plays them (read at
 * LeonGuertler/TextArena, textarena/envs/TicTacToe/env.py, last changed in commit
 * a02af70b08482c319b2a7ce202b2b5f75851a9e0; turn order from textarena/state.py and
 * textarena/core.py, reply formatting from textarena/wrappers/ActionWrappers/action_formatting_wrapper.py).
 *
 * Player 0 is 'O' and moves first (TextArena's state starts at player 0); player 1 is 'X'. A move
 * names a cell 0-8, row by row from the top left, in square brackets: `[4]` is the centre.
 */

export type Mark = 'X' | 'O';
/** Nine cells, row by row from the top left; null where no mark is. */
export type Board = readonly (Mark | null)[];

/** The marks by TextArena player id. */
export const PLAYER_MARKS = ['O', 'X'] as const satisfies readonly Mark[];
export const FIRST_MARK: Mark = PLAYER_MARKS[0];
const SECOND_MARK: Mark = PLAYER_MARKS[1];

const SIDE = 3;
const CELLS = SIDE * SIDE;
const LINES = [
  [0, 1, 2],
  [3, 4, 5],
  [6, 7, 8],
  [0, 3, 6],
  [1, 4, 7],
  [2, 5, 8],
  [0, 4, 8],
  [2, 4, 6],
] as const;

export function emptyBoard(): Board {
  return Array.from({ length: CELLS }, () => null);
}

/** The mark that holds a whole row, column or diagonal, or null. */
export function winner(board: Board): Mark | null {
  for (const [a, b, c] of LINES) {
    const mark = board[a];
    if (mark && board[b] === mark && board[c] === mark) return mark;
  }
  return null;
}

/** The free cells where a mark of `mark` would complete a row, column or diagonal, in order. */
export function completingCells(board: Board, mark: Mark): number[] {
  const lines: readonly (readonly number[])[] = LINES;
  return legalMoves(board).filter((cell) => lines.some((line) => line.includes(cell) && line.every((at) => at === cell || board[at] === mark)));
}

export function isFull(board: Board): boolean {
  return board.every((mark) => mark !== null);
}

/** Someone has three in a row, or no cell is left: TextArena's win and draw. */
export function isOver(board: Board): boolean {
  return winner(board) !== null || isFull(board);
}

/** The first mark when both have made as many moves, else the second. */
export function toMove(board: Board): Mark {
  const firsts = board.filter((mark) => mark === FIRST_MARK).length;
  const seconds = board.filter((mark) => mark === SECOND_MARK).length;
  return firsts === seconds ? FIRST_MARK : SECOND_MARK;
}

/** The empty cells in ascending order; none once the game is over. */
export function legalMoves(board: Board): number[] {
  if (isOver(board)) return [];
  return board.flatMap((mark, cell) => (mark === null ? [cell] : []));
}

/** The board after `mark` takes `cell`; throws unless the cell is a legal move and it is `mark`'s turn. */
export function play(board: Board, cell: number, mark: Mark): Board {
  if (!legalMoves(board).includes(cell)) throw new Error(`cell ${cell} is not a legal move on ${boardString(board)}`);
  if (mark !== toMove(board)) throw new Error(`it is ${toMove(board)}'s turn, not ${mark}'s, on ${boardString(board)}`);
  return board.map((old, at) => (at === cell ? mark : old));
}

/**
 * The board as TextArena shows it to the players: each cell is its mark, or its number while
 * empty, between single spaces; cells split by '|', rows by '---+---+---'.
 */
export function boardText(board: Board): string {
  const rows: string[] = [];
  for (let row = 0; row < SIDE; row++) {
    const cells = board.slice(row * SIDE, (row + 1) * SIDE).map((mark, col) => ` ${mark ?? row * SIDE + col} `);
    rows.push(cells.join('|'));
  }
  return rows.join('\n---+---+---\n');
}

/** TextArena's move regex: a number in square brackets, spaces allowed inside. */
export const CELL_PATTERN = /\[\s*(\d+)\s*\]/;

/**
 * The cell number a reply names, or null where it names none (TextArena's "does not follow the
 * correct format"). As TicTacToe-v0 reads it: a reply with neither '[' nor ']' is first wrapped in
 * brackets (its ActionFormattingWrapper, so a bare "4" is [4]), then the FIRST match of the pattern
 * counts (Python's re.search), its last group holding the number (else null). The number is not checked
 * against the board: one outside 0-8 or on a taken cell is TextArena's other invalid move.
 */
export function parseCell(response: string, pattern: string | RegExp = CELL_PATTERN): number | null {
  const text = response.includes('[') || response.includes(']') ? response : `[${response}]`;
  const match = (typeof pattern === 'string' ? new RegExp(pattern, 's') : pattern).exec(text);
  const digits = match?.[match.length - 1]?.trim();
  return digits !== undefined && /^\d+$/.test(digits) ? Number(digits) : null;
}

const EMPTY_SYMBOL = '.';

/** One character a cell, row by row: 'X', 'O' or '.' for an empty cell ("X.O......"). */
export function boardString(board: Board): string {
  return board.map((mark) => mark ?? EMPTY_SYMBOL).join('');
}

/** The board that `boardString` writes as `text`. */
export function boardFromString(text: string): Board {
  if (!new RegExp(`^[XO${EMPTY_SYMBOL}]{${CELLS}}$`).test(text)) throw new Error(`not a board: "${text}" (want ${CELLS} of X, O, ${EMPTY_SYMBOL})`);
  return [...text].map((symbol) => (symbol === EMPTY_SYMBOL ? null : (symbol as Mark)));
}
