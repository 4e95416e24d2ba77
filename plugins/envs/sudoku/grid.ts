/**
 * Making a Sudoku the way GEM does: fill a whole grid by seeded backtracking, then try emptying
 * cells in a seeded order, keeping each removal only while the puzzle still has one solution. So
 * every puzzle has a unique solution, and a placement is right exactly when it matches the grid.
 */
import type { Rng } from 'agentic';

/** Cells row by row, 0 for empty; `scale` is the side (4 or 9), its square root the box side. */
export interface Grid {
  scale: number;
  cells: number[];
}

export interface Puzzle {
  solution: Grid;
  givens: Grid;
}

/**
 * A puzzle with a unique solution: GEM's _generate_board. `removals` is how many cells it tries to
 * empty (GEM's `clues`), in a random order; one is left filled when emptying it would admit a
 * second solution.
 */
export function makePuzzle(scale: number, removals: number, rng: Rng): Puzzle {
  const solution = { scale, cells: new Array<number>(scale * scale).fill(0) };
  fill(solution, rng);
  const givens = { scale, cells: solution.cells.slice() };
  const order = rng.shuffle(Array.from({ length: scale * scale }, (_, i) => i));
  for (const cell of order.slice(order.length - removals).reverse()) {
    const kept = givens.cells[cell]!;
    givens.cells[cell] = 0;
    if (countSolutions({ scale, cells: givens.cells.slice() }, 2) !== 1) givens.cells[cell] = kept;
  }
  return { solution, givens };
}

/** Whether `digit` can go in `cell`: its row, column and box do not hold it yet. */
export function fits(grid: Grid, cell: number, digit: number): boolean {
  const { scale, cells } = grid;
  const box = Math.sqrt(scale);
  const row = Math.floor(cell / scale);
  const col = cell % scale;
  const top = row - (row % box);
  const left = col - (col % box);
  for (let i = 0; i < scale; i++) {
    if (cells[row * scale + i] === digit || cells[i * scale + col] === digit) return false;
    if (cells[(top + Math.floor(i / box)) * scale + left + (i % box)] === digit) return false;
  }
  return true;
}

/** Fills the empty cells in row-major order, each trying the digits in a fresh random order. */
function fill(grid: Grid, rng: Rng): boolean {
  const cell = grid.cells.indexOf(0);
  if (cell < 0) return true;
  for (const digit of rng.shuffle(Array.from({ length: grid.scale }, (_, i) => i + 1))) {
    if (!fits(grid, cell, digit)) continue;
    grid.cells[cell] = digit;
    if (fill(grid, rng)) return true;
  }
  grid.cells[cell] = 0;
  return false;
}

/** Solutions of `grid`, counted up to `limit` (the grid is changed and restored on the way). */
function countSolutions(grid: Grid, limit: number): number {
  // The most constrained empty cell first: the count is the same, the search far shorter.
  let best = -1;
  let bestDigits: number[] = [];
  for (let cell = 0; cell < grid.cells.length; cell++) {
    if (grid.cells[cell] !== 0) continue;
    const digits = candidates(grid, cell);
    if (best < 0 || digits.length < bestDigits.length) [best, bestDigits] = [cell, digits];
    if (digits.length === 0) return 0;
  }
  if (best < 0) return 1;
  let found = 0;
  for (const digit of bestDigits) {
    grid.cells[best] = digit;
    found += countSolutions(grid, limit - found);
    if (found >= limit) break;
  }
  grid.cells[best] = 0;
  return found;
}

/** The digits that fit in `cell`, smallest first. */
function candidates(grid: Grid, cell: number): number[] {
  return Array.from({ length: grid.scale }, (_, i) => i + 1).filter((digit) => fits(grid, cell, digit));
}
