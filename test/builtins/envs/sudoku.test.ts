import { describe, expect, test } from 'bun:test';
import sudoku from '../../../plugins/envs/sudoku';
import type { Env } from '../../../src/sdk/types';
import { makeEnv, resetOf, resolvedName, stepOf } from './gem_games';

const make = (config: Record<string, unknown> = {}) => makeEnv(sudoku, config);

/** The grid row by row (0 for '.'), read from render('text'). */
function gridOf(env: Env): number[] {
  const rows = (env.render('text') as string).split('\n').filter((line) => /^R\d/.test(line));
  return rows.flatMap((line) =>
    line
      .replace(/^R\d+/, '')
      .replaceAll('|', ' ')
      .trim()
      .split(/\s+/)
      .map((c) => (c === '.' ? 0 : Number(c))),
  );
}

function fits(grid: number[], scale: number, cell: number, digit: number): boolean {
  const box = Math.sqrt(scale);
  const [row, col] = [Math.floor(cell / scale), cell % scale];
  return grid.every((d, i) => {
    if (d !== digit) return true;
    const [r, c] = [Math.floor(i / scale), i % scale];
    return r !== row && c !== col && (Math.floor(r / box) !== Math.floor(row / box) || Math.floor(c / box) !== Math.floor(col / box));
  });
}

/** Every solution of `grid`, by backtracking. */
function solutions(grid: number[], scale: number): number[][] {
  const cell = grid.indexOf(0);
  if (cell < 0) return [grid.slice()];
  return Array.from({ length: scale }, (_, d) => d + 1)
    .filter((digit) => fits(grid, scale, cell, digit))
    .flatMap((digit) => {
      grid[cell] = digit;
      const found = solutions(grid, scale);
      grid[cell] = 0;
      return found;
    });
}

