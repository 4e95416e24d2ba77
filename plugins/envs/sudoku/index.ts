/**
 * GEM's Sudoku (game:Sudoku-v0): fill the empty cells one placement a turn, `\boxed{row column
 * digit}`. Each right placement pays 1 / (cells empty at the start), so a solved puzzle returns 1;
 * a wrong digit, a filled cell or a cell off the board pays 0 and the turn is spent. GEM's rules,
 * texts and rewards (Apache-2.0, gem/envs/game_env/sudoku.py); the code is ours.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn, refused } from '../_gem/game_step';
import { type Grid, makePuzzle } from './grid';

const Config = z
  .strictObject({
    clues: z
      .number()
      .int()
      .min(0)
      .default(30)
      .describe(
        "Cells GEM tries to empty (despite the name, as GEM's code does): each emptied cell is kept only if the puzzle keeps a unique solution, so at most this many cells start empty.",
      ),
    scale: z
      .union([z.literal(4), z.literal(9)])
      .default(9)
      .describe('Side of the grid: 9, or 4 for the simple version with 2 x 2 boxes.'),
    max_turns: z.number().int().min(1).default(100).describe('Turns before the episode ends.'),
  })
  .refine((config) => config.clues <= config.scale * config.scale, { message: 'clues: at most scale * scale cells can be emptied' });
type SudokuConfig = z.output<typeof Config>;

class Sudoku implements Env {
  private solution: Grid = { scale: 9, cells: [] };
  private board: Grid = { scale: 9, cells: [] };
  private emptyAtStart = 0;
  private turn = 0;
  private randomActions = Rng.fromSeed(0, 'sudoku', 'random-action');

  constructor(private readonly config: SudokuConfig) {}

  reset(seed: number): ResetResult {
    const puzzle = makePuzzle(this.config.scale, this.config.clues, Rng.fromSeed(seed, 'sudoku'));
    this.solution = puzzle.solution;
    this.board = puzzle.givens;
    this.emptyAtStart = this.board.cells.filter((digit) => digit === 0).length;
    this.randomActions = Rng.fromSeed(seed, 'sudoku', 'random-action');
    this.turn = 0;
    return { observation: this.instructions(), info: { instruction: '', suffix: this.suffix() } };
  }

  step(response: string): StepResult {
    this.turn++;
    const played = this.play(response);
    return gameStep(played, { turn: this.turn, maxTurns: this.config.max_turns, suffix: this.suffix(), metrics: { cells_filled: this.cellsFilled() } });
  }

  /** The share of the cells empty at the start now filled. */
  private cellsFilled(): number {
    const filled = this.board.cells.filter((digit, cell) => digit !== 0 && digit === this.solution.cells[cell]).length;
    return this.emptyAtStart === 0 ? 1 : 1 - (this.board.cells.length - filled) / this.emptyAtStart;
  }

  private play(response: string): GameTurn {
    const boxed = lastBoxed(response, /(\d+)\s(\d+)\s(\d+)/);
    if (boxed === null) return formatError('You did not provide a valid guess.');
    const [row, col, digit] = [Number(boxed[1]), Number(boxed[2]), Number(boxed[3])];
    const action = `${row} ${col} ${digit}`;
    const tried = `At turn ${this.turn}, you tried to place ${digit} at R${row} C${col}`;
    const { scale } = this.config;
    const cell = (row - 1) * scale + (col - 1);
    if (![row, col, digit].every((n) => n >= 1 && n <= scale)) return refused(`${tried}, which is out of bounds.`, action);
    if (this.board.cells[cell] !== 0) return refused(`${tried}, which is already filled. You cannot overwrite pre-filled cells.`, action);
    if (this.solution.cells[cell] !== digit) return refused(`${tried}, which violates Sudoku rules.`, action);
    this.board.cells[cell] = digit;
    const reward = 1 / this.emptyAtStart;
    if (this.solved()) return { feedback: 'Congratulations! You have completed the Sudoku puzzle!', reward, action, effective: true, outcome: 'won' };
    return { feedback: `At turn ${this.turn}, you placed ${digit} at R${row} C${col}, which is correct.`, reward, action, effective: true };
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.boardText() : null;
  }

  close(): void {}

  /** An empty cell and a digit, each drawn uniformly (GEM's env has no random action of its own). */
  sampleRandomAction(): string {
    const empty = this.board.cells.flatMap((digit, cell) => (digit === 0 ? [cell] : []));
    const { scale } = this.config;
    const cell = empty.length > 0 ? this.randomActions.choice(empty) : 0;
    const digit = this.randomActions.intBetween(1, scale);
    return `\\boxed{${Math.floor(cell / scale) + 1} ${(cell % scale) + 1} ${digit}}`;
  }

  private solved(): boolean {
    return this.board.cells.every((digit, cell) => digit === this.solution.cells[cell]);
  }

  private instructions(): string {
    const { scale } = this.config;
    return (
      `You are playing ${scale === 4 ? 'A simple version of' : ''} Sudoku.\n` +
      `Each row is numbered from 1 to ${scale}, and each column is also numbered from 1 to ${scale}.\n` +
      `Empty cells are represented by '.', and pre-filled cells contain digits from 1 to ${scale}.\n\n` +
      `Your objective is to fill the empty cells in the ${scale}x${scale} grid with digits from 1 to ${scale} such that:\n` +
      `1. Each row contains all digits from 1 to ${scale} without repetition.\n` +
      `2. Each column contains all digits from 1 to ${scale} without repetition.\n` +
      `3. Each of the nine ${scale}x${scale} subgrids contains all digits from 1 to ${scale} without repetition.\n\n` +
      'Rules and Instructions:\n' +
      '1. **Do not overwrite** the initial numbers provided in the grid.\n' +
      "2. **Only fill** empty cells represented by '.'.\n" +
      "3. You may respond in any manner you prefer, but ensure that your response includes the format of '\\boxed{row column number}', e.g. \\boxed{1 1 5}.\n" +
      '4. **Ensure** that your move does not violate Sudoku rules. Invalid moves, including overwriting pre-filled cells and placing two numbers in one row/col/sub-grid will result in penalties.\n' +
      'The history of your moves will be appended as you play more rounds. Use the history of your move to improve your decision making by avoiding the moves you have tried. Good luck!\n\n'
    );
  }

  private suffix(): string {
    return `Here is the current board layout:\n${this.boardText()}\nEnter your move.`;
  }

  /** GEM's layout: R/C labels, '.' for empty, '|' between boxes and a dashed line under each band. */
  private boardText(): string {
    const { scale } = this.config;
    const box = Math.sqrt(scale);
    const columns = Array.from({ length: scale }, (_, j) => `C${j + 1}${(j + 1) % box === 0 ? '  ' : ''}`);
    const lines = [`   ${columns.join(' ')}`];
    for (let i = 0; i < scale; i++) {
      let row = `R${i + 1} `;
      for (let j = 0; j < scale; j++) {
        const digit = this.board.cells[i * scale + j]!;
        row += ` ${digit === 0 ? '.' : digit} `;
        if ((j + 1) % box === 0 && j < scale - 1) row += '| ';
      }
      lines.push(row.trim());
      if ((i + 1) % box === 0 && i < scale - 1) lines.push(`   ${'- '.repeat(2 * (scale - 1))}`);
    }
    return lines.join('\n');
  }
}

export default defineEnv({
  name: 'sudoku',
  description: "GEM's Sudoku: fill a seeded puzzle with a unique solution, a placement a turn in \\boxed{row column digit}.",
  config: Config,
  env: Sudoku,
});
