import { describe, expect, test } from 'bun:test';
import frozenLake from '../../../plugins/envs/frozen_lake';
import { optimalSuccess } from '../../../plugins/envs/frozen_lake/optimum';
import { lakeOf } from '../../../plugins/envs/frozen_lake/suite';
import { PluginHost } from '../../../src/host/plugin_host';
import { GuardedEnv } from '../../../src/sdk/guarded_env';
import type { Env, EvaluationHooks } from '../../../src/sdk/types';

/** The best success from the map's start within `moves` moves. */
const fromStart = (map: string[], moves: number, slippery: boolean) => {
  const lake = lakeOf({ map });
  return optimalSuccess(lake, lake.start, moves, slippery);
};

const make = (config: Record<string, unknown>) => new frozenLake.env(frozenLake.config.parse(config), new PluginHost().envContext()) as Env & EvaluationHooks;

/** Six moves from S to G, no holes. */
const OPEN = ['SFFF', 'FFFF', 'FFFF', 'FFFG'];
/** The goal walled off by holes. */
const WALLED = ['SFFF', 'FFFF', 'FFHH', 'FFHG'];
/** Gymnasium's own 4x4 map. */
const GYM = ['SFFF', 'FHFH', 'FFFH', 'HFFG'];

describe('the optimum of a frozen lake', () => {
  test('on ice that does not slip: 1 when a walk reaches the goal within the moves, else 0', () => {
    expect(fromStart(OPEN, 5, false)).toBe(0);
    expect(fromStart(OPEN, 6, false)).toBe(1);
    expect(fromStart(OPEN, 10, false)).toBe(1);
    expect(fromStart(WALLED, 10, false)).toBe(0);
    // around the holes: Right, Right, Down, Down, Right, Down
    expect(fromStart(GYM, 5, false)).toBe(0);
    expect(fromStart(GYM, 6, false)).toBe(1);
  });

  test('on slippery ice, by hand: SG/FF in one move 1/3, in two 5/9 (pushing Up into the edge beats Right)', () => {
    // One move: Right goes Right (goal), Up (the edge: stay) or Down, a third each; Up goes Up or Left (stay) or Right (goal).
    expect(fromStart(['SG', 'FF'], 1, true)).toBeCloseTo(1 / 3, 12);
    // Two moves, worth 1/3 at S and at the bottom right, 0 at the bottom left after one:
    // Up: stay 1/3, stay 1/3, goal 1 -> 5/9; Right: stay 1/3, goal 1, bottom left 0 -> 4/9.
    expect(fromStart(['SG', 'FF'], 2, true)).toBeCloseTo(5 / 9, 12);
    expect(fromStart(['SG', 'FF'], 0, true)).toBe(0);
  });

  test('on slippery ice: no better than on firm ice, more moves never hurt, a walled goal is 0', () => {
    let last = 0;
    for (let moves = 0; moves <= 40; moves++) {
      const slippery = fromStart(GYM, moves, true);
      expect(slippery).toBeGreaterThanOrEqual(last);
      expect(slippery).toBeLessThanOrEqual(fromStart(GYM, moves, false));
      last = slippery;
    }
    expect(fromStart(WALLED, 50, true)).toBe(0);
    // the gym map's known undiscounted optimum from the start, approached as the horizon grows
    expect(fromStart(GYM, 1000, true)).toBeCloseTo(0.8235, 3);
  });

  test("the env's hook: from the current state, within the caller's moves and the env's own max_steps", () => {
    const episode = { map: OPEN };
    const firm = make({ is_slippery: false });
    firm.reset(0, undefined, { episode });
    expect(firm.optimalSuccess!(10)).toBe(1);
    expect(firm.optimalSuccess!(5)).toBe(0);
    // the env's own limit: 7 turns, of which the edge takes two, leaves 5 for a walk of 6
    const short = make({ is_slippery: false, max_steps: 7 });
    short.reset(0, undefined, { episode });
    expect(short.optimalSuccess!(10)).toBe(1);
    short.step('<answer>Up</answer>');
    expect(short.optimalSuccess!(10)).toBe(1);
    short.step('<answer>Left</answer>');
    expect(short.optimalSuccess!(10)).toBe(0);
    // a step Right is one closer
    firm.step('<answer>Right</answer>');
    expect(firm.optimalSuccess!(5)).toBe(1);
    const slippery = make({ is_slippery: true });
    slippery.reset(3, undefined, { episode: { map: ['SG', 'FF'] } });
    expect(slippery.optimalSuccess!(2)).toBeCloseTo(5 / 9, 12);
  });

  test('through the guard: the optimum of the running episode; an env without the hook, or a bad value, fails the call', async () => {
    const guarded = new GuardedEnv(frozenLake, frozenLake.config.parse({ is_slippery: false }), new PluginHost().envContext());
    expect(guarded.hasOptimum).toBe(true);
    await guarded.reset(0, undefined, { episode: { map: OPEN } });
    expect(await guarded.optimalSuccess(6)).toEqual({ value: 1, failure: null });
    // a probability above 1 is malformed
    class OverOne extends frozenLake.env {
      optimalSuccess(): number {
        return 1.5;
      }
    }
    const bad = new GuardedEnv({ ...frozenLake, env: OverOne } as never, frozenLake.config.parse({}), new PluginHost().envContext());
    await bad.reset(0);
    expect((await bad.optimalSuccess(10)).failure?.reason).toBe(
      "env 'frozen_lake': optimalSuccess() returned a malformed result: 1.5, expected a probability in [0, 1]",
    );
    const bandit = await new PluginHost().resolveEnv('bandit');
    const none = new GuardedEnv(bandit, bandit.config.parse({}), new PluginHost().envContext());
    expect(none.hasOptimum).toBe(false);
    await none.reset(0);
    expect((await none.optimalSuccess(10)).failure?.reason).toContain('nothing (the env has no optimalSuccess())');
  });
});
