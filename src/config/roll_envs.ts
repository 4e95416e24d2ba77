/**
 * ROLL's custom_envs entries whose fate depends on what the entry is, not only on a key's path
 * (roll.ts applies these with its rules):
 *
 *   vision-language managers   refused: the policies here read text only
 *   envs of outside services   refused, naming the service that is not built (ROCK's sandboxed
 *                              agents, OpenReward's hosted environments, Atropos's servers)
 *   a game behind a service    the service's keys have no effect; the game's keys are honoured
 *                              (sokoban_sandbox is Sokoban played in a ROCK sandbox)
 */
import { ConfigError } from '../errors';
import { isObject, type TreeObject } from './tree';

/** ROLL's env managers that render observations as images for a vision-language policy. */
const VISION_LANGUAGE_MANAGER = /(^|\.)VL\w*EnvManager$/;

const quoted = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** What each env type needs that is not built, in one phrase from its env_config. */
const SERVICE_ENVS: Record<string, (config: TreeObject) => string> = {
  rock_tb_native_env: (c) =>
    `runs an agent CLI${isObject(c.agent_config) && c.agent_config.run_cmd ? ` (${quoted(c.agent_config.run_cmd)})` : ''} on Terminal-Bench/SWE-bench tasks in ROCK sandboxes (env_config.sandbox_base_url ${quoted(c.sandbox_base_url ?? 'unset')}); ROCK's sandboxed agent environments are not built`,
  openreward_env: (c) =>
    `plays OpenReward's hosted environment ${quoted(c.environment_name ?? '(environment_name unset)')} through the OpenReward SDK; OpenReward environments are not built`,
  atropos_env: (c) =>
    `takes its tasks and scores from an Atropos environment server (${quoted(c.atropos_env_path ?? 'atropos_env_path unset')}); Atropos environments are not built`,
};

/** env_config keys of an env type that reach its outside service, not the game. */
const SERVICE_KEYS: Record<string, readonly string[]> = {
  sokoban_sandbox: ['base_url', 'server_start_timeout'],
};

/** Refuses the entries above, and moves the service keys of the rest into `inert` (as paths). */
export function applyEnvFates(tree: TreeObject, inert: string[]): void {
  const envs = tree.custom_envs;
  if (!isObject(envs)) return;
  for (const [tag, entry] of Object.entries(envs)) {
    if (!isObject(entry)) continue;
    const at = `custom_envs.${tag}`;
    if (typeof entry.env_manager_cls === 'string' && VISION_LANGUAGE_MANAGER.test(entry.env_manager_cls)) {
      throw new ConfigError(`${at}.env_manager_cls: ${entry.env_manager_cls}: vision-language policies are not supported (the policies here read text only)`);
    }
    const type = typeof entry.env_type === 'string' ? entry.env_type : '';
    const config = isObject(entry.env_config) ? entry.env_config : {};
    const service = SERVICE_ENVS[type];
    if (service) throw new ConfigError(`${at}.env_type: ${type} ${service(config)}`);
    for (const key of SERVICE_KEYS[type] ?? []) {
      if (key in config) {
        delete config[key];
        inert.push(`${at}.env_config.${key}`);
      }
    }
  }
}
