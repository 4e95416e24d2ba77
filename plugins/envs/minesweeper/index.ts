/**
 * Minesweeper as GEM plays it (gem/envs/game_env/minesweeper.py): reveal every cell without a mine
 * and flag every mine. A move is `\boxed{reveal 3 2}` or `\boxed{flag 3 2}` (row, column, from 0).
 * The mines are laid at the first reveal, away from the 3x3 block around it. A reveal pays the
 * share of the safe cells it uncovers, so clearing the board pays 1 in all; a mine ends the
 * episode with 0; a response with no boxed move pays -0.1 and ends it; a move the rules refuse (a
 * cell off the board, revealing a revealed or flagged cell, flagging a revealed one, another
 * command) pays 0 and uses up the turn. The board follows each observation in the suffix, as GEM
 * gives it. The observations are GEM's, word for word.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn, refused } from '../_gem/game_step';
import { LanguageGameReward } from '../_gem/rewards';
import { Board } from './board';

const Config = z
  .strictObject({
    rows: z.int().min(1).max(99).default(8).describe('Rows of the board.'),
    cols: z.int().min(1).max(99).default(8).describe('Columns of the board.'),
    num_mines: z.int().min(0).default(10).describe('Mines on the board.'),
    max_turns: z.int().min(1).default(20).describe('Turns before the episode ends (terminated and truncated, as GEM sets them); refused moves count.'),
  })
  .superRefine(({ rows, cols, num_mines }, context) => {
    const room = rows * cols - Math.min(3, rows) * Math.min(3, cols);
    if (num_mines > room) {
      context.addIssue({
        code: 'custom',
        path: ['num_mines'],
        message: `a ${rows}x${cols} board has room for ${room} mines outside the 3x3 block kept clear around the first reveal; got ${num_mines}`,
      });
    }
  });
type MinesweeperConfig = z.output<typeof Config>;

/** GEM's move pattern: a command, a row and a column, one whitespace character apart. */
const MOVE = /([a-zA-Z]+)\s(\d+)\s(\d+)/;

const INSTRUCTION_TAIL =
  "The current board layout is shown below. Cells that are unrevealed are represented by a dot ('.'), revealed numbers show the count of adjacent mines, and flagged cells are marked with an 'F'.\n" +
  'Use logic and deduction to avoid revealing cells with mines!\n' +
  'Be mindful not to choose revealed or flagged cells.\n';

class Minesweeper implements Env {
  private board: Board;
  private turns = 0;
  private mines = Rng.fromSeed(0, 'minesweeper', 'mines');
  private randomActions = Rng.fromSeed(0, 'minesweeper', 'random-action');

  constructor(private readonly config: MinesweeperConfig) {
    this.board = new Board(config.rows, config.cols, config.num_mines);
  }

  reset(seed: number): ResetResult {
    this.board = new Board(this.config.rows, this.config.cols, this.config.num_mines);
    this.mines = Rng.fromSeed(seed, 'minesweeper', 'mines');
    this.randomActions = Rng.fromSeed(seed, 'minesweeper', 'random-action');
    this.turns = 0;
    return { observation: this.instruction(), info: { instruction: '', suffix: this.suffix() } };
  }

  private instruction(): string {
    const reveal = this.anyCell();
    const flag = this.anyCell();
    return (
      'You are playing the Minesweeper game.\n' +
      'The objective of the game is to reveal all cells that do not contain mines.\n' +
      'To make a move, you can either reveal a cell or place a flag on a suspected mine location using one of the following commands:\n' +
      "- 'reveal': Reveal the contents of a specific cell.\n" +
      "- 'flag': Place or remove a flag on a specific cell to mark it as a potential mine.\n" +
      'To submit your move, type the command followed by the row and column in \\boxed{}.\n' +
      'For example:\n' +
      `- \\boxed{reveal ${reveal[0]} ${reveal[1]}} to reveal the cell in Row ${reveal[0]}, Column ${reveal[1]}.\n` +
      `- \\boxed{flag ${flag[0]} ${flag[1]}} to place or remove a flag on the cell in Row ${flag[0]}, Column ${flag[1]}.\n` +
      INSTRUCTION_TAIL
    );
  }

