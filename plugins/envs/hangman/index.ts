/**
 * GEM's Hangman (game:Hangman-v0): guess a hidden word a letter at a time, or all of it at once, in
 * `\boxed{...}`. A letter in the word pays half the share of the word it reveals; guessing the word
 * pays 0.5 plus half the share still hidden, so a game's rewards add up to at most 1. Revealing
 * every letter does not end the game: only guessing the word does. GEM's rules, texts and rewards
 * (Apache-2.0, gem/envs/game_env/hangman.py); the code and the word lists (./words.ts) are ours.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn, refused } from '../_gem/game_step';
import { LanguageGameReward } from '../_gem/rewards';
import { WORD_LENGTHS, words } from './words';

const Config = z.strictObject({
  word_length: z.number().int().min(WORD_LENGTHS.min).max(WORD_LENGTHS.max).default(5).describe('Letters in the secret word.'),
  hardcore: z
    .boolean()
    .default(false)
    .describe("Draw the secret word from the whole English word list instead of the commonest words (GEM: NLTK's 'en' instead of 'en-basic')."),
  max_turns: z.number().int().min(1).default(20).describe('Turns before the episode ends.'),
});
type HangmanConfig = z.output<typeof Config>;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

class Hangman implements Env {
  private secret = '';
  private shown: string[] = [];
  private guessedLetters = new Set<string>();
  private turn = 0;
  private candidates: readonly string[] = [];
  private randomActions = Rng.fromSeed(0, 'hangman', 'random-action');

  constructor(private readonly config: HangmanConfig) {}

  reset(seed: number): ResetResult {
    const rng = Rng.fromSeed(seed, 'hangman');
    this.candidates = words(this.config.word_length, this.config.hardcore);
    this.secret = rng.choice(this.candidates).toUpperCase();
    this.shown = Array.from(this.secret, () => '_');
    this.guessedLetters = new Set();
    this.turn = 0;
    this.randomActions = Rng.fromSeed(seed, 'hangman', 'random-action');
    return { observation: this.instructions(boxedWord(rng, this.candidates), boxedLetter(rng)), info: { instruction: '', suffix: this.suffix() } };
  }

  step(response: string): StepResult {
    this.turn++;
    const played = this.play(response);
    return gameStep(played, { turn: this.turn, maxTurns: this.config.max_turns, suffix: this.suffix(), metrics: { letters_shown: this.lettersShown() } });
  }

  /** The share of the secret's letters shown so far. */
  private lettersShown(): number {
    return this.shown.filter((c) => c !== '_').length / this.secret.length;
  }

  private play(response: string): GameTurn {
    const guess = lastBoxed(response, /([a-z]+)/i)?.[1]?.toUpperCase() ?? null;
    if (guess === null) return formatError('You did not provide a valid guess.');
    const length = this.secret.length;
    if (guess.length > 1) {
      if (guess === this.secret) {
        const hidden = this.shown.filter((c) => c === '_').length / length;
        const feedback = `Congratulations! You guessed the word '${this.secret}' correctly!`;
        return { feedback, reward: hidden * 0.5 + LanguageGameReward.success * 0.5, action: guess, effective: true, outcome: 'won' };
      }
      if (guess.length !== length) {
        return refused(`At turn ${this.turn}, You guessed '${guess}' which is of length ${guess.length}, but the secret word is of length ${length}.`, guess);
      }
      const feedback = `At turn ${this.turn}, You guessed '${guess}' which is incorrect.`;
      return { feedback, reward: LanguageGameReward.internalStep, action: guess, effective: true };
    }
    if (this.guessedLetters.has(guess)) return refused(`At turn ${this.turn}, you guessed '${guess}', which has been already guessed before.`, guess);
    this.guessedLetters.add(guess);
    if (!this.secret.includes(guess)) {
      const feedback = `At turn ${this.turn}, you guessed a letter '${guess}' that is not in the secret word.`;
      return { feedback, reward: LanguageGameReward.internalStep, action: guess, effective: true };
    }
    const revealed = this.reveal(guess);
    const feedback = `At turn ${this.turn}, you successfully guessed a letter '${guess}' that is in the secret word.`;
    return { feedback, reward: (revealed / length) * 0.5, action: guess, effective: true };
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.grid() : null;
  }

  close(): void {}

  /** GEM's random action: a random word of the secret's length or a random letter, even odds. */
  sampleRandomAction(): string {
    return this.randomActions.bernoulli(0.5) ? boxedWord(this.randomActions, this.candidates) : boxedLetter(this.randomActions);
  }

  /** Shows every place `letter` stands in the secret; returns how many. */
  private reveal(letter: string): number {
    let revealed = 0;
    for (let i = 0; i < this.secret.length; i++) {
      if (this.secret[i] === letter) {
        this.shown[i] = letter;
        revealed++;
      }
    }
    return revealed;
  }

  /**
   * GEM's instructions, with its two examples as GEM places them: the word example where it speaks
   * of letters and the letter example where it speaks of words.
   */
  private instructions(wordExample: string, letterExample: string): string {
    return (
      'You are playing Hangman.\n' +
      `The objective of the game is to guess the ${this.config.word_length}-letter word by providing one letter guesses or the entire word.\n` +
      "The cells that need to be populated with letters are represented by '_'.\n\n" +
      `There are two ways you can answer. You can provide one letter guesses in the format of ${wordExample}, or you can guess the entire word in the format of ${letterExample}.\n` +
      'If the given letter is in the word, it will be revealed in the grid.\n' +
      'If the given word is correct, you win.\n' +
      'As you play, the history of your choices will be appended below. Use the information to figure out the word and win.\n' +
      'Some rules:\n' +
      '1. You can only guess one letter/word at a time.\n' +
      `2. You have to win within ${this.config.max_turns} turns.\n\n`
    );
  }

  private suffix(): string {
    return `Here is the current state of the Hangman grid:\n${this.grid()}\n\nEnter your guess.`;
  }

  /** GEM's grid: column labels C00, C01, ... over the letters shown so far. */
  private grid(): string {
    const header = this.shown.map((_, i) => `C${String(i).padStart(2, '0')}`).join(' ');
    return `${header}\n${this.shown.map((c) => `  ${c} `).join('')}`;
  }
}

function boxedWord(rng: Rng, candidates: readonly string[]): string {
  return `\\boxed{${rng.choice(candidates).toUpperCase()}}`;
}

function boxedLetter(rng: Rng): string {
  return `\\boxed{${rng.choice([...ALPHABET]).toUpperCase()}}`;
}

export default defineEnv({
  name: 'hangman',
  description: "GEM's Hangman: guess a hidden word by letters or whole, in \\boxed{...}.",
  config: Config,
  env: Hangman,
});
