import { describe, expect, test } from 'bun:test';
import mathStringEqual, { lastNumber } from '../../../plugins/rewards/math_string_equal';

const score = (response: string, answer: unknown) => mathStringEqual.score({ response, trajectory: [], row: { answer } });

describe('math_string_equal reward', () => {
  test('reads the last number leniently', () => {
    expect(lastNumber('so 3 apples cost $1,200.50 in total')).toBe('1200.5');
    expect(lastNumber('x = 42.0')).toBe('42');
    expect(lastNumber('-7 degrees')).toBe('-7');
    expect(lastNumber('007')).toBe('7');
    expect(lastNumber('1,2,3')).toBe('3');
    expect(lastNumber('no digits')).toBeNull();
  });

  test('1 when the last numbers agree, else 0', () => {
    expect(score('First 12, then 30, so the answer is 42.', 42)).toEqual({ reward: 1, has_number: true });
    expect(score('<answer>$1,000</answer> and 5 more words', '1000')).toMatchObject({ reward: 1 });
    expect(score('The total is 18.0', '#### 18')).toMatchObject({ reward: 1 });
    expect(score('The total is 19', 18)).toMatchObject({ reward: 0 });
    expect(score('The total is -18', 18)).toMatchObject({ reward: 0 });
    expect(score('I do not know', 18)).toEqual({ reward: 0, has_number: false });
  });

  test('a row without a numeric answer is an error (the caller scores it 0)', () => {
    expect(() => score('1', undefined)).toThrow("no 'answer'");
    expect(() => score('1', 'seven')).toThrow('has no number');
  });
});
