import { describe, expect, test } from 'bun:test';
import mastermind from '../../../plugins/envs/mastermind';
import { allCodes, pegsFor } from '../../../plugins/envs/mastermind/code';
import { checkEnv } from '../../../src/cli/plugins_check';
import { ConfigError } from '../../../src/errors';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, StepResult, WarmStartHooks } from '../../../src/sdk/types';

type Game = Env & Required<Pick<WarmStartHooks, 'solutionAction' | 'stateNotes'>>;
const make = (config: Record<string, unknown> = {}) => new mastermind.env(mastermind.config.parse(config), new PluginHost().envContext()) as Game;
const step = (env: Env, response: string) => env.step(response) as StepResult;

/** Plays the warm start's consistent guesser to the end: the steps it took. */
function solve(env: Game, seed: number): StepResult[] {
  env.reset(seed);
  const steps: StepResult[] = [];
  for (;;) {
    const last = step(env, env.solutionAction()!);
    steps.push(last);
    if (last.terminated || last.truncated) return steps;
  }
}

/** The secret of a seed, read from the message that ends a solved game. */
const secretOf = (seed: number, config: Record<string, unknown> = {}) =>
  solve(make(config), seed)
    .at(-1)!
    .observation.match(/code \[(.*)\] in/)![1]!
    .split(', ')
    .map(Number);

