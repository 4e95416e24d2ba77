import { describe, expect, test } from 'bun:test';
import qaF1, { qaScores } from '../../../plugins/rewards/qa_f1';

const score = (response: string, answer: unknown) => qaF1.score({ response, trajectory: [], row: { answer } });

describe('qa_f1 reward', () => {
  test('token F1 after SQuAD normalisation', () => {
    expect(qaScores('The Marhound River', 'marhound river')).toEqual({ em: 1, f1: 1, precision: 1, recall: 1 });
    // 'river' matches 1 of 2 predicted tokens and 1 of 3 truth tokens
    const partial = qaScores('Tubeck river', 'the long Marhound river');
    expect(partial.precision).toBe(1 / 2);
    expect(partial.recall).toBe(1 / 3);
    expect(partial.f1).toBeCloseTo(0.4, 12);
    expect(partial.em).toBe(0);
    expect(qaScores('a a b', 'a b b').f1).toBeCloseTo(2 / 3, 12); // repeated tokens count once each
  });

  test('yes, no and noanswer must match exactly', () => {
    expect(qaScores('yes', 'yes it is').f1).toBe(0);
    expect(qaScores('no way', 'no').f1).toBe(0);
    expect(qaScores('No.', 'no').f1).toBe(1);
  });

  test('reward is the F1 of the final answer against the best of several answers', () => {
    expect(score('<answer>Celn</answer>', 'Celn')).toEqual({ reward: 1, em: 1, f1: 1, precision: 1, recall: 1 });
    const best = score('It was <answer>New York City</answer>', ['Big Apple', 'New York']) as { reward: number; em: number };
    expect(best.reward).toBeCloseTo(0.8, 12);
    expect(best.em).toBe(0);
    expect(score('Paris', 'Lyon')).toMatchObject({ reward: 0, em: 0 });
    expect(() => score('x', undefined)).toThrow("no 'answer'");
  });
});
