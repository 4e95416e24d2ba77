/**
 * Mastermind as GEM plays it (gem/envs/game_env/mastermind.py): find a secret code of digits in a
 * limited number of turns; each guess earns black pegs (right digit, right place) and white pegs
 * (right digit, wrong place). A guess is `\boxed{1 2 3 4}`. Each new black peg beyond the best so
 * far pays 1/code_length, so cracking the code pays 1 in all; a response with no boxed guess pays
 * -0.1 and ends the episode; a guess the rules refuse (wrong length, a digit out of range, a
 * repeat) pays 0 and uses up the turn. The observations are GEM's, word for word.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, type WarmStartHooks, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn, refused } from '../_gem/game_step';
import { type CodeRules, fittingCodes, pegsFor, type ScoredGuess } from './code';

const Config = z
  .strictObject({
    code_length: z.int().min(1).max(9).default(4).describe('Digits in the secret code.'),
    num_numbers: z.int().min(1).max(9).default(6).describe('The digits of the code run from 1 to num_numbers.'),
    duplicate_numbers: z.boolean().default(false).describe('Whether a digit may appear more than once in the code.'),
    max_turns: z.int().min(1).default(20).describe('Turns before the episode ends (terminated and truncated, as GEM sets them); refused guesses count.'),
  })
  .superRefine((c, context) => {
    if (!c.duplicate_numbers && c.code_length > c.num_numbers) {
      context.addIssue({
        code: 'custom',
        path: ['code_length'],
        message: `a code of ${c.code_length} different digits needs num_numbers >= ${c.code_length} (or duplicate_numbers: true)`,
      });
    }
  });
type MastermindConfig = z.output<typeof Config>;

const SUFFIX = 'Enter your guess.';
/** GEM's guess pattern: whitespace-separated numbers. */
const GUESS = /(\d+(?:\s+\d+)*)/;

/** A list of numbers as Python prints it, which is how GEM's observations show guesses and codes. */
const pythonList = (digits: readonly number[]) => `[${digits.join(', ')}]`;
const boxed = (digits: readonly number[]) => `\\boxed{${digits.join(' ')}}`;

class Mastermind implements Env, WarmStartHooks {
  private readonly rules: CodeRules;
  private secret: number[] = [];
  private history: ScoredGuess[] = [];
  private guessed = new Set<string>();
  private turns = 0;
  /** The most black pegs any guess has earned: only a new best pays. */
  private milestone = 0;
  private randomActions = Rng.fromSeed(0, 'mastermind', 'random-action');

  constructor(private readonly config: MastermindConfig) {
    this.rules = { codeLength: config.code_length, numNumbers: config.num_numbers, duplicates: config.duplicate_numbers };
  }

  reset(seed: number): ResetResult {
    this.secret = this.drawCode(Rng.fromSeed(seed, 'mastermind', 'code'));
    this.randomActions = Rng.fromSeed(seed, 'mastermind', 'random-action');
    this.history = [];
    this.guessed = new Set();
    this.turns = 0;
    this.milestone = 0;
    // GEM's Mastermind gives no suffix at reset: its instruction ends by asking for the first guess.
    return { observation: this.instruction(), info: { instruction: '' } };
  }