describe('mastermind env', () => {
  test('the pegs: black for the right digit in the right place, white for a right digit elsewhere, each digit counted once', () => {
    expect(pegsFor([1, 2, 3, 4], [1, 2, 3, 4])).toEqual({ black: 4, white: 0 });
    expect(pegsFor([1, 2, 3, 4], [4, 3, 2, 1])).toEqual({ black: 0, white: 4 });
    expect(pegsFor([1, 1, 2, 2], [1, 2, 1, 3])).toEqual({ black: 1, white: 2 });
    expect(pegsFor([1, 2, 3, 4], [5, 5, 5, 1])).toEqual({ black: 0, white: 1 });
    expect(pegsFor([5, 1, 1, 1], [1, 5, 5, 5])).toEqual({ black: 0, white: 2 });
  });

  test('the same seed gives the same secret; seeds differ', () => {
    expect(secretOf(7)).toEqual(secretOf(7));
    const secrets = new Set(Array.from({ length: 20 }, (_, seed) => secretOf(seed).join('')));
    expect(secrets.size).toBeGreaterThan(15);
  });

  test("reset shows GEM's instruction as the observation, with no suffix; every step gives GEM's suffix", () => {
    const env = make({ max_turns: 10 });
    const reset = env.reset(1) as ResetResult;
    expect(reset.info).toEqual({ instruction: '' });
    expect(reset.observation).toStartWith('You are playing Mastermind.\nYou have to guess the secret 4 digit code within 10 turns.\n');
    expect(reset.observation).toContain('The code consists of digits from 1 to 6 (inclusive). Duplicate numbers are not allowed.\n');
    expect(reset.observation).toMatch(/format your final answer inside \\boxed\{\.\.\.\}, for example, \\boxed\{\d \d \d \d\}\.\n/);
    expect(reset.observation).toEndWith('Enter your first guess to start the game.\n');
    expect(step(env, '\\boxed{1 2 3 4}').info.suffix).toBe('Enter your guess.');
  });

  test('a winning game: each new black peg pays 1/code_length, the code pays 1 in all, and GEM says so', () => {
    const secret = secretOf(3);
    const env = make();
    env.reset(3);
    const wrong = [...allCodes({ codeLength: 4, numNumbers: 6, duplicates: false })].find((code) => pegsFor(secret, code).black === 0)!;
    const first = step(env, `I try \\boxed{${wrong.join(' ')}}`);
    const { white } = pegsFor(secret, wrong);
    expect(first).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(first.observation).toBe(`At turn 1, you guessed [${wrong.join(', ')}]. This guess receives 0 black peg(s) and ${white} white peg(s).`);
    const last = step(env, `\\boxed{${secret.join(' ')}}`);
    expect(last).toMatchObject({ reward: 1, terminated: true, truncated: false });
    expect(last.observation).toBe(`Congratulations! You guessed the correct code [${secret.join(', ')}] in 2 turns.`);
    expect(last.info.metrics).toEqual({ success: true, action_is_valid: true, action_is_effective: true });
    expect(last.info.metricsAgg).toEqual({ success: 'last' });

    // partial progress pays once: 2 black pegs, then 2 again (nothing), then the code (the other half)
    env.reset(3);
    const twoBlack = [secret[0]!, secret[1]!, secret[3]!, secret[2]!];
    const again = [...allCodes({ codeLength: 4, numNumbers: 6, duplicates: false })].find(
      (code) => pegsFor(secret, code).black === 2 && code.join() !== twoBlack.join(),
    )!;
    expect([twoBlack, again, secret].map((code) => step(env, `\\boxed{${code.join(' ')}}`).reward)).toEqual([0.5, 0, 0.5]);
  });

  test('the last \\boxed{} with a guess in it is the guess', () => {
    const env = make();
    env.reset(2);
    expect(step(env, '\\boxed{1 2} no, \\boxed{3  4\n5 6}').info.action).toBe('3 4 5 6');
    expect(step(env, '\\boxed{1 2 3 4} and \\boxed{five}').info.action).toBe('1 2 3 4');
  });

  test('a response with no boxed guess pays -0.1 and ends the episode (truncated too on the last turn)', () => {
    const env = make();
    env.reset(4);
    const bad = step(env, 'my guess is 1 2 3 4');
    expect(bad).toMatchObject({ observation: 'At turn 1, you did not provide a valid guess.', reward: -0.1, terminated: true, truncated: false });
    expect(bad.info).toMatchObject({
      action: null,
      suffix: 'Enter your guess.',
      metrics: { success: false, action_is_valid: false, action_is_effective: false },
    });
    const last = make({ max_turns: 1 });
    last.reset(4);
    expect(step(last, '\\boxed{}')).toMatchObject({ reward: -0.1, terminated: true, truncated: true });
  });

  test('a guess the rules refuse pays 0 and uses up the turn', () => {
    const env = make();
    env.reset(5);
    const short = step(env, '\\boxed{1 2 3}');
    expect(short).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(short.observation).toBe('At turn 1, you guessed [1, 2, 3] which has 3 entries but the code has length 4.');
    expect(short.info.metrics).toEqual({ success: false, action_is_valid: true, action_is_effective: false });
    expect(step(env, '\\boxed{1 2 3 7}').observation).toBe('At turn 2, you guessed [1, 2, 3, 7], which has numbers outside the range 1 to 6.');
    expect(step(env, '\\boxed{01 2 3 0}').observation).toBe('At turn 3, you guessed [1, 2, 3, 0], which has numbers outside the range 1 to 6.');
    const secret = secretOf(5);
    const wrong = [...allCodes({ codeLength: 4, numNumbers: 6, duplicates: false })].find((code) => pegsFor(secret, code).black < 4)!;
    expect(step(env, `\\boxed{${wrong.join(' ')}}`).info.metrics.action_is_effective).toBe(true);
    const repeat = step(env, `\\boxed{${wrong.join(' ')}}`);
    expect(repeat.observation).toBe(`At turn 5, you guessed [${wrong.join(', ')}], which has been already guessed before.`);
    expect(repeat.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
  });

  test('max_turns ends the episode, terminated and truncated as GEM sets them', () => {
    const secret = secretOf(6); // max_turns does not change the secret of a seed
    const env = make({ max_turns: 2 });
    env.reset(6);
    const wrong = [...allCodes({ codeLength: 4, numNumbers: 6, duplicates: false })].filter((code) => pegsFor(secret, code).black === 0);
    expect(step(env, `\\boxed{${wrong[0]!.join(' ')}}`)).toMatchObject({ terminated: false, truncated: false });
    expect(step(env, `\\boxed{${wrong[1]!.join(' ')}}`)).toMatchObject({
      observation: 'You have reached the maximum number of turns.',
      reward: 0,
      terminated: true,
      truncated: true,
    });
  });

  test('code_length, num_numbers and duplicate_numbers shape the secret', () => {
    const secrets = Array.from({ length: 40 }, (_, seed) => secretOf(seed, { code_length: 3, num_numbers: 4, duplicate_numbers: true }));
    expect(secrets.every((code) => code.length === 3 && code.every((d) => d >= 1 && d <= 4))).toBe(true);
    expect(secrets.some((code) => new Set(code).size < 3)).toBe(true);
    const distinct = Array.from({ length: 40 }, (_, seed) => secretOf(seed, { code_length: 3, num_numbers: 4 }));
    expect(distinct.every((code) => new Set(code).size === 3 && code.every((d) => d <= 4))).toBe(true);
    const env = make({ code_length: 2, num_numbers: 9, duplicate_numbers: true });
    expect((env.reset(0) as ResetResult).observation).toContain(
      'guess the secret 2 digit code within 20 turns.\nThe code consists of digits from 1 to 9 (inclusive). Duplicate numbers are allowed.',
    );
  });

  test('bad configs are refused in one line', async () => {
    const context = new PluginHost().envContext();
    await expect(checkEnv(mastermind, { code_length: 5, num_numbers: 4 }, { context })).rejects.toThrow(
      new ConfigError("env 'mastermind': env_config.code_length: a code of 5 different digits needs num_numbers >= 5 (or duplicate_numbers: true)"),
    );
    await expect(checkEnv(mastermind, { colours: 6 }, { context })).rejects.toThrow(/env_config\.colours: unknown key/);
  });

  test('random actions are allowed codes, never a repeat', () => {
    const env = make({ code_length: 2, num_numbers: 3, max_turns: 6 });
    env.reset(8);
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const action = env.sampleRandomAction();
      expect(action).toMatch(/^\\boxed\{[1-3] [1-3]\}$/);
      expect(seen.has(action)).toBe(false);
      seen.add(action);
      const result = step(env, action);
      expect(result.info.metrics.action_is_effective).toBe(true);
      if (result.terminated) break;
    }
  });

  test('the warm start guesses the first code that fits, and cracks every code in a few turns', () => {
    for (let seed = 0; seed < 30; seed++) {
      const env = make();
      env.reset(seed);
      expect(env.solutionAction()).toBe('\\boxed{1 2 3 4}');
      const steps = solve(env, seed);
      expect(steps.at(-1)!.info.metrics.success).toBe(true);
      expect(steps.length).toBeLessThanOrEqual(6);
      expect(steps.reduce((sum, s) => sum + s.reward, 0)).toBeCloseTo(1);
    }
  });

  test('state notes read what the pegs left open, position by position', () => {
    const env = make({ code_length: 2, num_numbers: 3 });
    env.reset(0);
    expect(env.stateNotes()).toBe('6 codes fit; position 1: 1 2 3; position 2: 1 2 3');
    const secret = secretOf(0, { code_length: 2, num_numbers: 3 });
    env.reset(0);
    const guess = secret[0] === 1 && secret[1] === 2 ? [2, 1] : [1, 2];
    step(env, `\\boxed{${guess.join(' ')}}`);
    const left = [...allCodes({ codeLength: 2, numNumbers: 3, duplicates: false })].filter(
      (code) => JSON.stringify(pegsFor(code, guess)) === JSON.stringify(pegsFor(secret, guess)),
    );
    const digitsAt = (i: number) => [...new Set(left.map((code) => code[i]!))].sort().join(' ');
    expect(left.length).toBeLessThan(6);
    expect(env.stateNotes()).toBe(`${left.length} code${left.length === 1 ? '' : 's'} fit; position 1: ${digitsAt(0)}; position 2: ${digitsAt(1)}`);
  });

  test("ROLL's id game:Mastermind-v0 is this env, and ROLL's env_config fits it", async () => {
    const plugin = await new PluginHost().resolveEnv('game:Mastermind-v0');
    expect(plugin.name).toBe('mastermind');
    expect(plugin.config.parse({ code_length: 4, num_numbers: 6, max_turns: 10, duplicate_numbers: false })).toEqual({
      code_length: 4,
      num_numbers: 6,
      max_turns: 10,
      duplicate_numbers: false,
    });
  });
});
