/**
 * GEM's Guess The Number (`game:GuessTheNumber-v0`), with GEM's texts and rewards: guess a hidden
 * number in a range within max_turns, each guess answered "higher" or "lower". A guess is the
 * last number in \boxed{}; a response without one ends the episode with GEM's format-error
 * reward. On the last turn a wrong guess still earns 1 - distance / range, as GEM scores it.
 * Null min_number / max_number is GEM's random variant: the range and the turns are drawn per
 * episode. The worked solution is binary search over what the hints leave open.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';

const GEM_REWARD = { success: 1, internalStep: 0, invalidAction: 0, formatError: -0.1 } as const;
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
    const guess = lastBoxedNumber(response);
    const lastTurn = this.turns >= this.maxTurns;
    // GEM reads a guess of 0 as no guess (Python's `not player_guess`)
    if (guess === null || guess === 0) {
      return this.result(`At turn ${this.turns}, you did not provide a valid guess.`, GEM_REWARD.formatError, true, this.turns === this.maxTurns, guess, false);
    }
    const inRange = guess >= this.min && guess <= this.max;
    if (inRange && !this.guesses.has(guess) && guess === this.target) {
      this.guesses.add(guess);
      return this.result(
        `Congratulations! You guessed the correct number ${this.target} in ${this.turns} turns.`,
        GEM_REWARD.success,
        true,
        false,
        guess,
        true,
      );
    }
    let observation: string;
    let valid = false;
    if (!inRange) observation = `At turn ${this.turns}, you guessed ${guess}, which is outside the range specified.`;
    else if (this.guesses.has(guess)) observation = `At turn ${this.turns}, you guessed ${guess}, which has been already guessed before.`;
    else {
      valid = true;
      this.guesses.add(guess);
      const hint = guess > this.target ? 'lower' : 'higher';
      if (hint === 'lower') this.high = Math.min(this.high, guess - 1);
      else this.low = Math.max(this.low, guess + 1);
      observation = `At turn ${this.turns}, you guessed ${guess}, and the target number is ${hint} than ${guess}.`;
    }
    if (lastTurn) {
      const reward = inRange ? 1 - Math.abs(guess - this.target) / (this.max - this.min) : GEM_REWARD.invalidAction;
      return this.result('You have reached the maximum number of turns.', reward, true, true, guess, false, valid);
    }
    return this.result(observation, valid ? GEM_REWARD.internalStep : GEM_REWARD.invalidAction, false, false, guess, false, valid);
  }

  private result(
    observation: string,
    reward: number,
    terminated: boolean,
    truncated: boolean,
    guess: number | null,
    success: boolean,
    valid = success,
  ): StepResult {
    return {
      observation,
      reward,
      terminated,
      truncated,
      info: {
        action: guess === null ? null : String(guess),
        actionDesc: observation,
        suffix: SUFFIX,
        metrics: { success, action_is_valid: valid, format_error: guess === null || guess === 0, turns: this.turns },
        metricsAgg: { success: 'last', format_error: 'max', turns: 'last' },
      },
    };
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

/** The number in the last \boxed{...} that holds only digits (GEM's `\\boxed{(\d+)}`), or null. */
export function lastBoxedNumber(response: string): number | null {
  const matches = [...response.matchAll(/\\boxed\{(\d+)\}/g)];
  return matches.length === 0 ? null : Number(matches.at(-1)![1]);
}

export default defineEnv({
  name: 'guess_the_number',
  description: "GEM's Guess The Number (game:GuessTheNumber-v0): find a hidden number from higher/lower hints, guesses in \\boxed{}.",
  config: Config,
  env: GuessTheNumber,
});