  private suffix(): string {
    return `Here is the current board layout:\n${this.board.text()}\nEnter your guess.`;
  }

  step(response: string): StepResult {
    this.turns += 1;
    const played = this.play(response);
    return gameStep(played, { turn: this.turns, maxTurns: this.config.max_turns, suffix: this.suffix(), metrics: { hit_mine: played.outcome === 'lost' } });
  }

  private play(response: string): GameTurn {
    const board = this.board;
    const at = `At turn ${this.turns}, you`;
    const box = lastBoxed(response, MOVE);
    if (box === null) return formatError(`${at} did not provide a valid guess.`);
    const command = box[1]!.toLowerCase();
    const [row, col] = [Number(box[2]), Number(box[3])];
    const action = `${command} ${row} ${col}`;
    if (!board.inside(row, col)) return refused(`${at} chose cell (${row}, ${col}), which is outside the bounds of the grid.`, action);
    if (command === 'reveal') {
      if (!board.minesLaid) board.layMines(row, col, this.mines);
      // GEM looks for a mine before it looks for a flag: revealing a flagged mine loses.
      if (board.isMine(row, col)) {
        return { feedback: `Game over! You hit a mine at (${row}, ${col})`, reward: LanguageGameReward.fail, action, effective: true, outcome: 'lost' };
      }
      if (board.revealed[row]![col] || board.flags[row]![col]) {
        return refused(`${at} chose to reveal cell (${row}, ${col}), which has already been revealed.`, action);
      }
      const reward = board.reveal(row, col) / (board.rows * board.cols - board.mines);
      if (board.solved()) {
        return { feedback: 'Congratulations! You have successfully cleared the Minesweeper board.', reward, action, effective: true, outcome: 'won' };
      }
      return { feedback: `${at} successfully revealed cell (${row}, ${col}).`, reward, action, effective: true };
    }
    if (command === 'flag') {
      if (board.revealed[row]![col]) return refused(`${at} chose to flag cell (${row}, ${col}), which has already been revealed.`, action);
      board.flags[row]![col] = !board.flags[row]![col];
      const change = board.flags[row]![col] ? 'added' : 'removed';
      return { feedback: `${at} ${change} a flag on cell (${row}, ${col}).`, reward: LanguageGameReward.internalStep, action, effective: true };
    }
    return refused(`${at} chose an invalid action '${command}'. Valid actions are 'reveal' or 'flag'.`, action);
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.board.text() : null;
  }

  close(): void {}

  private anyCell(): [number, number] {
    return [this.randomActions.int(this.config.rows), this.randomActions.int(this.config.cols)];
  }

  /**
   * GEM's sampler, a reveal 9 times in 10 and a flag otherwise, on a cell where the move is
   * allowed (GEM's may pick a revealed cell, which the rules refuse).
   */
  sampleRandomAction(): string {
    const hidden: Array<[number, number]> = [];
    for (let r = 0; r < this.config.rows; r++) for (let c = 0; c < this.config.cols; c++) if (!this.board.revealed[r]![c]) hidden.push([r, c]);
    const revealable = hidden.filter(([r, c]) => !this.board.flags[r]![c]);
    const flag = this.randomActions.int(10) === 0 || revealable.length === 0;
    const [row, col] = this.randomActions.choice(flag ? hidden : revealable);
    return `\\boxed{${flag ? 'flag' : 'reveal'} ${row} ${col}}`;
  }
}

export default defineEnv({
  name: 'minesweeper',
  description: "GEM's Minesweeper: reveal every safe cell and flag every mine (game:Minesweeper-v0).",
  config: Config,
  env: Minesweeper,
});
