/**
 * The seated-env contract (types.ts SeatedEnv, defineSeatedEnv): the registry's check of the seat
 * spec, the guard's check of every result, and `agentic plugins check`'s seated checks, each of
 * which a game broken in one way fails alone.
 */
import { describe, expect, test } from 'bun:test';
import { z } from 'zod';
import ticTacToe from '../../plugins/envs/tic_tac_toe';
import { checkEnv } from '../../src/cli/plugins_check';
import { PluginError } from '../../src/errors';
import { PluginHost } from '../../src/host/plugin_host';
import { checkDefinition } from '../../src/host/registry';
import { ENV_CHECKS, SEATED_ENV_CHECKS } from '../../src/sdk/check_env';
import { defineSeatedEnv } from '../../src/sdk/define';
import { GuardedEnv } from '../../src/sdk/guarded_env';
import type { EnvPlugin, SeatedResetResult, SeatedStepResult, SeatSpec } from '../../src/sdk/types';

const context = new PluginHost().envContext();

/** What the Race below can be made to get wrong. */
interface Defects {
  /** The winner gets +1 and the loser nothing: not zero-sum, though it says so. */
  notZeroSum?: boolean;
  /** A bad answer also charges the other seat. */
  chargesOther?: boolean;
  /** Gives one reward too few. */
  shortRewards?: boolean;
  /** Seat B never gets to move. */
  oneSeat?: boolean;
}

/**
 * Two seats race to 3: each move `<answer>1</answer>` or `<answer>2</answer>` adds to the seat's
 * count; the first to reach 3 wins (+1, the other -1). A bad answer costs the seat its turn.
 */
function race(defects: Defects = {}, seats: Partial<SeatSpec> = {}): EnvPlugin {
  class Race {
    private counts = [0, 0];
    private mover = 0;
    private pick = 0;
    reset(seed: number): SeatedResetResult {
      this.counts = [0, 0];
      this.mover = defects.oneSeat ? 0 : seed % 2;
      this.pick = seed;
      return { observation: this.text(), info: { instruction: 'Race to 3.' }, seat: this.mover, instructions: ['You are A.', 'You are B.'] };
    }
    step(response: string): SeatedStepResult {
      const move = Number(/<answer>([12])<\/answer>/.exec(response)?.[1] ?? Number.NaN);
      const mover = this.mover;
      const zero = defects.shortRewards ? [0] : [0, 0];
      if (Number.isNaN(move)) {
        const rewards = defects.chargesOther ? zero.map((_, s) => (s === mover ? 0 : -0.5)) : zero;
        this.mover = defects.oneSeat ? 0 : 1 - mover;
        return {
          observation: this.text(),
          reward: 0,
          terminated: false,
          truncated: false,
          info: { metrics: { action_is_valid: false } },
          seat: this.mover,
          rewards,
        };
      }
      this.counts[mover]! += move;
      if (this.counts[mover]! >= 3) {
        const rewards = [0, 1].map((s) => (s === mover ? 1 : defects.notZeroSum ? 0 : -1));
        return { observation: this.text(), reward: 1, terminated: true, truncated: false, info: { metrics: { action_is_valid: true } }, seat: mover, rewards };
      }
      this.mover = defects.oneSeat ? 0 : 1 - mover;
      return {
        observation: this.text(),
        reward: 0,
        terminated: false,
        truncated: false,
        info: { metrics: { action_is_valid: true } },
        seat: this.mover,
        rewards: zero,
      };
    }
    private text(): string {
      return `A ${this.counts[0]}, B ${this.counts[1]}; ${'AB'[this.mover]} to move`;
    }
    render(mode: 'text' | 'rgb'): string | null {
      return mode === 'text' ? this.text() : null;
    }
    close(): void {}
    sampleRandomAction(): string {
      this.pick = (this.pick * 7 + 3) % 11;
      return `<answer>${1 + (this.pick % 2)}</answer>`;
    }
    opponentAction(): string {
      return '<answer>2</answer>';
    }
  }
  return defineSeatedEnv({
    name: 'race',
    description: 'Two seats race to 3.',
    config: z.strictObject({}),
    seats: { names: ['A', 'B'], zeroSum: true, opponents: ['greedy'], ...seats },
    env: Race,
  });
}

async function statuses(plugin: EnvPlugin) {
  const report = await checkEnv(plugin, {}, { context, episodes: 4 });
  return Object.fromEntries(report.checks.map((c) => [c.name, c.status as string]));
}

const allPass: Record<string, string> = Object.fromEntries([...Object.keys(ENV_CHECKS), ...Object.keys(SEATED_ENV_CHECKS)].map((name) => [name, 'pass']));

describe('the seat spec', () => {
  test('the registry refuses a spec that cannot name its seats or misses what it promises', () => {
    const refused = (seats: Partial<SeatSpec>) => {
      try {
        checkDefinition(race({}, seats), 'race.ts');
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(PluginError);
        return (error as Error).message;
      }
    };
    expect(refused({})).toBeNull();
    expect(refused({ names: ['A'] })).toBe("race.ts: env 'race': seats names must list at least 2 seats");
    expect(refused({ names: ['A', 'A'] })).toBe("race.ts: env 'race': seats names must be unique, got A, A");
    expect(refused({ names: ['A', 'no spaces'] })).toContain('name "no spaces" must be letters, digits, _ or -');
    expect(refused({ opponents: ['random'] })).toContain("opponents must not list 'random'");
    const plain = { ...race(), env: class extends (race().env as new (...a: unknown[]) => object) {} } as EnvPlugin;
    expect(() => checkDefinition(plain, 'race.ts')).not.toThrow();
  });
});

describe('the guard', () => {
  test("a seated step's malformed seat fields fail the step, which ends the game for every seat and charges none", async () => {
    const guard = new GuardedEnv(race({ shortRewards: true }), {}, context);
    const reset = (await guard.reset(0)) as unknown as SeatedResetResult & { failure: null };
    expect(reset.seat).toBe(0);
    const step = (await guard.step('<answer>1</answer>')) as Awaited<ReturnType<GuardedEnv['step']>> & Partial<SeatedStepResult>;
    expect(step.failure?.reason).toBe("env 'race': step() returned a malformed result: rewards is a list, expected one number per seat (2)");
    expect(step.rewards).toEqual([0, 0]);
    expect(step.seat).toBe(0);
  });

  test("opponentAction answers for the seat to move; 'random' is sampleRandomAction", async () => {
    const guard = new GuardedEnv(race(), {}, context);
    await guard.reset(1);
    expect((await guard.opponentAction('greedy')).response).toBe('<answer>2</answer>');
    expect((await guard.opponentAction('random')).response).toMatch(/^<answer>[12]<\/answer>$/);
  });
});

describe('agentic plugins check on seated envs', () => {
  test('a correct game and tic_tac_toe pass every check, the seated ones included', async () => {
    expect(await statuses(race())).toEqual(allPass);
    expect(await statuses(ticTacToe)).toEqual(allPass);
  });

  test('each defect fails its own check', async () => {
    expect(await statuses(race({ notZeroSum: true }))).toEqual({ ...allPass, seat_rewards: 'fail' });
    expect(await statuses(race({ chargesOther: true }))).toEqual({ ...allPass, bad_answer: 'fail' });
    expect(await statuses(race({ oneSeat: true }))).toEqual({ ...allPass, turn_order: 'fail' });
    const short = await statuses(race({ shortRewards: true }));
    expect(short.step).toBe('fail');
  });
});
