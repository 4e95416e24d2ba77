/**
 * GEM's Guess The Number (`game:GuessTheNumber-v0`), with GEM's texts and rewards: guess a hidden
 * number in a range within max_turns, each guess answered "higher" or "lower". A guess is the
 * last number in \boxed{}; a response without one ends the episode with GEM's format-error
 * reward. On the last turn a wrong guess still earns 1 - distance / range, as GEM scores it.
 * Null min_number / max_number is GEM's random variant: the range and the turns are drawn per
 * episode. The worked solution is binary search over what the hints leave open.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn, refused } from '../_gem/game_step';
import { LanguageGameReward } from '../_gem/rewards';

const SUFFIX = 'Enter your next guess.';

const Config = z
  .strictObject({
    min_number: z.int().nullable().default(1).describe('Smallest possible number; null (with max_number null) draws the range per episode, as GEM.'),
    max_number: z.int().nullable().default(20).describe('Largest possible number (inclusive).'),
    max_turns: z.int().min(1).nullable().default(20).describe('Guesses before the game ends; null in the random variant: ceil(sqrt(range)) + 1.'),
  })
  .refine((c) => (c.min_number === null) === (c.max_number === null), 'min_number and max_number are both set or both null')
  .refine((c) => c.min_number === null || c.min_number < c.max_number!, 'min_number must be below max_number')
  .refine((c) => (c.min_number === null) === (c.max_turns === null), 'max_turns is null exactly when the range is (the random variant draws all three)');
type GuessConfig = z.output<typeof Config>;

class GuessTheNumber implements Env {
  private min = 1;
  private max = 20;
  private maxTurns = 20;
  private target = 1;
  private turns = 0;
  private guesses = new Set<number>();
  /** What the hints leave open, for the worked solution and the render. */
  private low = 1;
  private high = 20;
  private randomActions = Rng.fromSeed(0, 'guess_the_number', 'random-action');

  constructor(private readonly config: GuessConfig) {}

  reset(seed: number): ResetResult {
    const rng = Rng.fromSeed(seed, 'guess_the_number', 'game');
    this.randomActions = Rng.fromSeed(seed, 'guess_the_number', 'random-action');
    if (this.config.min_number === null) {
      this.min = rng.intBetween(1, 10);
      this.max = rng.intBetween(this.min + 5, this.min + 50);
      this.maxTurns = Math.ceil(Math.sqrt(this.max - this.min)) + 1;
    } else {
      this.min = this.config.min_number;
      this.max = this.config.max_number!;
      this.maxTurns = this.config.max_turns!;
    }
    this.target = rng.intBetween(this.min, this.max);
    this.turns = 0;
    this.guesses = new Set();
    this.low = this.min;
    this.high = this.max;
    return { observation: this.instructions(), info: { instruction: '', suffix: SUFFIX } };
  }

  step(response: string): StepResult {
    this.turns += 1;
    const step = gameStep(this.play(response), { turn: this.turns, maxTurns: this.maxTurns, suffix: SUFFIX, metrics: { turns: this.turns } });
    return { ...step, info: { ...step.info, actionDesc: step.observation } };
  }

  private play(response: string): GameTurn {
    const guess = Number(lastBoxed(response, /(\d+)/)?.[1] ?? 0);
    // GEM reads a guess of 0 as no guess (Python's `not player_guess`)
    if (guess === 0) return formatError(`At turn ${this.turns}, you did not provide a valid guess.`);
    const inRange = guess >= this.min && guess <= this.max;
    const refusal = !inRange ? 'which is outside the range specified' : this.guesses.has(guess) ? 'which has been already guessed before' : null;
    const turn = refusal === null ? this.newGuess(guess) : refused(`At turn ${this.turns}, you guessed ${guess}, ${refusal}.`, String(guess));
    // GEM scores a guess in the range on the last turn by its distance from the number.
    if (turn.outcome === 'won' || this.turns < this.maxTurns || !inRange) return turn;
    return { ...turn, reward: 1 - Math.abs(guess - this.target) / (this.max - this.min) };
  }

  /** A guess in the range not made before: the win, or a hint that narrows what is left open. */
  private newGuess(guess: number): GameTurn {
    const action = String(guess);
    this.guesses.add(guess);
    if (guess === this.target) {
      const feedback = `Congratulations! You guessed the correct number ${this.target} in ${this.turns} turns.`;
      return { feedback, reward: LanguageGameReward.success, action, effective: true, outcome: 'won' };
    }
    const hint = guess > this.target ? 'lower' : 'higher';
    if (hint === 'lower') this.high = Math.min(this.high, guess - 1);
    else this.low = Math.max(this.low, guess + 1);
    const feedback = `At turn ${this.turns}, you guessed ${guess}, and the target number is ${hint} than ${guess}.`;
    return { feedback, reward: LanguageGameReward.internalStep, action, effective: true };
  }

  private instructions(): string {
    return (
      'You are playing Guess The Number.\n' +
      `You have to guess the number between ${this.min} and ${this.max} (inclusive) within ${this.maxTurns} turns.\n` +
      "As you enter your guess, the game will provide you with hints such as the target number is 'higher' or 'lower'.\n" +
      'You may provide your response in any manner. Only the number that is wrapped inside \\boxed{} will be considered as your guess, ' +
      `for example, \\boxed{${this.min + Math.floor((this.max - this.min) / 3)}}.\n` +
      'As you play, the history of your guesses will be appended below. Use the information to complete the game before you run out of guesses.\n' +
      'Enter your first guess to start the game.\n'
    );
  }

  render(mode: 'text' | 'rgb'): string | null {
    if (mode !== 'text') return null;
    const tried = [...this.guesses].sort((a, b) => a - b).join(', ') || 'none';
    return `range ${this.min}-${this.max}, turn ${this.turns} of ${this.maxTurns}; guessed: ${tried}; still possible: ${this.low}-${this.high}`;
  }

  close(): void {}

  /** A number of the range not guessed yet (GEM's sampler may repeat one, which the rules refuse). */
  sampleRandomAction(): string {
    const open = Array.from({ length: this.max - this.min + 1 }, (_, i) => this.min + i).filter((n) => !this.guesses.has(n));
    return `\\boxed{${this.randomActions.choice(open)}}`;
  }

  /** Binary search: the middle of what the hints leave open. */
  solutionAction(): string {
    return `\\boxed{${Math.floor((this.low + this.high) / 2)}}`;
  }
}

export default defineEnv({
  name: 'guess_the_number',
  description: "GEM's Guess The Number (game:GuessTheNumber-v0): find a hidden number from higher/lower hints, guesses in \\boxed{}.",
  config: Config,
  env: GuessTheNumber,
});
