/**
 * The one way an env is made from a custom_envs entry, wherever one is played: the env managers
 * (and the distributed workers' envs), `agentic play`, the replays of `agentic render`, and the
 * warm start. Every call goes through the guard (sdk/guarded_env.ts), whose time limits on one
 * reset() and one step() are the entry's episode budget.
 */
import type { CustomEnvConfig } from '../config/schema';
import { GuardedEnv } from '../sdk/guarded_env';
import type { EnvContext, EnvPlugin } from '../sdk/types';

/**
 * The env of `entry` (its plugin resolved from entry.env_type), guarded, its instance made at its
 * first reset. entry.env_config is used as given: validation has parsed it with the plugin's
 * schema (and filled its defaults). `label` names the env in failures (`env <tag>`).
 */
export function entryEnv(plugin: EnvPlugin, entry: CustomEnvConfig, context: EnvContext, label: string): GuardedEnv {
  const budgetMs = entry.episode_timeout_s * 1000;
  return new GuardedEnv(plugin, entry.env_config, context, { label, resetTimeoutMs: budgetMs, stepTimeoutMs: budgetMs });
}