describe('sudoku env (GEM Sudoku)', () => {
  test('the same seed gives the same puzzle, with one solution; the instruction is the observation, the grid the suffix', () => {
    const reset = (seed: number) => {
      const env = make({ scale: 4, clues: 10 });
      return [resetOf(env, seed), env.render('text')] as const;
    };
    expect(reset(8)).toEqual(reset(8));
    expect(new Set(Array.from({ length: 10 }, (_, s) => reset(s)[1])).size).toBeGreaterThan(5);
    for (let seed = 0; seed < 10; seed++) {
      const env = make({ scale: 4, clues: 10 });
      env.reset(seed);
      expect(solutions(gridOf(env), 4)).toHaveLength(1);
    }
    const env = make();
    const first = resetOf(env, 1);
    expect(first.info.instruction).toBe('');
    expect(first.observation).toStartWith('You are playing  Sudoku.\nEach row is numbered from 1 to 9');
    expect(first.info.suffix).toBe(`Here is the current board layout:\n${env.render('text')}\nEnter your move.`);
    expect((env.render('text') as string).split('\n').slice(0, 4)).toEqual([
      '   C1 C2 C3   C4 C5 C6   C7 C8 C9  ',
      expect.stringMatching(/^R1 {2}[.\d] {2}[.\d] {2}[.\d] \| {2}[.\d] {2}[.\d] {2}[.\d] \| {2}[.\d] {2}[.\d] {2}[.\d]$/),
      expect.stringMatching(/^R2 /),
      expect.stringMatching(/^R3 /),
    ]);
    expect((env.render('text') as string).split('\n')[4]).toBe(`   ${'- '.repeat(16)}`);
  });

  test('placing the solution wins: each right placement pays 1 / empty cells, the last ends the game', () => {
    const env = make({ scale: 9, clues: 30 });
    resetOf(env, 3);
    const grid = gridOf(env);
    const [solution] = solutions(grid.slice(), 9);
    const empty = grid.flatMap((d, i) => (d === 0 ? [i] : []));
    expect(empty.length).toBeGreaterThan(0);
    expect(empty.length).toBeLessThanOrEqual(30);
    const steps = empty.map((cell) => stepOf(env, `\\boxed{${Math.floor(cell / 9) + 1} ${(cell % 9) + 1} ${solution![cell]}}`));
    for (const step of steps) expect(step.reward).toBeCloseTo(1 / empty.length, 12);
    expect(steps[0]!.observation).toMatch(/^At turn 1, you placed \d at R\d C\d, which is correct\.$/);
    expect(steps.at(-1)).toMatchObject({ observation: 'Congratulations! You have completed the Sudoku puzzle!', terminated: true, truncated: false });
    expect(steps.at(-1)!.info.metrics).toMatchObject({ success: true, cells_filled: 1 });
    expect(steps.slice(0, -1).every((s) => !s.terminated)).toBe(true);
  });

  test('a response without a boxed placement is a format error: -0.1, and the episode ends', () => {
    const env = make({ scale: 4, clues: 10 });
    resetOf(env, 0);
    const step = stepOf(env, 'put 4 in row 1 column 1: \\boxed{1,1,4}');
    expect(step).toMatchObject({ observation: 'You did not provide a valid guess.', reward: -0.1, terminated: true, truncated: false });
    expect(step.info.metrics).toMatchObject({ action_is_valid: false, success: false });
  });

  test('wrong digits, filled cells and cells off the board pay 0 and change nothing; the turn limit ends the game', () => {
    const env = make({ scale: 4, clues: 10, max_turns: 3 });
    resetOf(env, 0);
    const grid = gridOf(env);
    const [solution] = solutions(grid.slice(), 4);
    const filled = grid.findIndex((d) => d !== 0);
    const empty = grid.indexOf(0);
    const wrong = (solution![empty]! % 4) + 1;
    const at = (cell: number, digit: number) => `\\boxed{${Math.floor(cell / 4) + 1} ${(cell % 4) + 1} ${digit}}`;
    const overwrite = stepOf(env, at(filled, grid[filled]!));
    expect(overwrite).toMatchObject({ reward: 0, terminated: false });
    expect(overwrite.observation).toEndWith('which is already filled. You cannot overwrite pre-filled cells.');
    expect(stepOf(env, '\\boxed{5 1 1}').observation).toBe('At turn 2, you tried to place 1 at R5 C1, which is out of bounds.');
    const last = stepOf(env, at(empty, wrong));
    expect(last).toMatchObject({ observation: 'You have reached the maximum number of turns.', reward: 0, terminated: true, truncated: true });
    expect(last.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    expect(gridOf(env)).toEqual(grid);
  });

  test('scale, clues and max_turns are honoured; bad values are refused; the GEM id resolves', async () => {
    const full = make({ scale: 4, clues: 0 });
    resetOf(full, 0);
    expect(gridOf(full)).toHaveLength(16);
    expect(gridOf(full).includes(0)).toBe(false);
    const env = make({ scale: 9, clues: 50 });
    resetOf(env, 0);
    const empty = gridOf(env).filter((d) => d === 0).length;
    expect(empty).toBeGreaterThan(30);
    expect(empty).toBeLessThanOrEqual(50);
    expect(sudoku.config.safeParse({ scale: 5 }).success).toBe(false);
    expect(sudoku.config.safeParse({ scale: 4, clues: 17 }).success).toBe(false);
    expect(sudoku.config.safeParse({ hints: 3 }).success).toBe(false);
    expect(await resolvedName('game:Sudoku-v0')).toBe('sudoku');
  });

  test('random actions name an empty cell and a digit, drawn from the seed', () => {
    const actions = (seed: number) => {
      const env = make({ scale: 4, clues: 10 });
      env.reset(seed);
      return Array.from({ length: 5 }, () => env.sampleRandomAction());
    };
    expect(actions(2)).toEqual(actions(2));
    const env = make({ scale: 4, clues: 10 });
    env.reset(2);
    const grid = gridOf(env);
    for (let i = 0; i < 20; i++) {
      const [, row, col] = /^\\boxed\{([1-4]) ([1-4]) [1-4]\}$/.exec(env.sampleRandomAction())!.map(Number);
      expect(grid[(row! - 1) * 4 + col! - 1]).toBe(0);
    }
  });
});
