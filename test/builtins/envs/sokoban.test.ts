import { describe, expect, test } from 'bun:test';
import sokoban from '../../../plugins/envs/sokoban';
import { COLOURS } from '../../../plugins/envs/sokoban/render';
import { loadConfig } from '../../../src/config/load';
import { THINK_ANSWER_PATTERN } from '../../../src/sdk/answer';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, RgbFrame, StepResult, WarmStartHooks } from '../../../src/sdk/types';
import { ROOT } from '../../helpers';
import { beforeReset, guarded, guardedAfter, stepAfterEnd } from './guarded';

const make = (config: Record<string, unknown> = {}) => new sokoban.env(sokoban.config.parse(config), new PluginHost().envContext()) as Env & WarmStartHooks;
const reset = (env: Env, seed: number) => (env.reset(seed) as ResetResult).observation;
const step = (env: Env, response: string) => env.step(response) as StepResult;
/** Behind the guard, after `responses` from a reset with `seed`: a step() after the end is refused. */
const guardedAfterEnd = async (config: Record<string, unknown>, seed: number, responses: readonly string[]) =>
  (await guardedAfter(sokoban, config, seed, responses)).step(answer('Up'));
const answer = (action: string) => `<answer>${action}</answer>`;
const TWO_BOXES = { dim_room: [7, 7], num_boxes: 2, max_steps: 200 };

// ---------------------------------------------------------------------------------------------
// The test's own model of Sokoban, read from the text grid: the oracle the env is checked against.

type Action = 'Up' | 'Down' | 'Left' | 'Right';
const ACTIONS: Action[] = ['Up', 'Down', 'Left', 'Right'];
const MOVES: Record<Action, [number, number]> = { Up: [-1, 0], Down: [1, 0], Left: [0, -1], Right: [0, 1] };

interface State {
  rows: number;
  cols: number;
  walls: ReadonlySet<string>;
  targets: ReadonlySet<string>;
  boxes: ReadonlySet<string>;
  player: string;
}
type Push = 'onto' | 'off' | 'along' | null;

function parse(text: string): State {
  const lines = text.split('\n').map((line) => [...line]);
  const walls = new Set<string>();
  const targets = new Set<string>();
  const boxes = new Set<string>();
  let player = '';
  lines.forEach((line, r) =>
    line.forEach((symbol, c) => {
      const at = `${r},${c}`;
      if (symbol === '#') walls.add(at);
      if ('O√S'.includes(symbol)) targets.add(at);
      if ('X√'.includes(symbol)) boxes.add(at);
      if ('PS'.includes(symbol)) player = at;
    }),
  );
  return { rows: lines.length, cols: lines[0]!.length, walls, targets, boxes, player };
}

function show(state: State): string {
  const lines: string[] = [];
  for (let r = 0; r < state.rows; r++) {
    let line = '';
    for (let c = 0; c < state.cols; c++) {
      const at = `${r},${c}`;
      const target = state.targets.has(at);
      if (state.walls.has(at)) line += '#';
      else if (state.boxes.has(at)) line += target ? '√' : 'X';
      else if (state.player === at) line += target ? 'S' : 'P';
      else line += target ? 'O' : '_';
    }
    lines.push(line);
  }
  return lines.join('\n');
}

const shift = (at: string, [dr, dc]: [number, number]) => {
  const [r, c] = at.split(',').map(Number) as [number, number];
  return `${r + dr},${c + dc}`;
};
const solved = (state: State) => [...state.boxes].every((box) => state.targets.has(box));

/** One move under the rules: the next state, the reward, and what a push did. */
function play(state: State, action: Action): { next: State; reward: number; moved: boolean; push: Push } {
  const next = shift(state.player, MOVES[action]);
  const blocked = { next: state, reward: -0.1, moved: false, push: null };
  if (state.walls.has(next)) return blocked;
  if (!state.boxes.has(next)) return { next: { ...state, player: next }, reward: -0.1, moved: true, push: null };
  const behind = shift(next, MOVES[action]);
  if (state.walls.has(behind) || state.boxes.has(behind)) return blocked;
  const boxes = new Set(state.boxes);
  boxes.delete(next);
  boxes.add(behind);
  const moved: State = { ...state, boxes, player: next };
  const onto = state.targets.has(behind) && !state.targets.has(next);
  const off = state.targets.has(next) && !state.targets.has(behind);
  const reward = -0.1 + (onto ? 1 : 0) - (off ? 1 : 0) + (solved(moved) ? 10 : 0);
  return { next: moved, reward, moved: true, push: onto ? 'onto' : off ? 'off' : 'along' };
}

