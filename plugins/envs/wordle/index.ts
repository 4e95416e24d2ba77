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
    const at = `At turn ${this.turns}, you`;
    const box = lastBoxed(response, GUESS);
    if (box === null) {
      return this.result(`${at} did not provide a valid guess.`, LanguageGameReward.formatError, {
        action: null,
        terminated: true,
        truncated: this.turns === this.config.max_turns,
        valid: false,
      });
    }
    // GEM joins the parts of a guess split by spaces (only spaces: a tab stays and makes it too long).
    const guess = box[1]!.toUpperCase().replaceAll(' ', '');
    const length = this.config.word_length;
    let refusal: string | null = null;
    if (guess.length !== length) {
      refusal = `${at} guessed ${guess} which has ${guess.length} letters but the secret word has ${length} letters.`;
    } else if (this.config.only_real_words && !this.words.set.has(guess.toLowerCase())) {
      refusal = `${at} guessed ${guess}, which is not a word in the word list.`;
    } else if (this.guessed.has(guess)) {
      refusal = `${at} guessed ${guess}, which has been already guessed before.`;
    }
    if (refusal !== null) return this.afterTurn(refusal, LanguageGameReward.invalidAction, guess, false);

    this.guessed.add(guess);
    const marks = marksFor(this.secret, guess);
    this.history.push({ guess, marks });
    let reward = this.newGreensReward(marks);
    if (guess === this.secret) {
      reward += FOUND_SHARE;
      const won = `Congratulations! You guessed the secret word ${this.secret} in ${this.turns} turns.`;
      return this.result(won, reward, { action: guess, terminated: true, truncated: false, valid: true, success: true });
    }
    return this.afterTurn(`${at} guessed ${guess}\nFeedback:\n${guess}\n${pythonList(marks)}`, reward, guess, true);
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

  /** A turn that did not find the word: the game goes on, unless that was the last turn. */
  private afterTurn(observation: string, reward: number, action: string, valid: boolean): StepResult {
    if (this.turns >= this.config.max_turns) {
      return this.result('You have reached the maximum number of turns.', reward, { action, terminated: true, truncated: true, valid });
    }
    return this.result(observation, reward, { action, terminated: false, truncated: false, valid });
  }

  private result(
    observation: string,
    reward: number,
    end: { action: string | null; terminated: boolean; truncated: boolean; valid: boolean; success?: boolean },
  ): StepResult {
    return {
      observation,
      reward,
      terminated: end.terminated,
      truncated: end.truncated,
      info: {
        action: end.action,
        suffix: SUFFIX,
        metrics: { success: end.success ?? false, action_is_valid: end.valid, format_error: end.action === null },
        metricsAgg: { success: 'last' },
      },
    };
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
