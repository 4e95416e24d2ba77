/**
 * reasoning-gym's letter_counting as GEM serves it (rg:letter_counting): one turn; the question is
 * the observation, the answer goes in `\boxed{...}` (the last one counts) and is scored by
 * reasoning-gym's score_answer. The dataset is `size` questions made from `seed`; an episode's seed
 * picks one of them at random, as GEM's reset(seed) does. Rules, texts and scoring after
 * reasoning-gym (Apache-2.0, reasoning_gym/algorithmic/letter_counting.py) and GEM
 * (gem/envs/reasoning_gym.py); the code is ours.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxedContent } from '../_gem/boxed';
import { letterCountingQuestion, type Question, scoreAnswer } from './questions';

const Config = z.strictObject({
  size: z.number().int().min(1).default(500).describe('Questions in the dataset.'),
  seed: z.number().int().min(0).default(42).describe('Seed the dataset is made from (episode seeds pick its questions).'),
});
type LetterCountingConfig = z.output<typeof Config>;

/** What GEM's dataset envs observe after their one turn. */
const TERMINAL_STATE = '<｜TERMINAL_STATE｜>';

class LetterCounting implements Env {
  private row: Question = { question: '', answer: '', spanLetters: 0 };
  private answered: string | null = null;
  private randomActions = Rng.fromSeed(0, 'letter_counting', 'random-action');

  constructor(private readonly config: LetterCountingConfig) {}

  reset(seed: number): ResetResult {
    const index = Rng.fromSeed(seed, 'letter_counting', 'row').int(this.config.size);
    this.row = letterCountingQuestion(this.config.seed, index);
    this.answered = null;
    this.randomActions = Rng.fromSeed(seed, 'letter_counting', 'random-action');
    return { observation: this.row.question, info: { instruction: '' } };
  }

  step(response: string): StepResult {
    const answer = lastBoxedContent(response);
    const reward = scoreAnswer(answer, this.row.answer);
    this.answered = answer;
    return {
      observation: TERMINAL_STATE,
      reward,
      terminated: true,
      truncated: true,
      info: {
        action: answer,
        metrics: { success: reward === 1, action_is_valid: answer !== null },
        metricsAgg: { success: 'last' },
      },
    };
  }

  render(mode: 'text' | 'rgb'): string | null {
    if (mode === 'rgb') return null;
    return this.answered === null ? this.row.question : `${this.row.question}\nAnswered: ${this.answered} (correct: ${this.row.answer})`;
  }

  close(): void {}

  /** A boxed count from 0 to the letters in the span, uniformly (GEM's env has no random action). */
  sampleRandomAction(): string {
    return `\\boxed{${this.randomActions.intBetween(0, this.row.spanLetters)}}`;
  }
}

export default defineEnv({
  name: 'letter_counting',
  description: "reasoning-gym's letter_counting as GEM serves it: count a letter in a span of a book, one turn, answer in \\boxed{}.",
  config: Config,
  env: LetterCounting,
});
