/**
 * A two-armed bandit, the smallest agentic task: one turn, two arms. One arm pays a small sure
 * reward, the other a large reward with a small probability, so its expected value is higher
 * (1.0 x 0.25 > 0.1 with the defaults). The arms are shown in a random order each episode, so the
 * policy has to read their names. After RAGEN's bandit; the wording is ours.
 */
import { actionPattern, defineEnv, type Env, parseAnswer, type ResetResult, Rng, type StepResult, z } from 'agentic';

const Config = z.strictObject({
  safe_arm: z.string().min(1).default('phoenix').describe('Name of the arm that always pays safe_reward.'),
  risky_arm: z.string().min(1).default('dragon').describe('Name of the arm that pays risky_reward with probability risky_prob.'),
  safe_reward: z.number().default(0.1),
  risky_reward: z.number().default(1),
  risky_prob: z.number().min(0).max(1).default(0.25),
  format_penalty: z.number().max(0).default(0).describe('Reward of a response with no valid arm (<= 0).'),
  action_pattern: actionPattern(),
});
type BanditConfig = z.output<typeof Config>;

const INSTRUCTION =
  'You are playing a two-armed bandit. Pulling an arm gives a random reward; one arm is better on average. ' +
  'Pull exactly one arm by answering with its name, for example <answer>name</answer>.';

class Bandit implements Env {
  private arms: string[] = [];
  private rng: Rng = Rng.fromSeed(0, 'bandit');
  private randomActions: Rng = Rng.fromSeed(0, 'bandit', 'random-action');
  private pulled: { arm: string; reward: number } | null = null;

  constructor(private readonly config: BanditConfig) {
    if (config.safe_arm.toLowerCase() === config.risky_arm.toLowerCase()) {
      throw new Error('safe_arm and risky_arm must have different names');
    }
  }

  reset(seed: number): ResetResult {
    this.rng = Rng.fromSeed(seed, 'bandit');
    this.randomActions = Rng.fromSeed(seed, 'bandit', 'random-action');
    this.arms = this.rng.shuffle([this.config.safe_arm, this.config.risky_arm]);
    this.pulled = null;
    return { observation: this.observation(), info: { instruction: INSTRUCTION } };
  }

  step(response: string): StepResult {
    const parsed = parseAnswer(response, { pattern: this.config.action_pattern, actions: this.arms });
    if (parsed.action === null) {
      return {
        observation: this.observation(),
        reward: this.config.format_penalty,
        terminated: false,
        truncated: false,
        info: {
          action: null,
          actionDesc: 'That was not the name of an arm.',
          metrics: { success: false, action_is_valid: false, action_is_effective: false, format_penalty: this.config.format_penalty },
          metricsAgg: { success: 'last' },
        },
      };
    }
    const risky = parsed.action === this.config.risky_arm;
    const reward = risky ? (this.rng.bernoulli(this.config.risky_prob) ? this.config.risky_reward : 0) : this.config.safe_reward;
    this.pulled = { arm: parsed.action, reward };
    return {
      observation: this.observation(),
      reward,
      terminated: true,
      truncated: false,
      info: {
        action: parsed.action,
        actionDesc: `You pulled ${parsed.action} and won ${reward}.`,
        metrics: { success: risky, action_is_valid: true, action_is_effective: true, format_penalty: 0 },
        metricsAgg: { success: 'last' },
      },
    };
  }

  private observation(): string {
    const arms = `The arms are: ${this.arms.join(', ')}.`;
    return this.pulled ? `${arms} You pulled ${this.pulled.arm} and won ${this.pulled.reward}.` : arms;
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.observation() : null;
  }

  close(): void {}

  sampleRandomAction(): string {
    const arms = this.arms.length > 0 ? this.arms : [this.config.safe_arm, this.config.risky_arm];
    return `<answer>${this.randomActions.choice(arms)}</answer>`;
  }
}

export default defineEnv({
  name: 'bandit',
  description: 'Two-armed bandit: one safe arm, one risky arm worth more on average; one turn.',
  config: Config,
  env: Bandit,
});
