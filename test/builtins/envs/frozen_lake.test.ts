import { describe, expect, test } from 'bun:test';
import frozenLake from '../../../plugins/envs/frozen_lake';
import { shortestMove, type Lake, type Tile } from '../../../plugins/envs/frozen_lake/lake';
import { COLOURS } from '../../../plugins/envs/frozen_lake/render';
import { loadConfig } from '../../../src/config/load';
import { THINK_ANSWER_PATTERN } from '../../../src/sdk/answer';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, RgbFrame, StepResult, WarmStartHooks } from '../../../src/sdk/types';
import { ROOT } from '../../helpers';
import { beforeReset, guarded, guardedAfter, stepAfterEnd } from './guarded';

const make = (config: Record<string, unknown> = {}) =>
  new frozenLake.env(frozenLake.config.parse({ is_slippery: false, ...config }), new PluginHost().envContext()) as Env;
const reset = (env: Env, seed: number) => (env.reset(seed) as ResetResult).observation;
const step = (env: Env, response: string) => env.step(response) as StepResult;
const answer = (action: string) => `<answer>${action}</answer>`;
/** Behind the guard, after `responses` from a reset with `seed`: a step() after the end is refused. */
const guardedAfterEnd = async (config: Record<string, unknown>, seed: number, responses: readonly string[]) =>
  (await guardedAfter(frozenLake, { is_slippery: false, ...config }, seed, responses)).step(answer('Up'));

type Action = 'Left' | 'Down' | 'Right' | 'Up';
const MOVES: Record<Action, [number, number]> = { Left: [0, -1], Down: [1, 0], Right: [0, 1], Up: [-1, 0] };

/** Where a symbol stands in a text grid. */
function find(grid: string, symbol: string): [number, number] {
  const rows = grid.split('\n');
  const row = rows.findIndex((line) => line.includes(symbol));
  return [row, [...rows[row]!].indexOf(symbol)];
}

/** The test's own breadth-first search over the text grid: the shortest walk from P to G that avoids holes. */
function shortestWalk(grid: string): Action[] | null {
  const rows = grid.split('\n').map((line) => [...line]);
  const start = find(grid, 'P');
  const cameFrom = new Map<string, { from: string; action: Action }>();
  const queue = [start];
  const seen = new Set([start.join()]);
  for (let head = 0; head < queue.length; head++) {
    const [r, c] = queue[head]!;
    for (const [action, [dr, dc]] of Object.entries(MOVES) as [Action, [number, number]][]) {
      const cell = rows[r + dr]?.[c + dc];
      const key = [r + dr, c + dc].join();
      if (cell === undefined || cell === 'O' || seen.has(key)) continue;
      seen.add(key);
      cameFrom.set(key, { from: [r, c].join(), action });
      if (cell === 'G') {
        const walk: Action[] = [];
        for (let at = key; at !== start.join(); at = cameFrom.get(at)!.from) walk.unshift(cameFrom.get(at)!.action);
        return walk;
      }
      queue.push([r + dr, c + dc]);
    }
  }
  return null;
}

