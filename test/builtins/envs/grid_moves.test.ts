/**
 * Several moves per turn in the grid envs (env_config max_actions_per_turn and action_sep, RAGEN's
 * names; plugins/envs/_grid/moves.ts), on maps and rooms given as suite episodes so every move's
 * outcome is known.
 */
import { describe, expect, test } from 'bun:test';
import frozenLake from '../../../plugins/envs/frozen_lake';
import sokoban from '../../../plugins/envs/sokoban';
import { checkEnv } from '../../../src/cli/plugins_check';
import { loadConfig } from '../../../src/config/load';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, EnvPlugin, ResetResult, StepResult } from '../../../src/sdk/types';
import { ROOT } from '../../helpers';

const answer = (moves: string) => `<answer>${moves}</answer>`;
const step = (env: Env, response: string) => env.step(response) as StepResult;

/** FrozenLake on a given map (Gymnasium's letters), not slippery, so every move goes where it is told. */
function lake(map: readonly string[], config: Record<string, unknown> = {}): Env {
  const env = new frozenLake.env(frozenLake.config.parse({ is_slippery: false, ...config }), new PluginHost().envContext()) as Env;
  env.reset(0, undefined, { episode: { map: [...map] } });
  return env;
}

/** Sokoban in a given room (the default symbols). */
function room(rows: readonly string[], config: Record<string, unknown> = {}): Env {
  const env = new sokoban.env(sokoban.config.parse(config), new PluginHost().envContext()) as Env;
  env.reset(0, undefined, { episode: { room: [...rows] } });
  return env;
}

const OPEN = ['SFFF', 'FHFF', 'FFFF', 'HFFG'];
// the box one cell left of its target, the player two cells left of the box
const NEAR_SOLVED = ['#######', '#P_XO_#', '#_____#', '#######'];

describe('one move per turn (max_actions_per_turn 1, the default)', () => {
  test('an answer of several moves is not an action, and no actions_per_turn is reported', () => {
    const env = lake(OPEN, { format_penalty: -0.05 });
    const result = step(env, answer('Right || Down'));
    expect(result).toMatchObject({ reward: -0.05, terminated: false, truncated: false });
    expect(result.info.action).toBeNull();
    expect(result.info.metrics).toEqual({ success: false, action_is_valid: false, action_is_effective: false, format_penalty: -0.05 });
    expect(step(env, answer('Right')).info.metrics).toEqual({ success: false, action_is_valid: true, action_is_effective: true, format_penalty: 0 });
  });

  test('the instruction asks for exactly one action, as it always has', () => {
    const { info } = lake(OPEN).reset(0) as ResetResult;
    expect(info.instruction!.split('\n').at(-1)).toBe(
      'Actions: Left, Down, Right, Up. Give exactly one action per turn inside answer tags, for example <answer>Right</answer>.',
    );
    const soko = room(NEAR_SOLVED).reset(0) as ResetResult;
    expect(soko.info.instruction!.split('\n').at(-1)).toBe(
      'Actions: Up, Down, Left, Right. Give exactly one action per turn inside answer tags, for example <answer>Left</answer>.',
    );
  });
});

