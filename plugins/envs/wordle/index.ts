/**
 * Wordle as GEM plays it (gem/envs/game_env/wordle.py): guess a secret English word; each guess is
 * marked letter by letter G (right place), Y (in the word elsewhere) or X (not in the word). A
 * guess is `\boxed{CRANE}`. Each position first marked G pays 0.5/word_length and finding the word
 * pays 0.5 more, so a solve pays 1 in all; a response with no boxed word pays -0.1 and ends the
 * episode; a guess the rules refuse (wrong length, a repeat, and with only_real_words a word not
 * in the list) pays 0 and uses up the turn. The observations are GEM's, word for word.
 *
 * GEM draws secrets from NLTK's Basic English list; ours come from the word list that ships here
 * (data/README.md), which is larger, so secrets are less common words.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn, refused } from '../_gem/game_step';
import { LanguageGameReward } from '../_gem/rewards';
import { wordsOfLength } from './words';

const Config = z.strictObject({
  word_length: z.int().min(3).max(8).default(5).describe('Letters in the secret word.'),
  only_real_words: z.boolean().default(true).describe('Refuse guesses that are not in the word list (the turn is used up, reward 0).'),
  max_turns: z.int().min(1).default(20).describe('Turns before the episode ends (terminated and truncated, as GEM sets them); refused guesses count.'),
});
type WordleConfig = z.output<typeof Config>;

const SUFFIX = 'Enter your guess.';
/** GEM's guess pattern: letters, possibly split by whitespace. */
const GUESS = /([a-zA-Z]+(?:\s+[a-zA-Z]+)*)/;
/** Half of a solve's reward is paid along the way, one share per position first found. */
const FOUND_SHARE = LanguageGameReward.success * 0.5;

type Mark = 'G' | 'Y' | 'X';

/** GEM's marks: greens first, then yellows from the letters of the secret not yet matched. */
export function marksFor(secret: string, guess: string): Mark[] {
  const unmatched: Array<string | null> = [...secret];
  const marks: Array<Mark | null> = [...guess].map((letter, i) => (letter === secret[i] ? 'G' : null));
  marks.forEach((mark, i) => {
    if (mark === 'G') unmatched[i] = null;
  });
  return marks.map((mark, i) => {
    if (mark !== null) return mark;
    const at = unmatched.indexOf(guess[i]!);
    if (at < 0) return 'X';
    unmatched[at] = null;
    return 'Y';
  });
}

/** Marks as Python prints a list of strings, which is how GEM's observations show them. */
const pythonList = (marks: readonly Mark[]) => `[${marks.map((m) => `'${m}'`).join(', ')}]`;

class Wordle implements Env {
  private readonly words: { list: readonly string[]; set: ReadonlySet<string> };
  private secret = '';
  private history: Array<{ guess: string; marks: Mark[] }> = [];
  private guessed = new Set<string>();
  /** Positions already marked G by some guess: only a first G there pays. */
  private found: boolean[] = [];
  private turns = 0;
  private randomActions = Rng.fromSeed(0, 'wordle', 'random-action');

  constructor(private readonly config: WordleConfig) {
    this.words = wordsOfLength(config.word_length);
  }

  reset(seed: number): ResetResult {
    this.secret = Rng.fromSeed(seed, 'wordle', 'secret').choice(this.words.list).toUpperCase();
    this.randomActions = Rng.fromSeed(seed, 'wordle', 'random-action');
    this.history = [];
    this.guessed = new Set();
    this.found = Array.from({ length: this.config.word_length }, () => false);
    this.turns = 0;
    return { observation: this.instruction(), info: { instruction: '', suffix: SUFFIX } };
  }

  private instruction(): string {
    return (
      'You are playing Wordle.\n' +
      `You have to guess the secret ${this.config.word_length}-letter word within ${this.config.max_turns} turns.\n` +
      'After you enter your guess, I will say mark your guess as follows:\n' +
      '  - G (green): correct letter in the correct position\n' +
      '  - Y (yellow): letter exists in the word but in the wrong position\n' +
      '  - X (wrong): letter is not in the word\n' +
      `After thinking, format your final answer inside \\boxed{...}, for example, ${this.sampleRandomAction()}.\n` +
      'As you play, the history of your guesses will be appended below. Use the information to complete the game before you run out of guesses.\n'
    );
  }

  step(response: string): StepResult {
    this.turns += 1;
    return gameStep(this.play(response), { turn: this.turns, maxTurns: this.config.max_turns, suffix: SUFFIX });
  }

  private play(response: string): GameTurn {
    const at = `At turn ${this.turns}, you`;
    const box = lastBoxed(response, GUESS);
    if (box === null) return formatError(`${at} did not provide a valid guess.`);
    // GEM joins the parts of a guess split by spaces (only spaces: a tab stays and makes it too long).
    const guess = box[1]!.toUpperCase().replaceAll(' ', '');
    const length = this.config.word_length;
    if (guess.length !== length) return refused(`${at} guessed ${guess} which has ${guess.length} letters but the secret word has ${length} letters.`, guess);
    if (this.config.only_real_words && !this.words.set.has(guess.toLowerCase())) {
      return refused(`${at} guessed ${guess}, which is not a word in the word list.`, guess);
    }
    if (this.guessed.has(guess)) return refused(`${at} guessed ${guess}, which has been already guessed before.`, guess);

    this.guessed.add(guess);
    const marks = marksFor(this.secret, guess);
    this.history.push({ guess, marks });
    const reward = this.newGreensReward(marks);
    if (guess === this.secret) {
      const feedback = `Congratulations! You guessed the secret word ${this.secret} in ${this.turns} turns.`;
      return { feedback, reward: reward + FOUND_SHARE, action: guess, effective: true, outcome: 'won' };
    }
    return { feedback: `${at} guessed ${guess}\nFeedback:\n${guess}\n${pythonList(marks)}`, reward, action: guess, effective: true };
  }

  /** GEM's milestone reward: each position marked G for the first time pays its share of half a solve. */
  private newGreensReward(marks: readonly Mark[]): number {
    let reward = 0;
    marks.forEach((mark, i) => {
      if (mark === 'G' && !this.found[i]) {
        reward += FOUND_SHARE / marks.length;
        this.found[i] = true;
      }
    });
    return reward;
  }

  render(mode: 'text' | 'rgb'): string | null {
    if (mode === 'rgb') return null;
    const rows = this.history.map(({ guess, marks }, i) => `${i + 1}. ${guess} ${marks.join('')}`);
    return [`Wordle: ${this.config.word_length} letters, turn ${this.turns} of ${this.config.max_turns}`, ...rows].join('\n');
  }

  close(): void {}

  /** A random word of the list that has not been guessed yet (GEM's sampler, less its repeats). */
  sampleRandomAction(): string {
    for (;;) {
      const word = this.randomActions.choice(this.words.list).toUpperCase();
      if (!this.guessed.has(word)) return `\\boxed{${word}}`;
    }
  }
}

export default defineEnv({
  name: 'wordle',
  description: "GEM's Wordle: find a secret English word from letter-by-letter marks (game:Wordle-v0).",
  config: Config,
  env: Wordle,
});