/** Breadth-first search for the shortest action list whose last move satisfies `goal`. */
function search(start: State, goal: (move: ReturnType<typeof play>) => boolean): Action[] | null {
  const key = (s: State) => `${s.player}|${[...s.boxes].sort().join('|')}`;
  const seen = new Set([key(start)]);
  const queue: Array<{ state: State; path: Action[] }> = [{ state: start, path: [] }];
  for (let head = 0; head < queue.length; head++) {
    const { state, path } = queue[head]!;
    for (const action of ACTIONS) {
      const move = play(state, action);
      if (goal(move)) return [...path, action];
      if (!move.moved || seen.has(key(move.next))) continue;
      seen.add(key(move.next));
      queue.push({ state: move.next, path: [...path, action] });
    }
  }
  return null;
}
const solve = (start: State) => search(start, (move) => solved(move.next));

// ---------------------------------------------------------------------------------------------

describe('sokoban env', () => {
  test('the same seed gives the same room; different seeds give different rooms', () => {
    expect(reset(make(), 7)).toBe(reset(make(), 7));
    expect(reset(make(TWO_BOXES), 7)).toBe(reset(make(TWO_BOXES), 7));
    const rooms = new Set(Array.from({ length: 30 }, (_, seed) => reset(make(), seed)));
    expect(rooms.size).toBeGreaterThan(25);
  });

  test('every room is well formed and solvable, and the solution plays out in the env (100 rooms each of 1 and 2 boxes)', () => {
    for (const config of [{ dim_room: [6, 6], num_boxes: 1, max_steps: 200 }, TWO_BOXES]) {
      const boxes = config.num_boxes;
      const [rows, cols] = config.dim_room as [number, number];
      for (let seed = 0; seed < 100; seed++) {
        const env = make(config);
        const text = reset(env, seed);
        const lines = text.split('\n');
        expect(lines).toHaveLength(rows);
        expect(lines.every((line) => [...line].length === cols && /^#[#_OX√PS]*#$/.test(line))).toBe(true);
        expect(lines[0]).toBe('#'.repeat(cols));
        expect(lines.at(-1)).toBe('#'.repeat(cols));
        // no box starts on a target, and there is one target per box
        expect(text.match(/X/g)).toHaveLength(boxes);
        expect(text).not.toContain('√');
        expect(text.match(/[OS]/g)).toHaveLength(boxes);
        expect(text.match(/[PS]/g)).toHaveLength(1);
        const start = parse(text);
        const solution = solve(start);
        expect(solution).not.toBeNull();
        let state = start;
        for (const action of solution!) {
          const expected = play(state, action);
          const result = step(env, answer(action));
          expect(result.observation).toBe(show(expected.next));
          expect(result.reward).toBeCloseTo(expected.reward, 10);
          state = expected.next;
        }
        expect(solved(state)).toBe(true);
      }
    }
  });

  test('rewards: -0.1 a move, +1 onto a target, -1 off one, and +10 with the end when solved', async () => {
    // a 2-box room where a box can be pushed onto its target and then off it again
    for (let seed = 0; seed < 100; seed++) {
      const env = make(TWO_BOXES);
      const start = parse(reset(env, seed));
      const path = search(start, (move) => move.push === 'off');
      if (!path) continue;
      const rewards = path.map((action) => step(env, answer(action)));
      const last = rewards.at(-1)!;
      expect(last.reward).toBeCloseTo(-1.1, 10);
      expect(last.info.actionDesc).toContain('off its target');
      expect(last).toMatchObject({ terminated: false, truncated: false });
      expect(last.info.metrics).toEqual({ success: false, action_is_valid: true, action_is_effective: true, format_penalty: 0 });
      expect(rewards.map((r) => r.reward.toFixed(1))).toContain('0.9');
      for (const r of rewards.slice(0, -1)) expect(['-0.1', '0.9']).toContain(r.reward.toFixed(1));
      // solving: the final push earns its +1 and the +10, and ends the episode as a success
      const solution = solve(parse(last.observation))!;
      const final = solution.map((action) => step(env, answer(action))).at(-1)!;
      expect(final.reward).toBeCloseTo(10.9, 10);
      expect(final).toMatchObject({ terminated: true, truncated: false });
      expect(final.info.metrics).toEqual({ success: true, action_is_valid: true, action_is_effective: true, format_penalty: 0 });
      expect(final.info.metricsAgg).toEqual({ success: 'last' });
      expect(final.observation).not.toMatch(/[XO]/);
      await expect(guardedAfterEnd(TWO_BOXES, seed, [...path, ...solution].map(answer))).rejects.toThrow(stepAfterEnd('sokoban'));
      return;
    }
    throw new Error('no room allowed pushing a box off a target');
  });

  test('a move into a wall, or a push against a wall or a second box, is valid but not effective', () => {
    const cases = new Set<string>();
    for (let seed = 0; cases.size < 2 && seed < 200; seed++) {
      const env = make(TWO_BOXES);
      const text = reset(env, seed);
      const state = parse(text);
      for (const action of ACTIONS) {
        const next = shift(state.player, MOVES[action]);
        const kind = state.walls.has(next) ? 'wall' : state.boxes.has(next) && !play(state, action).moved ? 'box' : null;
        if (!kind || cases.has(kind)) continue;
        const result = step(env, answer(action));
        expect(result).toMatchObject({ observation: text, terminated: false, truncated: false });
        expect(result.reward).toBeCloseTo(-0.1, 10);
        expect(result.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
        cases.add(kind);
        break;
      }
    }
    expect([...cases].sort()).toEqual(['box', 'wall']);
  });

  test('agrees with the rules over random play (many rooms, every kind of push seen)', () => {
    const pushes = new Map<Push, number>();
    for (let seed = 0; seed < 60; seed++) {
      const env = make({ ...TWO_BOXES, max_steps: 30 });
      let state = parse(reset(env, seed));
      for (let turn = 0; turn < 30; turn++) {
        const response = env.sampleRandomAction();
        const action = /<answer>(\w+)<\/answer>/.exec(response)![1] as Action;
        const expected = play(state, action);
        const result = step(env, response);
        expect(result.observation).toBe(show(expected.next));
        expect(result.reward).toBeCloseTo(expected.reward, 10);
        expect(result.info.metrics.action_is_effective).toBe(expected.moved);
        pushes.set(expected.push, (pushes.get(expected.push) ?? 0) + 1);
        state = expected.next;
        if (result.terminated || result.truncated) break;
      }
    }
    for (const kind of ['onto', 'off', 'along'] as const) expect(pushes.get(kind) ?? 0).toBeGreaterThan(0);
  });

  test('an unparseable response is an invalid action: state unchanged, the move price plus the format penalty, action null', () => {
    const env = make({ format_penalty: -0.15 });
    const text = reset(env, 4);
    for (const response of ['Up', '<answer>push up</answer>', '<answer>north</answer>', '']) {
      const result = step(env, response);
      expect(result).toMatchObject({ observation: text, terminated: false, truncated: false });
      expect(result.reward).toBeCloseTo(-0.25, 10);
      expect(result.info.action).toBeNull();
      expect(result.info.metrics).toEqual({ success: false, action_is_valid: false, action_is_effective: false, format_penalty: -0.15 });
    }
    expect(env.render('text')).toBe(text);
  });

  test('the episode is truncated at max_steps; invalid responses count as turns', async () => {
    const env = make({ max_steps: 3 });
    // an invalid last turn truncates too
    const once = make({ max_steps: 1 });
    reset(once, 0);
    expect(step(once, 'nothing')).toMatchObject({ terminated: false, truncated: true });
    await expect(guardedAfterEnd({ max_steps: 1 }, 0, ['nothing'])).rejects.toThrow(stepAfterEnd('sokoban'));
    reset(env, 2);
    expect(step(env, 'nothing')).toMatchObject({ terminated: false, truncated: false });
    expect(step(env, 'nothing')).toMatchObject({ terminated: false, truncated: false });
    expect(step(env, answer('Up'))).toMatchObject({ terminated: false, truncated: true });
    await expect(guardedAfterEnd({ max_steps: 3 }, 2, ['nothing', 'nothing', answer('Up')])).rejects.toThrow(stepAfterEnd('sokoban'));
    reset(env, 2);
    expect(step(env, 'nothing').truncated).toBe(false);
  });

  test('actions ignore case; a <think> block may come first; another pattern can require it', () => {
    const actionOf = (response: string, config: Record<string, unknown> = {}) => {
      const env = make(config);
      reset(env, 1);
      return step(env, response).info.action;
    };
    expect(actionOf('<answer> lEFT </answer>')).toBe('Left');
    expect(actionOf('<think>the box is above</think>\n<answer>up</answer>')).toBe('Up');
    expect(actionOf('<answer>Up</answer>', { action_pattern: THINK_ANSWER_PATTERN })).toBeNull();
    expect(actionOf('<think>x</think><answer>RIGHT</answer>', { action_pattern: THINK_ANSWER_PATTERN })).toBe('Right');
    const strict = make({ action_pattern: THINK_ANSWER_PATTERN });
    reset(strict, 1);
    expect(step(strict, strict.sampleRandomAction()).info.metrics.action_is_valid).toBe(true);
  });

  test('the instruction explains the symbols, the actions and the answer format', () => {
    const { info } = make().reset(0) as ResetResult;
    for (const part of ['# = wall', '_ = empty', 'O = target', 'X = box', '√ = box on', 'P = player', 'S = player on', 'Up, Down, Left, Right', '<answer>']) {
      expect(info.instruction).toContain(part);
    }
  });

  test('render: the text grid, and a picture with one colour per kind of cell', () => {
    const colourOf = new Map<string, Set<string>>();
    let playerOnTarget = false;
    for (let seed = 0; seed < 40; seed++) {
      const env = make({ ...TWO_BOXES, dim_room: [7, 8] });
      const text = reset(env, seed);
      // half the rooms get a box pushed onto a target, the others the player walked onto one
      const goal =
        seed % 2 ? (move: ReturnType<typeof play>) => move.push === 'onto' : (move: ReturnType<typeof play>) => move.next.targets.has(move.next.player);
      const path = search(parse(text), goal) ?? [];
      for (const action of path) step(env, answer(action));
      const grid = env.render('text') as string;
      const frame = env.render('rgb') as RgbFrame;
      expect(frame).toMatchObject({ width: 160, height: 140 });
      expect(frame.data).toHaveLength(160 * 140 * 3);
      const pixel = (x: number, y: number) => [...frame.data.subarray((y * frame.width + x) * 3, (y * frame.width + x) * 3 + 3)].join();
      grid.split('\n').forEach((line, row) =>
        [...line].forEach((symbol, col) => {
          const [x, y] = [col * 20, row * 20];
          if (!colourOf.has(symbol)) colourOf.set(symbol, new Set());
          colourOf.get(symbol)!.add(pixel(x + 10, y + 10));
          if (symbol === 'S') {
            // the player stands inside the target's ring
            expect(pixel(x + 10, y + 10)).toBe(COLOURS.player.join());
            expect(pixel(x + 2, y + 10)).toBe(COLOURS.target.join());
            playerOnTarget = true;
          }
        }),
      );
      expect(env.render('text')).toBe(grid); // rendering changes nothing
    }
    expect(playerOnTarget).toBe(true);
    // the centre of each kind of cell has one colour, and no two kinds share it
    const centres = ['#', '_', 'O', 'X', '√', 'P'].map((symbol) => {
      expect(colourOf.get(symbol)?.size).toBe(1);
      return [...colourOf.get(symbol)!][0];
    });
    expect(new Set(centres).size).toBe(6);
    expect(centres).toEqual([COLOURS.wall, COLOURS.floor, COLOURS.target, COLOURS.box, COLOURS.boxOnTarget, COLOURS.player].map((c) => c.join()));
  });

  test('sampleRandomAction is a well-formed valid answer, seeded', () => {
    const env = make();
    reset(env, 5);
    const samples = Array.from({ length: 40 }, () => env.sampleRandomAction());
    for (const sample of samples) expect(sample).toMatch(/^<answer>(Up|Down|Left|Right)<\/answer>$/);
    expect(new Set(samples).size).toBe(4);
    reset(env, 5);
    expect(Array.from({ length: 40 }, () => env.sampleRandomAction())).toEqual(samples);
  });

  test('the notes read the room: the box from the player, the target from the box, the walls next to the player', () => {
    const words = ([dr, dc]: [number, number]) =>
      `${dr === 0 ? 'same row' : `${Math.abs(dr)} ${dr > 0 ? 'below' : 'above'}`} ${dc === 0 ? 'same column' : `${Math.abs(dc)} ${dc > 0 ? 'east' : 'west'}`}`;
    const cell = (at: string) => at.split(',').map(Number) as [number, number];
    const from = (a: string, b: string): [number, number] => [cell(b)[0] - cell(a)[0], cell(b)[1] - cell(a)[1]];
    const env = make();
    for (let seed = 0; seed < 50; seed++) {
      const state = parse(reset(env, seed));
      const [box] = [...state.boxes] as [string];
      const [target] = [...state.targets] as [string];
      const walls = ACTIONS.filter((action) => state.walls.has(shift(state.player, MOVES[action])));
      expect(env.stateNotes!()).toBe(`box ${words(from(state.player, box))}; target from box ${words(from(box, target))}; walls ${walls.join(' ') || 'none'}`);
    }
  });

  test('solutionAction plays a shortest solution, of equally short first moves the first in Up Down Left Right (200 rooms of 1 box, 20 of 2)', () => {
    const cases = [
      ...Array.from({ length: 200 }, (_, seed) => ({ config: {}, seed })),
      ...Array.from({ length: 20 }, (_, seed) => ({ config: TWO_BOXES, seed })),
    ];
    for (const { config, seed } of cases) {
      const env = make(config);
      let state = parse(reset(env, seed));
      const length = solve(state)!.length;
      for (let turn = 1; turn <= length; turn++) {
        const left = solve(state)!.length;
        const shortestFirst = ACTIONS.find((action) => {
          const move = play(state, action);
          return move.moved && (solved(move.next) ? left === 1 : solve(move.next)?.length === left - 1);
        });
        const response = env.solutionAction!()!;
        expect(response).toBe(answer(shortestFirst!));
        const result = step(env, response);
        expect(result.terminated).toBe(turn === length);
        state = parse(result.observation);
      }
      expect(solved(state)).toBe(true);
    }
  });

  test('a shallower search_depth gives rooms closer to solved (the training rooms of sokoban_compact)', () => {
    const meanSolution = (config: Record<string, unknown>) => {
      let moves = 0;
      for (let seed = 0; seed < 40; seed++) moves += solve(parse(reset(make(config), seed)))!.length;
      return moves / 40;
    };
    const near = meanSolution({ search_depth: 4 });
    const task = meanSolution({});
    expect(near).toBeLessThan(task - 1.5);
  });

  test('larger rooms with more boxes generate quickly and stay well formed', () => {
    const started = performance.now();
    for (let seed = 0; seed < 5; seed++) {
      const text = reset(make({ dim_room: [10, 10], num_boxes: 3, search_depth: 100 }), seed);
      expect(text.match(/X/g)).toHaveLength(3);
      expect(text.match(/[OS]/g)).toHaveLength(3);
    }
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test('misuse and bad config are one-line errors', async () => {
    await expect(guarded(sokoban).step(answer('Up'))).rejects.toThrow(beforeReset('sokoban'));
    await expect(guarded(sokoban).render('rgb')).rejects.toThrow(beforeReset('sokoban', 'render'));
    const bad = async (...overrides: string[]) => {
      const error = await loadConfig({ cwd: ROOT, configFile: 'configs/sokoban.yaml', overrides }, new PluginHost()).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).not.toContain('\n');
      return (error as Error).message;
    };
    const at = 'custom_envs.SimpleSokoban.env_config';
    expect(await bad(`${at}.dim_room=[6]`)).toBe(`${at}.dim_room: needs at least 2 items`);
    expect(await bad(`${at}.dim_room=[6,4]`)).toBe(`${at}.dim_room[1]: must be >= 5, got 4`);
    expect(await bad(`${at}.num_boxes=0`)).toContain(`${at}.num_boxes: must be >= 1`);
    expect(await bad(`${at}.num_boxes=4`, `${at}.dim_room=[5,6]`)).toBe(
      `${at}.num_boxes: 4 boxes need a room with at least 16 cells inside its walls; dim_room [5, 6] has 12`,
    );
    expect(await bad(`${at}.format_penalty=1`)).toContain(`${at}.format_penalty: must be <= 0`);
    expect(await bad(`+${at}.boxes=2`)).toContain(`${at}.boxes: unknown key`);
    const { config } = await loadConfig({ cwd: ROOT, configFile: 'configs/sokoban.yaml' }, new PluginHost());
    expect(config.custom_envs.SimpleSokoban!.env_config).toMatchObject({ dim_room: [6, 6], num_boxes: 1, format_penalty: -0.15, max_steps: 20 });
  });
});
