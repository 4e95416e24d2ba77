/**
 * GEM's FifteenPuzzle (game:FifteenPuzzle-v0): slide numbered tiles into the empty square until
 * they read 1..n in row-major order with the gap bottom right. A move names the direction the tile
 * slides, `\boxed{up}`. The start is the goal scrambled by random moves that never undo the one
 * before (GEM's "monte_carlo" start, 100 moves), so it is always solvable. GEM's rules, texts and
 * rewards (Apache-2.0, gem/envs/game_env/fifteen_puzzle.py); the code is ours.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn } from '../_gem/game_step';
import { LanguageGameReward } from '../_gem/rewards';

const Config = z.strictObject({
  num_rows: z.number().int().min(2).max(10).default(2).describe('Side of the square board: 2 is the 3-puzzle, 4 the 15-puzzle.'),
  max_turns: z.number().int().min(1).default(20).describe('Turns before the episode ends; the last turn adds the share of tiles in place to its reward.'),
});
type PuzzleConfig = z.output<typeof Config>;

const SCRAMBLE_MOVES = 100;
const DIRECTIONS = ['up', 'down', 'left', 'right'] as const;
type Direction = (typeof DIRECTIONS)[number];
const OPPOSITE: Record<Direction, Direction> = { up: 'down', down: 'up', left: 'right', right: 'left' };
/** Where the tile that slides in a direction sits, from the gap: `up` slides the tile below the gap up. */
const SOURCE: Record<Direction, [number, number]> = { up: [1, 0], down: [-1, 0], left: [0, 1], right: [0, -1] };

/** Tiles row by row; 0 is the gap. */
type Board = number[];

class FifteenPuzzle implements Env {
  private board: Board = [];
  private turn = 0;
  private randomActions = Rng.fromSeed(0, 'fifteen_puzzle', 'random-action');

  constructor(private readonly config: PuzzleConfig) {}

  reset(seed: number): ResetResult {
    this.board = scrambled(this.config.num_rows, Rng.fromSeed(seed, 'fifteen_puzzle'));
    this.randomActions = Rng.fromSeed(seed, 'fifteen_puzzle', 'random-action');
    this.turn = 0;
    return { observation: this.instructions(), info: { instruction: '', suffix: this.suffix() } };
  }

  step(response: string): StepResult {
    this.turn++;
    const played = this.play(response);
    return gameStep(played, { turn: this.turn, maxTurns: this.config.max_turns, suffix: this.suffix(), metrics: { tiles_in_place: this.shareInPlace() } });
  }

  private play(response: string): GameTurn {
    const action = (lastBoxed(response, /(up|down|left|right)/)?.[1] as Direction | undefined) ?? null;
    if (action === null) return formatError(`At turn ${this.turn}, you did not provide a valid guess`);
    const moved = this.slide(action);
    if (moved && this.solved()) {
      return { feedback: 'Congratulations! You have solved the puzzle!', reward: LanguageGameReward.success, action, effective: true, outcome: 'won' };
    }
    const reward = moved ? LanguageGameReward.internalStep : LanguageGameReward.invalidAction;
    // GEM's soft reward at the turn limit: the turn's own plus the share of tiles in place.
    const lastTurnBonus = this.turn >= this.config.max_turns ? this.shareInPlace() : 0;
    const feedback = moved
      ? `At turn ${this.turn}, you made a valid move: ${action}.\n`
      : `At turn ${this.turn}, you chose a move ${action} that is outside the bounds of the board.`;
    return { feedback, reward: reward + lastTurnBonus, action, effective: moved };
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.boardText() : null;
  }

  close(): void {}

  /** A boxed direction, any of the four (GEM draws from all four, off-board moves included). */
  sampleRandomAction(): string {
    return `\\boxed{${this.randomActions.choice(DIRECTIONS)}}`;
  }

  /** Slides the tile next to the gap in `direction` into it; false when there is no such tile. */
  private slide(direction: Direction): boolean {
    const moved = slideTile(this.board, this.config.num_rows, direction);
    if (moved) this.board = moved;
    return moved !== null;
  }

  private solved(): boolean {
    return this.board.every((tile, i) => tile === goalTile(i, this.board.length));
  }

  /** GEM's soft reward at the turn limit: the share of squares (the gap's included) that hold their goal tile. */
  private shareInPlace(): number {
    return this.board.filter((tile, i) => tile === goalTile(i, this.board.length)).length / this.board.length;
  }

  private instructions(): string {
    const greatest = this.board.length - 1;
    return (
      `You are playing the ${greatest}-Puzzle game.\n` +
      `You have to arrange the numbered tiles in ascending order from 1 to ${greatest}, with the empty space located in the bottom-right corner.\n` +
      'To make a move, you can slide a tile into the empty space (represented by a double underscore, e.g. __) by using one of the following commands:\n' +
      "- 'up': Move the tile below the empty space up.\n" +
      "- 'down': Move the tile above the empty space down.\n" +
      "- 'left': Move the tile to the right of the empty space left.\n" +
      "- 'right': Move the tile to the left of the empty space right.\n" +
      "To submit your move, type the direction (e.g., 'up', 'down', 'left', or 'right') in \\boxed{...}.\n" +
      'The current board layout is shown below\n' +
      'Use logic and planning to solve the puzzle.\n'
    );
  }

  private suffix(): string {
    return `Here is the current board layout: \n${this.boardText()}\nEnter your move.`;
  }

  private boardText(): string {
    const n = this.config.num_rows;
    let text = '';
    for (let r = 0; r < n; r++) {
      text += `${this.board
        .slice(r * n, r * n + n)
        .map((tile) => (tile === 0 ? '__' : String(tile).padStart(2)))
        .join(' ')}\n`;
    }
    return text;
  }
}

/** The tile the square `index` holds when solved: 1..n-1 in order, the gap (0) last. */
function goalTile(index: number, squares: number): number {
  return index === squares - 1 ? 0 : index + 1;
}

/** The board after sliding the tile beside the gap in `direction`, or null when it is off the board. */
function slideTile(board: Board, n: number, direction: Direction): Board | null {
  const gap = board.indexOf(0);
  const [dr, dc] = SOURCE[direction];
  const row = Math.floor(gap / n) + dr;
  const col = (gap % n) + dc;
  if (row < 0 || row >= n || col < 0 || col >= n) return null;
  const next = board.slice();
  [next[gap], next[row * n + col]] = [next[row * n + col]!, 0];
  return next;
}

/** The goal after SCRAMBLE_MOVES random slides, none undoing the one before: solvable by construction. */
function scrambled(n: number, rng: Rng): Board {
  let board: Board = Array.from({ length: n * n }, (_, i) => goalTile(i, n * n));
  let last: Direction | null = null;
  for (let i = 0; i < SCRAMBLE_MOVES; i++) {
    const options = DIRECTIONS.filter((d) => d !== (last && OPPOSITE[last]) && slideTile(board, n, d) !== null);
    last = rng.choice(options);
    board = slideTile(board, n, last)!;
  }
  return board;
}

export default defineEnv({
  name: 'fifteen_puzzle',
  description: "GEM's FifteenPuzzle: slide tiles into order on an n x n board, a move a turn in \\boxed{up|down|left|right}.",
  config: Config,
  env: FifteenPuzzle,
});
