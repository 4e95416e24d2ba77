/** The English words Wordle draws its secrets from and checks guesses against (data/README.md says where they come from). */
import WORDS_TEXT from '../_gem/words.txt' with { type: 'text' };

let byLength: Map<number, { list: string[]; set: Set<string> }> | null = null;

/** The lowercase words of `length` letters, as a list (in file order) and a set. */
export function wordsOfLength(length: number): { list: readonly string[]; set: ReadonlySet<string> } {
  if (byLength === null) {
    byLength = new Map();
    for (const word of WORDS_TEXT.split('\n')) {
      if (word === '') continue;
      const group = byLength.get(word.length) ?? { list: [], set: new Set<string>() };
      group.list.push(word);
      group.set.add(word);
      byLength.set(word.length, group);
    }
  }
  return byLength.get(length) ?? { list: [], set: new Set() };
}
