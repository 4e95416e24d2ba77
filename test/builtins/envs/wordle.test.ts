import { describe, expect, test } from 'bun:test';
import wordle, { marksFor } from '../../../plugins/envs/wordle';
import { wordsOfLength } from '../../../plugins/envs/wordle/words';
import { checkEnv } from '../../../src/cli/plugins_check';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, StepResult } from '../../../src/sdk/types';

const make = (config: Record<string, unknown> = {}) => new wordle.env(wordle.config.parse(config), new PluginHost().envContext()) as Env;
const step = (env: Env, response: string) => env.step(response) as StepResult;

/** The secret of a seed, found the way a player would: guess words that fit every mark so far. */
function secretOf(seed: number, length = 5): string {
  const env = make({ word_length: length, max_turns: 100 });
  env.reset(seed);
  let candidates = wordsOfLength(length).list.map((w) => w.toUpperCase());
  for (;;) {
    const guess = candidates[0]!;
    const result = step(env, `\\boxed{${guess}}`);
    if (result.info.metrics.success) return guess;
    const marks = result.observation.split('\n').at(-1)!;
    candidates = candidates.filter(
      (word) =>
        `[${marksFor(word, guess)
          .map((m) => `'${m}'`)
          .join(', ')}]` === marks,
    );
  }
}

