import { expect, test } from 'bun:test';
import { closestMatches, didYouMean, editDistance } from '../src/util/suggest';

test('edit distance counts insertions, deletions, substitutions and swaps', () => {
  expect(editDistance('seed', 'seed')).toBe(0);
  expect(editDistance('sed', 'seed')).toBe(1);
  expect(editDistance('sede', 'seed')).toBe(1);
  expect(editDistance('grpp', 'grpo')).toBe(1);
  expect(editDistance('', 'abc')).toBe(3);
});

test('suggestions: closest first, only the nearest tier, nothing when far', () => {
  expect(closestMatches('sed', ['seed', 'save_steps', 'max_steps'])).toEqual(['seed']);
  expect(closestMatches('lr', ['learning_rate', 'seed'])).toEqual([]);
  expect(closestMatches('learning', ['learning_rate', 'warmup_ratio'])).toEqual(['learning_rate']);
  expect(didYouMean('trian', ['train', 'eval'])).toBe(' (did you mean train?)');
  expect(didYouMean('bf32', ['fp32', 'bf16', 'fp16'])).toBe(' (did you mean bf16 or fp32?)');
  expect(didYouMean('zzz', ['train'])).toBe('');
});
