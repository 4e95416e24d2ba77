import { describe, expect, test } from 'bun:test';
import guessTheNumber from '../../../plugins/envs/guess_the_number';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, StepResult } from '../../../src/sdk/types';

const make = (config: Record<string, unknown> = {}) => new guessTheNumber.env(guessTheNumber.config.parse(config), new PluginHost().envContext()) as Env;

/** The hidden number of a reset env, found by playing every number once on a copy. */
function targetOf(seed: number, config: Record<string, unknown> = {}): number {
  for (let n = 1; n <= 20; n++) {
    const env = make({ ...config, max_turns: 20 });
    env.reset(seed);
    if ((env.step(`\\boxed{${n}}`) as StepResult).info.metrics.success) return n;
  }
  throw new Error('no number won');
}

describe('guess_the_number env (GEM game:GuessTheNumber-v0)', () => {
  test("GEM's id names it, and reset shows GEM's instruction with the suffix in info", async () => {
    expect((await new PluginHost().resolveEnv('game:GuessTheNumber-v0')).name).toBe('guess_the_number');
    const reset = make({ max_turns: 5 }).reset(1) as ResetResult;
    expect(reset.observation).toStartWith('You are playing Guess The Number.\nYou have to guess the number between 1 and 20 (inclusive) within 5 turns.\n');
    expect(reset.info).toMatchObject({ instruction: '', suffix: 'Enter your next guess.' });
  });

  test('the same seed hides the same number; seeds spread over the range', () => {
    expect(targetOf(7)).toBe(targetOf(7));
    expect(new Set(Array.from({ length: 40 }, (_, s) => targetOf(s))).size).toBeGreaterThan(10);
  });

  test("hints, invalid guesses and the win carry GEM's texts and rewards", () => {
    const env = make();
    env.reset(3);
    const target = targetOf(3);
    const low = target > 1 ? target - 1 : null;
    if (low !== null) {
      const hint = env.step(`I think \\boxed{${low}}`) as StepResult;
      expect(hint).toMatchObject({ reward: 0, terminated: false, truncated: false });
      expect(hint.observation).toBe(`At turn 1, you guessed ${low}, and the target number is higher than ${low}.`);
      expect(hint.info.suffix).toBe('Enter your next guess.');
      const again = env.step(`\\boxed{${low}}`) as StepResult;
      expect(again.observation).toBe(`At turn 2, you guessed ${low}, which has been already guessed before.`);
      expect(again.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    }
    expect((env.step('\\boxed{21}') as StepResult).observation).toEndWith('you guessed 21, which is outside the range specified.');
    const win = env.step(`\\boxed{1} no, \\boxed{${target}}`) as StepResult;
    expect(win).toMatchObject({ reward: 1, terminated: true, truncated: false });
    expect(win.observation).toMatch(/^Congratulations! You guessed the correct number \d+ in \d turns\.$/);
    expect(win.info.metrics.success).toBe(true);
  });

  test('a reply with no boxed number ends the game with the format-error reward -0.1', () => {
    const env = make();
    env.reset(4);
    const step = env.step('seven') as StepResult;
    expect(step).toMatchObject({ reward: -0.1, terminated: true, truncated: false, observation: 'At turn 1, you did not provide a valid guess.' });
    expect(step.info.metrics).toMatchObject({ action_is_valid: false, action_is_effective: false });
    env.reset(4);
    expect(env.step('\\boxed{0}') as StepResult).toMatchObject({ reward: -0.1, terminated: true, info: { action: null, metrics: { action_is_valid: false } } });
  });

  test('the last turn ends truncated, a wrong guess earning 1 - distance / range', () => {
    const target = targetOf(5);
    const env = make({ max_turns: 1 });
    env.reset(5);
    const guess = target === 20 ? 1 : 20;
    const last = env.step(`\\boxed{${guess}}`) as StepResult;
    expect(last).toMatchObject({ terminated: true, truncated: true, observation: 'You have reached the maximum number of turns.' });
    expect(last.reward).toBeCloseTo(1 - Math.abs(guess - target) / 19, 12);
  });

  test('config keys: the range and turns are honoured; the random variant draws them; bad ranges are refused', () => {
    const reset = make({ min_number: 100, max_number: 110, max_turns: 3 }).reset(0) as ResetResult;
    expect(reset.observation).toContain('between 100 and 110 (inclusive) within 3 turns');
    const drawn = new Set(
      Array.from({ length: 10 }, (_, s) => (make({ min_number: null, max_number: null, max_turns: null }).reset(s) as ResetResult).observation.split('\n')[1]),
    );
    expect(drawn.size).toBeGreaterThan(3);
    expect(guessTheNumber.config.safeParse({ min_number: 5, max_number: 5 }).success).toBe(false);
    expect(guessTheNumber.config.safeParse({ min_number: null, max_number: 9 }).success).toBe(false);
    expect(guessTheNumber.config.safeParse({ max_numbr: 9 }).success).toBe(false);
  });

  test('the worked solution (binary search) wins every game of 1..20 within 5 guesses', () => {
    for (let seed = 0; seed < 60; seed++) {
      const env = make({ max_turns: 5 }) as Env & { solutionAction(): string };
      env.reset(seed);
      let won = false;
      for (let turn = 0; turn < 5 && !won; turn++) won = (env.step(env.solutionAction()) as StepResult).info.metrics.success === true;
      expect(won).toBe(true);
    }
  });

  test('random actions are boxed numbers in the range; render reads the state', () => {
    const env = make();
    env.reset(9);
    expect(env.sampleRandomAction()).toMatch(/^\\boxed\{([1-9]|1\d|20)\}$/);
    env.step('\\boxed{10}');
    expect(env.render('text')).toMatch(/^range 1-20, turn 1 of 20; guessed: 10; still possible: /);
    expect(env.render('rgb')).toBeNull();
  });
});
