/**
 * Hangman's secret words. GEM draws them from NLTK's word lists: Ogden's Basic English (850 words)
 * by default, the whole English list when hardcore. Ours come from SCOWL (Debian's scowl and
 * wamerican packages; notice in ../_gem/words.COPYRIGHT), lower-case a-z words of 3 to 8 letters:
 * its size-10 list, the commonest words, by default (common_words.txt), and wamerican's whole list
 * when hardcore (../_gem/words.txt).
 */
import all from '../_gem/words.txt' with { type: 'text' };
import common from './common_words.txt' with { type: 'text' };

export const WORD_LENGTHS = { min: 3, max: 8 } as const;

const byLength = new Map<string, string[]>();

/** The words of `length` letters, in list order, lower case. */
export function words(length: number, hardcore: boolean): readonly string[] {
  const key = `${hardcore}:${length}`;
  let found = byLength.get(key);
  if (found === undefined) {
    found = (hardcore ? all : common).split('\n').filter((word) => word.length === length);
    byLength.set(key, found);
  }
  return found;
}