describe('frozen_lake env', () => {
  test('the same seed gives the same lake; different seeds give different lakes', () => {
    expect(reset(make(), 7)).toBe(reset(make(), 7));
    const lakes = new Set(Array.from({ length: 30 }, (_, seed) => reset(make(), seed)));
    expect(lakes.size).toBeGreaterThan(25);
    // slipping is seeded too: the same seed replays the same slips
    const play = (seed: number) => {
      const env = make({ is_slippery: true, size: 8, p: 1, max_steps: 50 });
      reset(env, seed);
      return Array.from({ length: 6 }, () => step(env, answer('Right')).observation);
    };
    expect(play(3)).toEqual(play(3));
  });

  test('every lake is solvable: a search finds the goal and walking there wins (200 lakes)', () => {
    const starts = new Set<string>();
    let holes = 0;
    let cells = 0;
    for (const [size, p] of [
      [2, 0.8],
      [4, 0.8],
      [4, 0.5],
      [6, 0.6],
      [8, 0.8],
    ] as const) {
      for (let seed = 0; seed < 40; seed++) {
        const env = make({ size, p, max_steps: size * size });
        const grid = reset(env, seed);
        expect(grid.split('\n')).toHaveLength(size);
        expect(grid.split('\n').every((row) => [...row].length === size && /^[P_OG]+$/.test(row))).toBe(true);
        expect(grid.match(/P/g)).toHaveLength(1);
        expect(grid.match(/G/g)).toHaveLength(1);
        if (size === 4) starts.add(`${find(grid, 'P')}`);
        holes += grid.match(/O/g)?.length ?? 0;
        cells += size * size - 2;
        const walk = shortestWalk(grid);
        expect(walk).not.toBeNull();
        const steps = walk!.map((action) => step(env, answer(action)));
        expect(steps.at(-1)).toMatchObject({ reward: 1, terminated: true, truncated: false });
      }
    }
    // start and goal are placed at random, not in fixed corners
    expect(starts.size).toBeGreaterThan(8);
    // holes come at about 1 - p (0.25 on average over the sizes above, less the rejected maps' bias)
    expect(holes / cells).toBeGreaterThan(0.1);
    expect(holes / cells).toBeLessThan(0.35);
  });

  test('walking to the goal pays 1 once, at the end, and the goal shows the player on it', async () => {
    const env = make({ size: 6, p: 0.7 });
    const grid = reset(env, 12);
    const walk = shortestWalk(grid)!;
    expect(walk.length).toBeGreaterThan(1);
    walk.forEach((action, i) => {
      const result = step(env, answer(action));
      const last = i === walk.length - 1;
      expect(result).toMatchObject({ reward: last ? 1 : 0, terminated: last, truncated: false });
      expect(result.info.action).toBe(action);
      expect(result.info.metrics).toEqual({ success: last, action_is_valid: true, action_is_effective: true, format_penalty: 0 });
      expect(result.info.metricsAgg).toEqual({ success: 'last' });
      if (last) {
        expect(result.observation).toContain('√');
        expect(result.observation).not.toMatch(/[PG]/);
        expect(result.info.actionDesc).toContain('reached the goal');
      }
    });
    await expect(guardedAfterEnd({ size: 6, p: 0.7 }, 12, walk.map(answer))).rejects.toThrow(stepAfterEnd('frozen_lake'));
  });

  test('stepping into a hole ends the episode with 0 and shows X', () => {
    for (let seed = 0; seed < 50; seed++) {
      const env = make();
      const grid = reset(env, seed);
      const [r, c] = find(grid, 'P');
      const rows = grid.split('\n');
      const into = (Object.entries(MOVES) as [Action, [number, number]][]).find(([, [dr, dc]]) => rows[r + dr]?.[c + dc] === 'O');
      if (!into) continue;
      const result = step(env, answer(into[0]));
      expect(result).toMatchObject({ reward: 0, terminated: true, truncated: false });
      expect(result.info.metrics).toMatchObject({ success: false, action_is_valid: true, action_is_effective: true });
      expect(result.observation).toContain('X');
      expect(result.observation).not.toContain('P');
      return;
    }
    throw new Error('no seed put the player next to a hole');
  });

  test('walking into the edge is valid but not effective', () => {
    const env = make({ size: 3 });
    for (let seed = 0; ; seed++) {
      const grid = reset(env, seed);
      if (find(grid, 'P')[1] !== 0) continue;
      const result = step(env, answer('Left'));
      expect(result).toMatchObject({ observation: grid, reward: 0, terminated: false, truncated: false });
      expect(result.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
      return;
    }
  });

  test('an unparseable response is an invalid action: state unchanged, format penalty, action null', () => {
    const env = make({ format_penalty: -0.05 });
    const grid = reset(env, 4);
    for (const response of ['Right', '<answer>Move Right</answer>', '<answer>north</answer>', '']) {
      const result = step(env, response);
      expect(result).toMatchObject({ observation: grid, reward: -0.05, terminated: false, truncated: false });
      expect(result.info.action).toBeNull();
      expect(result.info.metrics).toEqual({ success: false, action_is_valid: false, action_is_effective: false, format_penalty: -0.05 });
    }
    expect(env.render('text')).toBe(grid);
  });

  test('the episode is truncated at max_steps; invalid responses count as turns', async () => {
    const env = make({ size: 3, max_steps: 3 });
    let seed = 0;
    while (find(reset(env, seed), 'P')[1] !== 0) seed++;
    expect(step(env, 'nothing')).toMatchObject({ terminated: false, truncated: false });
    expect(step(env, answer('Left'))).toMatchObject({ terminated: false, truncated: false });
    expect(step(env, answer('Left'))).toMatchObject({ terminated: false, truncated: true });
    await expect(guardedAfterEnd({ size: 3, max_steps: 3 }, seed, ['nothing', answer('Left'), answer('Left')])).rejects.toThrow(stepAfterEnd('frozen_lake'));
    // an invalid last turn truncates too
    const once = make({ max_steps: 1 });
    reset(once, 0);
    expect(step(once, 'nothing')).toMatchObject({ terminated: false, truncated: true });
    await expect(guardedAfterEnd({ max_steps: 1 }, 0, ['nothing'])).rejects.toThrow(stepAfterEnd('frozen_lake'));
    reset(env, seed);
    expect(step(env, answer('Left')).truncated).toBe(false);
  });

  test('actions ignore case; a <think> block may come first; another pattern can require it', () => {
    const actionOf = (response: string, config: Record<string, unknown> = {}) => {
      const env = make(config);
      reset(env, 1);
      return step(env, response).info.action;
    };
    expect(actionOf('<answer> rIGHT </answer>')).toBe('Right');
    expect(actionOf('<think>the goal is below</think>\n<answer>down</answer>')).toBe('Down');
    expect(actionOf('<|im_start|>assistant\n<answer>UP</answer><|im_end|>')).toBe('Up');
    expect(actionOf('<answer>Up</answer>', { action_pattern: THINK_ANSWER_PATTERN })).toBeNull();
    expect(actionOf('<think>up</think><answer>up</answer>', { action_pattern: THINK_ANSWER_PATTERN })).toBe('Up');
    // the random action is written so that the configured pattern reads it
    const strict = make({ action_pattern: THINK_ANSWER_PATTERN });
    reset(strict, 1);
    expect(step(strict, strict.sampleRandomAction()).info.metrics.action_is_valid).toBe(true);
  });

  test('slippery ice goes the intended way or to either side, a third each, never backwards', () => {
    const counts = { intended: 0, left: 0, right: 0, back: 0 };
    let moves = 0;
    for (let seed = 0; moves < 600; seed++) {
      const env = make({ is_slippery: true, size: 8, p: 1 });
      const before = find(reset(env, seed), 'P');
      if (before.includes(0) || before.includes(7)) continue; // the edge would hide where it went
      const after = step(env, answer('Right')).observation;
      const [r, c] = find(after, after.includes('P') ? 'P' : '√');
      const delta = `${r - before[0]},${c - before[1]}`;
      if (delta === '0,1') counts.intended++;
      else if (delta === '-1,0') counts.left++;
      else if (delta === '1,0') counts.right++;
      else counts.back++;
      moves++;
    }
    expect(counts.back).toBe(0);
    for (const n of [counts.intended, counts.left, counts.right]) expect(Math.abs(n / moves - 1 / 3)).toBeLessThan(0.07);
  });

  test('the instruction explains the symbols, the actions and the answer format', () => {
    const { info } = make().reset(0) as ResetResult;
    for (const part of ['P = player', '_ = frozen', 'O = hole', 'G = goal', 'X = ', '√ = ', 'Left, Down, Right, Up', '<answer>Right</answer>']) {
      expect(info.instruction).toContain(part);
    }
    expect(info.instruction).not.toContain('slippery');
    expect((make({ is_slippery: true }).reset(0) as ResetResult).info.instruction).toContain('slippery');
  });

  test('render: the text grid, and a picture with one colour per kind of cell', () => {
    const env = make({ size: 5, p: 0.6 });
    const grid = reset(env, 21);
    expect(env.render('text')).toBe(grid);
    const frame = env.render('rgb') as RgbFrame;
    expect(frame).toMatchObject({ width: 100, height: 100 });
    expect(frame.data).toHaveLength(100 * 100 * 3);
    const pixel = (x: number, y: number) => [...frame.data.subarray((y * frame.width + x) * 3, (y * frame.width + x) * 3 + 3)].join();
    const tileColour: Record<string, string> = {};
    const playerColour = new Set<string>();
    grid.split('\n').forEach((line, row) =>
      [...line].forEach((symbol, col) => {
        const corner = pixel(col * 20 + 3, row * 20 + 3);
        const tile = symbol === 'P' ? '_' : symbol;
        expect(tileColour[tile] ?? corner).toBe(corner); // each kind of tile has one colour
        tileColour[tile] = corner;
        if (symbol === 'P') playerColour.add(pixel(col * 20 + 10, row * 20 + 10));
      }),
    );
    expect(Object.keys(tileColour).sort()).toEqual(['G', 'O', '_']);
    const colours = [...Object.values(tileColour), ...playerColour];
    expect(new Set(colours).size).toBe(4);
    expect(tileColour.O).toBe(Object.values(COLOURS.hole).join());
    expect([...playerColour]).toEqual([COLOURS.player.join()]);
    expect(env.render('text')).toBe(grid); // rendering changes nothing
  });

  test('the player in a hole and on the goal is drawn over the tile', () => {
    const seen = new Set<string>();
    for (let seed = 0; seen.size < 2; seed++) {
      const env = make();
      const grid = reset(env, seed);
      const [r, c] = find(grid, 'P');
      const rows = grid.split('\n');
      const next = (Object.entries(MOVES) as [Action, [number, number]][]).find(([, [dr, dc]]) => /[OG]/.test(rows[r + dr]?.[c + dc] ?? ''));
      if (!next) continue;
      const after = step(env, answer(next[0])).observation;
      const [symbol, tile] = after.includes('X') ? ['X', COLOURS.hole] : ['√', COLOURS.goal];
      const [row, col] = find(after, symbol);
      const frame = env.render('rgb') as RgbFrame;
      const pixel = (x: number, y: number) => [...frame.data.subarray((y * frame.width + x) * 3, (y * frame.width + x) * 3 + 3)].join();
      expect(pixel(col * 20 + 10, row * 20 + 10)).toBe(COLOURS.player.join());
      expect(pixel(col * 20 + 2, row * 20 + 2)).toBe(tile.join());
      seen.add(symbol);
    }
  });

  test('sampleRandomAction is a well-formed valid answer, seeded', () => {
    const env = make();
    reset(env, 5);
    const samples = Array.from({ length: 40 }, () => env.sampleRandomAction());
    for (const sample of samples) expect(sample).toMatch(/^<answer>(Left|Down|Right|Up)<\/answer>$/);
    expect(new Set(samples).size).toBe(4);
    reset(env, 5);
    expect(Array.from({ length: 40 }, () => env.sampleRandomAction())).toEqual(samples);
    expect(step(env, samples[0]!).info.metrics.action_is_valid).toBe(true);
  });

  test('solutionAction walks a shortest way around the holes: the goal in as many moves as a search needs (300 lakes, more holes)', () => {
    for (let seed = 0; seed < 300; seed++) {
      const env = make({ p: 0.6 }) as Env & Required<Pick<WarmStartHooks, 'solutionAction'>>;
      let grid = reset(env, seed);
      const shortest = shortestWalk(grid)!.length;
      for (let turn = 1; turn <= shortest; turn++) {
        const response = env.solutionAction()!;
        expect(response).toMatch(/^<answer>(Left|Down|Right|Up)<\/answer>$/);
        const result = step(env, response);
        expect(result.terminated).toBe(turn === shortest);
        if (turn === shortest) expect(result.reward).toBe(1);
        grid = result.observation;
      }
    }
  });

  test('of equally short moves, solutionAction takes the axis with more of the way left', () => {
    // P at the top left of an open lake: the goal 2 rows below and 1 column east, then 1 below and 3 east
    const open = (goal: number): Lake => ({ size: 4, tiles: Array.from({ length: 16 }, (_, i): Tile => (i === goal ? 'goal' : 'frozen')), start: 0, goal });
    expect(shortestMove(open(9), 0)).toBe('Down');
    expect(shortestMove(open(7), 0)).toBe('Right');
    // the longer axis is a hole: the other shortest move
    const holed = open(9);
    holed.tiles[4] = 'hole';
    expect(shortestMove(holed, 0)).toBe('Right');
    // walled in: no move
    holed.tiles[1] = 'hole';
    expect(shortestMove(holed, 0)).toBeNull();
  });

  test('misuse and bad config are one-line errors', async () => {
    await expect(guarded(frozenLake).step(answer('Up'))).rejects.toThrow(beforeReset('frozen_lake'));
    await expect(guarded(frozenLake).render('text')).rejects.toThrow(beforeReset('frozen_lake', 'render'));
    const bad = async (override: string) => {
      const error = await loadConfig({ cwd: ROOT, configFile: 'configs/frozen_lake.yaml', overrides: [override] }, new PluginHost()).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).not.toContain('\n');
      return (error as Error).message;
    };
    expect(await bad('custom_envs.FrozenLake.env_config.size=1')).toBe('custom_envs.FrozenLake.env_config.size: must be >= 2, got 1');
    expect(await bad('custom_envs.FrozenLake.env_config.p=0')).toContain('env_config.p: must be > 0');
    expect(await bad('custom_envs.FrozenLake.env_config.format_penalty=0.5')).toContain('env_config.format_penalty: must be <= 0');
    expect(await bad('+custom_envs.FrozenLake.env_config.slippery=true')).toContain('env_config.slippery: unknown key');
    const { config } = await loadConfig({ cwd: ROOT, configFile: 'configs/frozen_lake.yaml' }, new PluginHost());
    expect(config.custom_envs.FrozenLake!.env_config).toMatchObject({ size: 4, p: 0.8, is_slippery: false, max_steps: 20, format_penalty: -0.01 });
  });
});
