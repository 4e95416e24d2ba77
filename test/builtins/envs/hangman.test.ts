import { describe, expect, test } from 'bun:test';
import hangman from '../../../plugins/envs/hangman';
import { words } from '../../../plugins/envs/hangman/words';
import type { Env } from '../../../src/sdk/types';
import { makeEnv, resetOf, resolvedName, stepOf } from './gem_games';

const make = (config: Record<string, unknown> = {}) => makeEnv(hangman, config);

/** The letters shown so far, '_' for hidden ones, from render('text'). */
const shownOf = (env: Env) => (env.render('text') as string).split('\n')[1]!.trim().split(/\s+/).join('');

/** The word in the instruction's first example (GEM draws it from the candidate words). */
const exampleWordOf = (observation: string) => /in the format of \\boxed\{([A-Z]+)\}/.exec(observation)![1]!.toLowerCase();

describe('hangman env (GEM Hangman)', () => {
  test('the same seed gives the same game; the instruction is the observation, the grid the suffix', () => {
    const play = (seed: number) => {
      const env = make();
      const reset = resetOf(env, seed);
      return [reset, ...'etaoinshr'.split('').map((c) => stepOf(env, `\\boxed{${c}}`).reward)];
    };
    expect(play(6)).toEqual(play(6));
    expect(new Set(Array.from({ length: 10 }, (_, s) => JSON.stringify(play(s)))).size).toBeGreaterThan(5);
    const env = make();
    const reset = resetOf(env, 1);
    expect(reset.info.instruction).toBe('');
    expect(reset.observation).toStartWith('You are playing Hangman.\nThe objective of the game is to guess the 5-letter word');
    expect(reset.info.suffix).toBe('Here is the current state of the Hangman grid:\nC00 C01 C02 C03 C04\n  _   _   _   _   _ \n\nEnter your guess.');
  });

  test('guessing letters then the word wins; the rewards add up to 1', () => {
    const env = make({ max_turns: 40 });
    resetOf(env, 2);
    let total = 0;
    for (const letter of 'abcdefghijklmnopqrstuvwxyz') {
      if (!shownOf(env).includes('_')) break;
      const step = stepOf(env, `\\boxed{${letter}}`);
      expect(step.terminated).toBe(false);
      total += step.reward;
    }
    expect(total).toBeCloseTo(0.5, 12);
    const word = shownOf(env);
    const win = stepOf(env, `I know it: \\boxed{${word.toLowerCase()}}`);
    expect(win).toMatchObject({ observation: `Congratulations! You guessed the word '${word}' correctly!`, reward: 0.5, terminated: true, truncated: false });
    expect(win.info.metrics).toMatchObject({ success: true, action_is_valid: true, letters_shown: 1 });
    expect(words(5, false)).toContain(word.toLowerCase());
  });

  test('a letter pays half the share of the word it shows; the right word at once pays 1', () => {
    const env = make({ max_turns: 40 });
    resetOf(env, 4);
    let letter = '';
    let step = stepOf(env, '\\boxed{e}');
    for (const c of 'etaoinshrdlu') {
      letter = c;
      if (c !== 'e') step = stepOf(env, `\\boxed{${c}}`);
      if (step.reward > 0) break;
    }
    const shown = [...shownOf(env)].filter((c) => c === letter.toUpperCase()).length;
    expect(step.reward).toBeCloseTo((shown / 5) * 0.5, 12);
    expect(step.observation).toMatch(new RegExp(`you successfully guessed a letter '${letter.toUpperCase()}' that is in the secret word\\.$`));
    const again = stepOf(env, `\\boxed{${letter}}`);
    expect(again.observation).toMatch(/which has been already guessed before\.$/);
    expect(again.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    expect(stepOf(env, '\\boxed{abc}').observation).toMatch(/You guessed 'ABC' which is of length 3, but the secret word is of length 5\.$/);
    // the whole word at once: 0.5 for the win and 0.5 for the letters still hidden
    const fresh = make({ max_turns: 40 });
    resetOf(fresh, 4);
    for (const c of 'abcdefghijklmnopqrstuvwxyz') stepOf(fresh, `\\boxed{${c}}`);
    const secret = shownOf(fresh);
    const once = make();
    resetOf(once, 4);
    expect(stepOf(once, `\\boxed{${secret}}`).reward).toBe(1);
  });

  test('a response without a boxed guess is a format error: -0.1, and the episode ends', () => {
    const env = make();
    resetOf(env, 0);
    const step = stepOf(env, 'my guess is e');
    expect(step).toMatchObject({ observation: 'You did not provide a valid guess.', reward: -0.1, terminated: true, truncated: false });
    expect(step.info.metrics).toMatchObject({ action_is_valid: false, success: false });
  });

  test('the turn limit ends the game with that turn reward', () => {
    const env = make({ max_turns: 2 });
    resetOf(env, 0);
    expect(stepOf(env, '\\boxed{zzzzz}')).toMatchObject({ reward: 0, terminated: false });
    const last = stepOf(env, '\\boxed{qqqqq}');
    expect(last).toMatchObject({ observation: 'You have reached the maximum number of turns.', reward: 0, terminated: true, truncated: true });
  });

  test('word_length, hardcore and max_turns are honoured; bad values are refused; the GEM id resolves', async () => {
    const env = make({ word_length: 7, max_turns: 13 });
    const reset = resetOf(env, 0);
    expect(reset.observation).toContain('guess the 7-letter word');
    expect(reset.observation).toContain('2. You have to win within 13 turns.');
    expect(reset.info.suffix).toContain('C06\n');
    const examples = (hardcore: boolean) => Array.from({ length: 40 }, (_, s) => exampleWordOf(resetOf(make({ hardcore }), s).observation));
    const common = new Set(words(5, false));
    expect(examples(false).every((w) => common.has(w))).toBe(true);
    expect(examples(true).some((w) => !common.has(w))).toBe(true);
    expect(words(5, true).length).toBeGreaterThan(words(5, false).length * 5);
    expect(hangman.config.safeParse({ word_length: 9 }).success).toBe(false);
    expect(hangman.config.safeParse({ length: 5 }).success).toBe(false);
    expect(await resolvedName('game:Hangman-v0')).toBe('hangman');
  });

  test('random actions are a boxed word of the length or a boxed letter, drawn from the seed', () => {
    const actions = (seed: number) => {
      const env = make();
      env.reset(seed);
      return Array.from({ length: 20 }, () => env.sampleRandomAction());
    };
    expect(actions(3)).toEqual(actions(3));
    const kinds = new Set(actions(3).map((a) => /^\\boxed\{([A-Z]|[A-Z]{5})\}$/.exec(a)![1]!.length));
    expect(kinds).toEqual(new Set([1, 5]));
  });
});
