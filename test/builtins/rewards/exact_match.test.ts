import { describe, expect, test } from 'bun:test';
import exactMatch, { finalAnswer, normalizeAnswer } from '../../../plugins/rewards/exact_match';

const score = (response: string, answer: unknown) => exactMatch.score({ response, trajectory: [], row: { answer } });

describe('exact_match reward', () => {
  test('SQuAD normalisation: case, punctuation, articles, spaces', () => {
    expect(normalizeAnswer('  The  Eiffel-Tower! ')).toBe('eiffeltower');
    expect(normalizeAnswer('An apple, a pear')).toBe('apple pear');
  });

  test('compares the last <answer> (or the whole response) with the answer', () => {
    expect(score('<answer>Paris</answer>', 'paris')).toBe(1);
    expect(score('first <answer>Rome</answer> then <answer>the Paris.</answer>', 'Paris')).toBe(1);
    expect(score('Paris', 'Paris')).toBe(1);
    expect(score('<answer>Lyon</answer>', 'Paris')).toBe(0);
    expect(score('<answer>42</answer>', 42)).toBe(1);
    expect(finalAnswer('no tags')).toBe('no tags');
  });

  test('any of several acceptable answers', () => {
    expect(score('<answer>NYC</answer>', ['New York', 'NYC'])).toBe(1);
    expect(score('<answer>LA</answer>', ['New York', 'NYC'])).toBe(0);
  });

  test('a row without an answer is an error (the caller scores it 0 and logs it)', () => {
    expect(() => score('x', undefined)).toThrow("no 'answer'");
  });
});
