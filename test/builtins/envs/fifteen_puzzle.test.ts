import { describe, expect, test } from 'bun:test';
import fifteenPuzzle from '../../../plugins/envs/fifteen_puzzle';
import type { Env } from '../../../src/sdk/types';
import { makeEnv, resetOf, resolvedName, stepOf } from './gem_games';

const make = (config: Record<string, unknown> = {}) => makeEnv(fifteenPuzzle, config);

/** The board as numbers row by row (0 for the gap), read from render('text'). */
const boardOf = (env: Env) =>
  (env.render('text') as string)
    .trim()
    .split(/\s+/)
    .map((t) => (t === '__' ? 0 : Number(t)));

const GOAL_2X2 = [1, 2, 3, 0];
/** The tile that slides in a direction sits beside the gap: below it for up, and so on. */
const SOURCE = { up: [1, 0], down: [-1, 0], left: [0, 1], right: [0, -1] } as const;

/** The shortest sequence of directions from `board` to the goal, by breadth-first search. */
function solve(board: number[], n: number): string[] {
  const goal = [...Array.from({ length: n * n - 1 }, (_, i) => i + 1), 0].join();
  const seen = new Map<string, string[]>([[board.join(), []]]);
  const queue = [board];
  while (queue.length > 0) {
    const current = queue.shift()!;
    const path = seen.get(current.join())!;
    if (current.join() === goal) return path;
    const gap = current.indexOf(0);
    for (const [direction, [dr, dc]] of Object.entries(SOURCE)) {
      const [r, c] = [Math.floor(gap / n) + dr, (gap % n) + dc];
      if (r < 0 || r >= n || c < 0 || c >= n) continue;
      const next = current.slice();
      [next[gap], next[r * n + c]] = [next[r * n + c]!, 0];
      if (!seen.has(next.join())) {
        seen.set(next.join(), [...path, direction]);
        queue.push(next);
      }
    }
  }
  throw new Error('unsolvable board');
}

describe('fifteen_puzzle env (GEM FifteenPuzzle)', () => {
  test('the same seed gives the same board; seeds give different ones; the instruction is the observation, the board the suffix', () => {
    const boards = (seed: number) => {
      const env = make({ num_rows: 3 });
      const reset = resetOf(env, seed);
      return [reset.observation, reset.info.suffix, stepOf(env, '\\boxed{up}').observation, env.render('text')];
    };
    expect(boards(5)).toEqual(boards(5));
    expect(new Set(Array.from({ length: 10 }, (_, s) => boards(s)[1])).size).toBeGreaterThan(5);
    const env = make();
    const reset = resetOf(env, 1);
    expect(reset.info.instruction).toBe('');
    expect(reset.observation).toStartWith('You are playing the 3-Puzzle game.\n');
    expect(reset.info.suffix).toBe(`Here is the current board layout: \n${env.render('text')}\nEnter your move.`);
  });

  test('a winning sequence solves the scrambled board with reward 1 and success', () => {
    const env = make({ num_rows: 3, max_turns: 50 });
    resetOf(env, 7);
    const moves = solve(boardOf(env), 3);
    expect(moves.length).toBeGreaterThan(0);
    const steps = moves.map((move) => stepOf(env, `\\boxed{left} no, better: \\boxed{${move}}`));
    const last = steps.at(-1)!;
    const rewards = steps.map((s) => s.reward);
    expect(last).toMatchObject({ observation: 'Congratulations! You have solved the puzzle!', reward: 1, terminated: true, truncated: false });
    expect(rewards.slice(0, -1).every((r) => r === 0)).toBe(true);
    expect(last.info.metrics).toMatchObject({ success: true, action_is_valid: true, action_is_effective: true, tiles_in_place: 1 });
    expect(last.info.suffix).toContain(' 1  2  3');
  });

  test('a response without a boxed direction is a format error: -0.1, and the episode ends', () => {
    const env = make();
    resetOf(env, 2);
    const step = stepOf(env, 'move the tile up');
    expect(step).toMatchObject({ observation: 'At turn 1, you did not provide a valid guess', reward: -0.1, terminated: true, truncated: false });
    expect(step.info.metrics).toMatchObject({ success: false, action_is_valid: false });
    expect(step.info.action).toBeNull();
    // only the last boxed answer counts, and case matters as in GEM's pattern
    resetOf(env, 2);
    expect(stepOf(env, '\\boxed{Up}').reward).toBe(-0.1);
  });

  test('a move off the board is invalid (reward 0, state kept); the turn limit adds the share of tiles in place', () => {
    const env = make({ num_rows: 2, max_turns: 2 });
    resetOf(env, 3);
    const board = boardOf(env);
    const gap = board.indexOf(0);
    // on a 2x2 board, a tile slides up only when the gap is in the top row
    const offBoard = gap < 2 ? 'down' : 'up';
    const first = stepOf(env, `\\boxed{${offBoard}}`);
    expect(first).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(first.observation).toBe(`At turn 1, you chose a move ${offBoard} that is outside the bounds of the board.`);
    expect(first.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    expect(boardOf(env)).toEqual(board);
    const last = stepOf(env, `\\boxed{${offBoard}}`);
    const inPlace = board.filter((tile, i) => tile === GOAL_2X2[i]).length / 4;
    expect(last).toMatchObject({ observation: 'You have reached the maximum number of turns.', reward: inPlace, terminated: true, truncated: true });
  });

  test('num_rows and max_turns are honoured; unknown keys are refused; the GEM id resolves', async () => {
    const env = make({ num_rows: 4 });
    const reset = resetOf(env, 1);
    expect(reset.observation).toStartWith('You are playing the 15-Puzzle game.');
    expect(boardOf(env).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    const short = make({ max_turns: 1 });
    resetOf(short, 1);
    expect(stepOf(short, 'nothing').truncated).toBe(true);
    expect(fifteenPuzzle.config.safeParse({ num_rows: 1 }).success).toBe(false);
    expect(fifteenPuzzle.config.safeParse({ rows: 3 }).success).toBe(false);
    expect(await resolvedName('game:FifteenPuzzle-v0')).toBe('fifteen_puzzle');
  });

  test('random actions are boxed directions, drawn from the seed', () => {
    const actions = (seed: number) => {
      const env = make();
      env.reset(seed);
      return Array.from({ length: 8 }, () => env.sampleRandomAction());
    };
    expect(actions(4)).toEqual(actions(4));
    for (const action of actions(4)) expect(action).toMatch(/^\\boxed\{(up|down|left|right)\}$/);
    const env = make();
    env.reset(4);
    expect(env.render('rgb')).toBeNull();
  });
});