describe('wordle env', () => {
  test("GEM's marks: greens first, then yellows from the letters left, each counted once", () => {
    expect(marksFor('ABBEY', 'BABES')).toEqual(['Y', 'Y', 'G', 'G', 'X']);
    expect(marksFor('CRANE', 'EERIE')).toEqual(['X', 'X', 'Y', 'X', 'G']);
    expect(marksFor('CRANE', 'CRANE')).toEqual(['G', 'G', 'G', 'G', 'G']);
  });

  test('the word list ships with the env: lowercase words of 3 to 8 letters', () => {
    const counts = [3, 4, 5, 6, 7, 8].map((n) => wordsOfLength(n).list.length);
    expect(counts.every((n) => n > 500)).toBe(true);
    expect(wordsOfLength(5).list.every((w) => /^[a-z]{5}$/.test(w))).toBe(true);
    expect(['crane', 'house', 'water'].every((w) => wordsOfLength(5).set.has(w))).toBe(true);
    expect(wordsOfLength(9).list).toEqual([]);
  });

  test('the same seed gives the same secret; seeds differ', () => {
    expect(secretOf(3)).toBe(secretOf(3));
    expect(new Set(Array.from({ length: 8 }, (_, seed) => secretOf(seed))).size).toBeGreaterThan(6);
  });

  test("reset shows GEM's instruction, with GEM's suffix", () => {
    const reset = make({ max_turns: 10 }).reset(0) as ResetResult;
    expect(reset.info).toEqual({ instruction: '', suffix: 'Enter your guess.' });
    expect(reset.observation).toStartWith('You are playing Wordle.\nYou have to guess the secret 5-letter word within 10 turns.\n');
    expect(reset.observation).toContain('  - G (green): correct letter in the correct position\n');
    expect(reset.observation).toMatch(/for example, \\boxed\{[A-Z]{5}\}\.\n/);
  });

  test('a winning game: each first green pays 0.1, the word 0.5 more, 1 in all', () => {
    const secret = secretOf(1);
    const wrong = wordsOfLength(5)
      .list.map((w) => w.toUpperCase())
      .find((w) => w !== secret && marksFor(secret, w).filter((m) => m === 'G').length === 2)!;
    const env = make();
    env.reset(1);
    const first = step(env, `\\boxed{${wrong.toLowerCase()}}`);
    const marks = marksFor(secret, wrong);
    expect(first).toMatchObject({ reward: 0.2, terminated: false, truncated: false });
    expect(first.observation).toBe(`At turn 1, you guessed ${wrong}\nFeedback:\n${wrong}\n[${marks.map((m) => `'${m}'`).join(', ')}]`);
    expect(first.info).toMatchObject({
      action: wrong,
      suffix: 'Enter your guess.',
      metrics: { success: false, action_is_valid: true, action_is_effective: true },
    });
    const last = step(env, `\\boxed{${[...secret].join(' ')}}`);
    expect(last.reward).toBeCloseTo(0.8);
    expect(last).toMatchObject({ terminated: true, truncated: false, observation: `Congratulations! You guessed the secret word ${secret} in 2 turns.` });
    expect(last.info.metrics.success).toBe(true);
  });

  test('a response with no boxed word pays -0.1 and ends the episode', () => {
    const env = make();
    env.reset(2);
    const bad = step(env, 'CRANE \\boxed{CRANE1}');
    expect(bad).toMatchObject({ observation: 'At turn 1, you did not provide a valid guess.', reward: -0.1, terminated: true, truncated: false });
    expect(bad.info).toMatchObject({ action: null, suffix: 'Enter your guess.', metrics: { action_is_valid: false, action_is_effective: false } });
  });

  test('a guess the rules refuse pays 0 and uses up the turn; only_real_words refuses words not in the list', () => {
    const env = make();
    env.reset(4);
    const long = step(env, '\\boxed{CRANES}');
    expect(long).toMatchObject({
      reward: 0,
      terminated: false,
      observation: 'At turn 1, you guessed CRANES which has 6 letters but the secret word has 5 letters.',
    });
    expect(long.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    expect(step(env, '\\boxed{QZXVK}').observation).toBe('At turn 2, you guessed QZXVK, which is not a word in the word list.');
    const secret = secretOf(4);
    const word = secret === 'CRANE' ? 'HOUSE' : 'CRANE';
    expect(step(env, `\\boxed{${word}}`).info.metrics.action_is_effective).toBe(true);
    expect(step(env, `\\boxed{${word}}`).observation).toBe(`At turn 4, you guessed ${word}, which has been already guessed before.`);

    const loose = make({ only_real_words: false });
    loose.reset(4);
    const nonsense = step(loose, '\\boxed{QZXVK}');
    expect(nonsense.info.metrics.action_is_effective).toBe(true);
    expect(nonsense.observation).toStartWith('At turn 1, you guessed QZXVK\nFeedback:\nQZXVK\n');
  });

  test('max_turns ends the episode, terminated and truncated as GEM sets them', () => {
    const secret = secretOf(5);
    const [a, b] = ['CRANE', 'HOUSE', 'WATER'].filter((w) => w !== secret);
    const env = make({ max_turns: 2 });
    env.reset(5);
    expect(step(env, `\\boxed{${a}}`)).toMatchObject({ terminated: false, truncated: false });
    expect(step(env, `\\boxed{${b}}`)).toMatchObject({ observation: 'You have reached the maximum number of turns.', terminated: true, truncated: true });
  });

  test('word_length sets the secret and the instruction', () => {
    expect(secretOf(0, 3)).toHaveLength(3);
    expect(secretOf(0, 8)).toHaveLength(8);
    expect((make({ word_length: 8 }).reset(0) as ResetResult).observation).toContain('guess the secret 8-letter word within 20 turns');
  });

  test('bad configs are refused in one line', async () => {
    const context = new PluginHost().envContext();
    await expect(checkEnv(wordle, { word_length: 9 }, { context })).rejects.toThrow(/env_config\.word_length: must be <= 8, got 9/);
    await expect(checkEnv(wordle, { hardcore: true }, { context })).rejects.toThrow(/env_config\.hardcore: unknown key/);
  });

  test('random actions are listed words, never a repeat', () => {
    const env = make({ word_length: 3 });
    env.reset(6);
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const action = env.sampleRandomAction();
      expect(seen.has(action)).toBe(false);
      seen.add(action);
      const result = step(env, action);
      expect(result.info.metrics.action_is_effective).toBe(true);
      if (result.terminated) break;
    }
  });

  test("ROLL's id game:Wordle-v0 is this env, and ROLL's env_config fits it", async () => {
    const plugin = await new PluginHost().resolveEnv('game:Wordle-v0');
    expect(plugin.name).toBe('wordle');
    expect(plugin.config.parse({ word_length: 5, only_real_words: true, max_turns: 10 })).toEqual({ word_length: 5, only_real_words: true, max_turns: 10 });
  });
});
