/**
 * reasoning-gym's letter_counting questions: a span of 5 to 15 words from a book, and one of the
 * letters (or digits) in it to count. Same book as reasoning-gym: Project Gutenberg's eBook #19362,
 * "In the Year 2889" by Jules and Michel Verne, public domain in the U.S., shipped as Project
 * Gutenberg publishes it (its licence included). Row `index` of the dataset made from `seed` is
 * drawn from its own stream, so a row never depends on the dataset's size.
 */
import { Rng } from 'agentic';
import book from './in_the_year_2889.txt' with { type: 'text' };

export interface Question {
  question: string;
  /** The count, as reasoning-gym writes it. */
  answer: string;
  /** Every character of the span (lower case), for the random policy's guesses. */
  spanLetters: number;
}

const MIN_WORDS = 5;
const MAX_WORDS = 15;

/** reasoning-gym's words: runs of letters and digits (`\b\w+\b` without the ones holding `_`). */
const WORDS: readonly string[] = (book.match(/[\p{L}\p{N}_]+/gu) ?? []).filter((word) => !word.includes('_'));

export function letterCountingQuestion(seed: number, index: number): Question {
  const rng = Rng.fromSeed(seed, 'letter_counting', index);
  const length = Math.min(rng.intBetween(MIN_WORDS, MAX_WORDS), WORDS.length);
  const start = rng.intBetween(0, WORDS.length - length);
  const span = WORDS.slice(start, start + length);
  const text = span.join('').toLowerCase();
  const letter = rng.choice([...new Set(text)].sort());
  const count = [...text].filter((c) => c === letter).length;
  return {
    question: `How many times does the letter "${letter}" appear in the text: "${span.join(' ')}"?`,
    answer: String(count),
    spanLetters: text.length,
  };
}

/** reasoning-gym's score_answer: 1 for the exact answer, len(answer)/len(response) when it is inside, else 0. */
export function scoreAnswer(response: string | null, answer: string): number {
  if (response === null || response.length === 0) return 0;
  if (response === answer) return 1;
  return response.includes(answer) ? answer.length / response.length : 0;
}
