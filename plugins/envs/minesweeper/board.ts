/** A Minesweeper board: mines laid after the first reveal, the flood of a reveal, and GEM's drawing of it. */
import type { Rng } from 'agentic';

const NEIGHBOURS = [
  [-1, -1],
  [-1, 0],
  [-1, 1],
  [0, -1],
  [0, 1],
  [1, -1],
  [1, 0],
  [1, 1],
] as const;

/** What a cell holds: a mine, or the count of mines around it. */
const MINE = -1;

export class Board {
  /** MINE or the number of adjacent mines, row by row; all 0 until the mines are laid. */
  readonly cells: number[][];
  readonly revealed: boolean[][];
  readonly flags: boolean[][];
  minesLaid = false;

  constructor(
    readonly rows: number,
    readonly cols: number,
    readonly mines: number,
  ) {
    const grid = <T>(value: T) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => value));
    this.cells = grid(0);
    this.revealed = grid(false);
    this.flags = grid(false);
  }

  inside(row: number, col: number): boolean {
    return row >= 0 && row < this.rows && col >= 0 && col < this.cols;
  }

  isMine(row: number, col: number): boolean {
    return this.cells[row]![col] === MINE;
  }

  /** Lays the mines anywhere but the 3x3 block around the first cell revealed, as GEM does, so the first reveal is safe. */
  layMines(safeRow: number, safeCol: number, rng: Rng): void {
    const allowed: Array<[number, number]> = [];
    for (let r = 0; r < this.rows; r++) {
      for (let c = 0; c < this.cols; c++) if (Math.abs(r - safeRow) > 1 || Math.abs(c - safeCol) > 1) allowed.push([r, c]);
    }
    for (const [r, c] of rng.shuffle(allowed).slice(0, this.mines)) this.cells[r]![c] = MINE;
    for (let r = 0; r < this.rows; r++) {
      for (let c = 0; c < this.cols; c++) {
        if (this.cells[r]![c] !== MINE) this.cells[r]![c] = this.around(r, c).filter(([nr, nc]) => this.isMine(nr, nc)).length;
      }
    }
    this.minesLaid = true;
  }

  private around(row: number, col: number): Array<[number, number]> {
    return NEIGHBOURS.map(([dr, dc]): [number, number] => [row + dr, col + dc]).filter(([r, c]) => this.inside(r, c));
  }

  /** Reveals a safe cell and, through cells with no mine around, all it floods (flags stop it); returns how many cells it revealed. */
  reveal(row: number, col: number): number {
    this.revealed[row]![col] = true;
    let count = 1;
    const queue: Array<[number, number]> = [[row, col]];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [r, c] = next;
      if (this.cells[r]![c] !== 0) continue;
      for (const [nr, nc] of this.around(r, c)) {
        if (this.revealed[nr]![nc] || this.flags[nr]![nc]) continue;
        this.revealed[nr]![nc] = true;
        count++;
        queue.push([nr, nc]);
      }
    }
    return count;
  }

  /** GEM's win: every safe cell revealed and every mine flagged. */
  solved(): boolean {
    return this.cells.every((row, r) => row.every((cell, c) => (cell === MINE ? this.flags[r]![c] : this.revealed[r]![c])));
  }

  /** GEM's drawing: column numbers on top, row numbers on the left, '.' hidden, 'F' flagged, counts revealed. */
  text(): string {
    let text = `   ${Array.from({ length: this.cols }, (_, c) => String(c).padStart(2)).join(' ')}\n`;
    for (let r = 0; r < this.rows; r++) {
      let line = `${String(r).padStart(2)} `;
      for (let c = 0; c < this.cols; c++) {
        if (this.revealed[r]![c]) line += this.isMine(r, c) ? ' * ' : ` ${this.cells[r]![c]} `;
        else line += this.flags[r]![c] ? ' F ' : ' . ';
      }
      text += `${line}\n`;
    }
    return text;
  }
}