  private instruction(): string {
    const { code_length, num_numbers, duplicate_numbers, max_turns } = this.config;
    return (
      'You are playing Mastermind.\n' +
      `You have to guess the secret ${code_length} digit code within ${max_turns} turns.\n` +
      `The code consists of digits from 1 to ${num_numbers} (inclusive). Duplicate numbers are ${duplicate_numbers ? 'allowed' : 'not allowed'}.\n` +
      'After you enter your guess, I will say mark your guess with black and white pegs, where a black peg indicates a correct digit in the correct position, while a white peg indicates a correct digit in the wrong position.\n' +
      `After thinking, format your final answer inside \\boxed{...}, for example, ${this.sampleRandomAction()}.\n` +
      'As you play, the history of your guesses will be appended below. Use the information to complete the game before you run out of guesses.\n' +
      'Enter your first guess to start the game.\n'
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
    const guess = box[1]!.split(/\s+/).map(Number);
    const action = guess.join(' ');
    const { code_length, num_numbers } = this.config;
    if (guess.length !== code_length) {
      return refused(`${at} guessed ${pythonList(guess)} which has ${guess.length} entries but the code has length ${code_length}.`, action);
    }
    if (guess.some((digit) => digit < 1 || digit > num_numbers)) {
      return refused(`${at} guessed ${pythonList(guess)}, which has numbers outside the range 1 to ${num_numbers}.`, action);
    }
    if (this.guessed.has(action)) return refused(`${at} guessed ${pythonList(guess)}, which has been already guessed before.`, action);

    this.guessed.add(action);
    const pegs = pegsFor(this.secret, guess);
    this.history.push({ guess, pegs });
    const reward = this.newBlackPegsReward(pegs.black);
    if (pegs.black === code_length) {
      const feedback = `Congratulations! You guessed the correct code ${pythonList(this.secret)} in ${this.turns} turns.`;
      return { feedback, reward, action, effective: true, outcome: 'won' };
    }
    const feedback = `${at} guessed ${pythonList(guess)}. This guess receives ${pegs.black} black peg(s) and ${pegs.white} white peg(s).`;
    return { feedback, reward, action, effective: true };
  }

  /** GEM's milestone reward: each black peg beyond the best so far pays 1/code_length. */
  private newBlackPegsReward(black: number): number {
    if (black <= this.milestone) return 0;
    const reward = (black - this.milestone) / this.config.code_length;
    this.milestone = black;
    return reward;
  }

  private drawCode(rng: Rng): number[] {
    const { code_length, num_numbers, duplicate_numbers } = this.config;
    if (duplicate_numbers) return Array.from({ length: code_length }, () => rng.intBetween(1, num_numbers));
    return rng.shuffle(Array.from({ length: num_numbers }, (_, i) => i + 1)).slice(0, code_length);
  }

  render(mode: 'text' | 'rgb'): string | null {
    if (mode === 'rgb') return null;
    const rows = this.history.map(({ guess, pegs }, i) => `${i + 1}. ${guess.join(' ')}  black ${pegs.black}, white ${pegs.white}`);
    return [`Mastermind: ${this.config.code_length} digits from 1 to ${this.config.num_numbers}, turn ${this.turns} of ${this.config.max_turns}`, ...rows].join(
      '\n',
    );
  }

  close(): void {}

  /** A random code the rules allow that has not been guessed yet (GEM's sampler, less its repeats). */
  sampleRandomAction(): string {
    for (;;) {
      const code = this.drawCode(this.randomActions);
      if (!this.guessed.has(code.join(' '))) return boxed(code);
    }
  }

  /** The first code, in increasing order, that fits every answer so far: a consistent guesser's move. */
  solutionAction(): string | null {
    const first = fittingCodes(this.rules, this.history).next();
    return first.done ? null : boxed(first.value);
  }

  /** How many codes still fit the pegs so far, and the digits each position may still hold. */
  stateNotes(): string {
    const perPosition = Array.from({ length: this.config.code_length }, () => new Set<number>());
    let count = 0;
    for (const code of fittingCodes(this.rules, this.history)) {
      count++;
      code.forEach((digit, i) => perPosition[i]!.add(digit));
    }
    const positions = perPosition.map((digits, i) => `position ${i + 1}: ${[...digits].sort((a, b) => a - b).join(' ')}`);
    return [`${count} code${count === 1 ? '' : 's'} fit`, ...positions].join('; ');
  }
}

export default defineEnv({
  name: 'mastermind',
  description: "GEM's Mastermind: crack a secret code of digits from black and white pegs (game:Mastermind-v0).",
  config: Config,
  env: Mastermind,
});