describe('several moves per turn', () => {
  test('FrozenLake plays the moves in order in one step and reports how many it played', () => {
    const env = lake(OPEN, { max_actions_per_turn: 2 });
    const result = step(env, answer('Right || Right'));
    expect(result).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(result.observation.split('\n')[0]).toBe('__P_');
    expect(result.info.action).toBe('Right || Right');
    expect(result.info.actionDesc).toBe('Turn 1: you tried to go Right, then you tried to go Right.');
    expect(result.info.metrics).toEqual({ success: false, action_is_valid: true, action_is_effective: true, format_penalty: 0, actions_per_turn: 2 });
    // one move is still a whole answer; the separator needs no spaces and names ignore case
    expect(step(env, answer('down')).info.metrics.actions_per_turn).toBe(1);
    expect(step(env, answer('up||LEFT')).info.action).toBe('Up || Left');
  });

  test("Sokoban's turn reward is the sum of its moves' rewards", () => {
    const env = room(NEAR_SOLVED, { max_actions_per_turn: 2 });
    const walk = step(env, answer('Down || Up'));
    expect(walk.reward).toBeCloseTo(-0.2, 10);
    expect(walk.info.metrics).toMatchObject({ success: false, action_is_valid: true, action_is_effective: true, actions_per_turn: 2 });
    // a walk (-0.1), then the push that solves the room (-0.1 + 1 + 10)
    const solve = step(env, answer('Right || Right'));
    expect(solve.reward).toBeCloseTo(10.8, 10);
    expect(solve).toMatchObject({ terminated: true, truncated: false });
    expect(solve.info.metrics).toMatchObject({ success: true, actions_per_turn: 2 });
    expect(solve.info.actionDesc).toBe('Turn 2: you moved Right, then you pushed a box Right onto a target, and every box is on a target.');
  });

  test('play stops at the move that ends the episode: a hole, the goal, the solved room', () => {
    const hole = step(lake(OPEN, { max_actions_per_turn: 3 }), answer('Right || Down || Right'));
    expect(hole).toMatchObject({ reward: 0, terminated: true });
    expect(hole.observation.split('\n')[1]).toBe('_X__');
    expect(hole.info.action).toBe('Right || Down');
    expect(hole.info.metrics).toMatchObject({ success: false, actions_per_turn: 2 });

    const goal = step(lake(['SFG', 'FFF', 'FFF'], { max_actions_per_turn: 3 }), answer('Right || Right || Down'));
    expect(goal).toMatchObject({ reward: 1, terminated: true });
    expect(goal.info.action).toBe('Right || Right');
    expect(goal.info.metrics).toMatchObject({ success: true, actions_per_turn: 2 });

    const solved = step(room(NEAR_SOLVED, { max_actions_per_turn: 4 }), answer('Right || Right || Left || Left'));
    expect(solved.reward).toBeCloseTo(10.8, 10);
    expect(solved.info.action).toBe('Right || Right');
  });

  test('moves past max_actions_per_turn are dropped unplayed, without a penalty (as RAGEN)', () => {
    const env = lake(OPEN, { max_actions_per_turn: 2, format_penalty: -0.05 });
    const result = step(env, answer('Right || Right || Right || Down'));
    expect(result.reward).toBe(0);
    expect(result.observation.split('\n')[0]).toBe('__P_');
    expect(result.info.action).toBe('Right || Right');
    expect(result.info.actionDesc).toBe('Turn 1: you tried to go Right, then you tried to go Right; the moves after the first 2 were not played.');
    expect(result.info.metrics).toEqual({ success: false, action_is_valid: true, action_is_effective: true, format_penalty: 0, actions_per_turn: 2 });
  });

  test('a move that names no action is skipped and the turn carries the format penalty; no valid move at all is an invalid turn', () => {
    const env = lake(OPEN, { max_actions_per_turn: 3, format_penalty: -0.05 });
    const result = step(env, answer('Right || Jump || Right'));
    expect(result.reward).toBe(-0.05);
    expect(result.observation.split('\n')[0]).toBe('__P_');
    expect(result.info.action).toBe('Right || Right');
    expect(result.info.actionDesc).toBe('Turn 1: you tried to go Right, then you tried to go Right; "Jump" is not an action and was skipped.');
    expect(result.info.metrics).toEqual({ success: false, action_is_valid: false, action_is_effective: true, format_penalty: -0.05, actions_per_turn: 2 });
    // only the first max_actions_per_turn count: an invalid fourth move is dropped, not penalised
    expect(step(env, answer('Left || Left || Down || Jump')).reward).toBe(0);

    const none = step(env, answer('Jump || Fly'));
    expect(none).toMatchObject({ reward: -0.05, terminated: false });
    expect(none.info.action).toBeNull();
    expect(none.info.metrics).toEqual({ success: false, action_is_valid: false, action_is_effective: false, format_penalty: -0.05, actions_per_turn: 0 });
    // Sokoban: each played move pays its price, the skipped one nothing, the penalty once
    const soko = step(room(NEAR_SOLVED, { max_actions_per_turn: 3, format_penalty: -0.15 }), answer('Down || Jump || Up'));
    expect(soko.reward).toBeCloseTo(-0.35, 10);
    expect(step(room(NEAR_SOLVED, { max_actions_per_turn: 3, format_penalty: -0.15 }), answer('')).reward).toBeCloseTo(-0.25, 10);
  });

  test("max_steps counts turns, not moves; the env's own separator is read", () => {
    const env = lake(['SFFFF', 'FFFFF', 'FFFFF', 'FFFFF', 'FFFFG'], { max_actions_per_turn: 3, action_sep: ';', max_steps: 2 });
    expect(step(env, answer('Right; Right; Right'))).toMatchObject({ terminated: false, truncated: false });
    const last = step(env, answer('Down;Down;Down'));
    expect(last).toMatchObject({ terminated: false, truncated: true });
    expect(last.info.action).toBe('Down ; Down ; Down');
    expect(last.info.actionDesc).toStartWith('Turn 2: ');
  });

  test('the instruction offers up to max_actions_per_turn moves, with the separator and an example', () => {
    const { info } = lake(OPEN, { max_actions_per_turn: 3 }).reset(0) as ResetResult;
    expect(info.instruction!.split('\n').at(-1)).toBe(
      'Actions: Left, Down, Right, Up. Give up to 3 actions per turn inside answer tags, separated by "||" and played in order until the game ends, for example <answer>Right || Down</answer>.',
    );
    const soko = room(NEAR_SOLVED, { max_actions_per_turn: 2, action_sep: ',' }).reset(0) as ResetResult;
    expect(soko.info.instruction).toContain(
      'Give up to 2 actions per turn inside answer tags, separated by "," and played in order until the game ends, for example <answer>Left , Up</answer>.',
    );
  });

  test('the solution stays one move, valid at any max_actions_per_turn', () => {
    const env = lake(OPEN, { max_actions_per_turn: 3 }) as Env & { solutionAction(): string };
    const result = step(env, env.solutionAction());
    expect(result.info.metrics).toMatchObject({ action_is_valid: true, actions_per_turn: 1 });
  });

  test('the random answer gives 1 to max_actions_per_turn moves, each count drawn, all of them valid', () => {
    const counts = new Set<number>();
    for (let seed = 0; seed < 40; seed++) {
      const env = lake(OPEN, { max_actions_per_turn: 3 });
      env.reset(seed, undefined, { episode: { map: [...OPEN] } });
      const answer = env.sampleRandomAction() as string;
      expect(answer).toMatch(/^<answer>(Left|Down|Right|Up)( \|\| (Left|Down|Right|Up))*<\/answer>$/);
      const moves = answer.split('||').length;
      counts.add(moves);
      expect(step(env, answer).info.metrics).toMatchObject({ action_is_valid: true });
    }
    expect([...counts].sort()).toEqual([1, 2, 3]);
    // at N = 1 it is one move, as it always was
    expect(lake(OPEN).sampleRandomAction()).toMatch(/^<answer>(Left|Down|Right|Up)<\/answer>$/);
  });

  for (const [name, plugin] of [
    ['frozen_lake', frozenLake],
    ['sokoban', sokoban],
  ] as const) {
    test(`${name} passes the env checker with several moves per turn`, async () => {
      const report = await checkEnv(plugin as unknown as EnvPlugin, { max_actions_per_turn: 3 }, { context: new PluginHost(ROOT).envContext(), episodes: 4 });
      expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
    });
  }

  test('bad settings are one-line config errors', async () => {
    const bad = async (override: string) => {
      const error = await loadConfig({ cwd: ROOT, configFile: 'configs/frozen_lake.yaml', overrides: [override] }, new PluginHost()).catch((e: Error) => e);
      expect((error as Error).message).not.toContain('\n');
      return (error as Error).message;
    };
    const at = 'custom_envs.FrozenLake.env_config';
    expect(await bad(`+${at}.max_actions_per_turn=0`)).toBe(`${at}.max_actions_per_turn: must be >= 1, got 0`);
    expect(await bad(`+${at}.action_sep=''`)).toContain(`${at}.action_sep: `);
    expect(await bad(`+${at}.action_sep=o`)).toBe(`${at}.action_sep: must not be part of an action name (Left, Down, Right, Up)`);
  });
});
