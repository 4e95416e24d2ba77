import { describe, expect, test } from 'bun:test';
import letterCounting from '../../../plugins/envs/letter_counting';
import { makeEnv, resetOf, resolvedName, stepOf } from './gem_games';

const make = (config: Record<string, unknown> = {}) => makeEnv(letterCounting, config);

/** The right count for a question, worked out from its text. */
function countIn(question: string): number {
  const [, letter, text] = /^How many times does the letter "(.)" appear in the text: "(.*)"\?$/.exec(question)!;
  return [...text!.replaceAll(' ', '').toLowerCase()].filter((c) => c === letter).length;
}

describe('letter_counting env (reasoning-gym via GEM)', () => {
  test('the same seed asks the same question; the question is the observation', () => {
    const question = (seed: number, config = {}) => resetOf(make(config), seed).observation;
    expect(question(9)).toBe(question(9));
    expect(new Set(Array.from({ length: 20 }, (_, s) => question(s))).size).toBeGreaterThan(15);
    expect(question(9)).toMatch(/^How many times does the letter "[a-z0-9à-ÿ]" appear in the text: "(\S+ ){4,14}\S+"\?$/);
    expect(resetOf(make(), 9).info).toEqual({ instruction: '' });
  });

  test('the right count in the last \\boxed{} scores 1 and ends the single turn', () => {
    for (let seed = 0; seed < 10; seed++) {
      const env = make();
      const { observation } = resetOf(env, seed);
      const step = stepOf(env, `Counting... maybe \\boxed{999}, no: \\boxed{${countIn(observation)}}`);
      expect(step).toMatchObject({ observation: '<｜TERMINAL_STATE｜>', reward: 1, terminated: true, truncated: true });
      expect(step.info.metrics).toEqual({ success: true, action_is_valid: true });
    }
  });

  test("reasoning-gym's scoring: the answer inside a longer one scores its share; no boxed answer scores 0", () => {
    const env = make();
    const answer = String(countIn(resetOf(env, 1).observation));
    expect(stepOf(env, `\\boxed{${answer} letters}`).reward).toBeCloseTo(answer.length / (answer.length + 8), 12);
    resetOf(env, 1);
    const none = stepOf(env, `the answer is ${answer}`);
    expect(none).toMatchObject({ reward: 0, terminated: true });
    expect(none.info.metrics).toEqual({ success: false, action_is_valid: false });
    resetOf(env, 1);
    expect(stepOf(env, `\\boxed{${Number(answer) + 1}0}`).reward).toBe(0);
  });

  test('size and seed make the dataset: seeds pick among size questions; the GEM id resolves', async () => {
    const questions = (config: Record<string, unknown>) => new Set(Array.from({ length: 60 }, (_, s) => resetOf(make(config), s).observation));
    expect(questions({ size: 3 }).size).toBe(3);
    const other = questions({ size: 3, seed: 7 });
    expect([...questions({ size: 3 })].some((q) => other.has(q))).toBe(false);
    expect(letterCounting.config.safeParse({ size: 0 }).success).toBe(false);
    expect(letterCounting.config.safeParse({ min_words: 3 }).success).toBe(false);
    expect(await resolvedName('rg:letter_counting')).toBe('letter_counting');
  });

  test('random actions are boxed counts drawn from the seed; render shows the question and the answer', () => {
    const env = make();
    env.reset(5);
    const action = env.sampleRandomAction();
    expect(action).toMatch(/^\\boxed\{\d+\}$/);
    env.reset(5);
    expect(env.sampleRandomAction()).toBe(action);
    expect(env.render('text')).toBe(resetOf(env, 5).observation);
    stepOf(env, '\\boxed{3}');
    expect(env.render('text')).toMatch(/\nAnswered: 3 \(correct: \d+\)$/);
    expect(env.render('rgb')).toBeNull();
  });
});
