/**
 * How an env config names its reward: by registered name (`reward: exact_match`), or, for a reward
 * that takes settings, as a mapping of its name and settings (`reward: {name: llm_judge, base_url:
 * ...}`). Envs declare their `reward` key with this schema; the settings are checked against the
 * reward's own schema where the reward is known: at start-up (src/config/validate.ts names the
 * bad key by its full path) and in EnvContext.reward, which binds a reward to its settings.
 */
import { z } from 'zod';
import { PluginError } from '../errors';
import type { RewardContext, RewardPlugin } from './types';

export const RewardReference = z.union([
  z.string().min(1),
  z.looseObject({ name: z.string().min(1).describe("The reward's registered name.") }).describe("The reward's name and its settings."),
]);
export type RewardReference = z.output<typeof RewardReference>;

/** Rewards take no settings unless they declare a schema for them. */
const NO_SETTINGS = z.strictObject({});

export function rewardName(reference: RewardReference): string {
  return typeof reference === 'string' ? reference : reference.name;
}

/** The settings a reference gives (everything but `name`), not yet checked. */
export function rewardSettings(reference: RewardReference): Record<string, unknown> {
  if (typeof reference === 'string') return {};
  const { name: _, ...settings } = reference;
  return settings;
}

/** The schema a reward's settings are checked against. */
export function rewardSettingsSchema(reward: RewardPlugin): z.ZodType {
  return reward.config ?? NO_SETTINGS;
}

/**
 * The reward bound to the settings `reference` gives (validated, defaults filled) and to the run's
 * context: its score takes the input alone. Bad settings are a one-line PluginError naming the
 * first bad key.
 */
export function bindReward(reward: RewardPlugin, reference: RewardReference, context?: RewardContext): RewardPlugin {
  const parsed = rewardSettingsSchema(reward).safeParse(rewardSettings(reference));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const keys = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue.path;
    const message = issue.code === 'unrecognized_keys' ? 'unknown setting' : issue.message;
    throw new PluginError(`reward '${reward.name}': ${keys.length > 0 ? `${keys.join('.')}: ` : ''}${message}`);
  }
  const settings = parsed.data;
  return Object.freeze({ ...reward, score: (input: Parameters<RewardPlugin['score']>[0]) => reward.score(input, settings, context) });
}
