/**
 * The start-up check of the Python sandbox: a run whose envs use a tool or reward marked
 * `sandboxed` (it runs model-written code through runPython) needs bubblewrap to work, unless the
 * config opts out with python_sandbox=unconfined. Called once by each command that plays envs; it
 * sets nothing: the mode travels to the plugins in their contexts (start_up.ts).
 *
 * An env uses a plugin when its env_config, with the env's defaults filled in, holds the plugin's
 * registered name as a string (tool_use's `tools: [python_executor]`, `reward: code_tests`).
 * Plugins that call runPython without being named there still meet the same one-line refusal at
 * their first call.
 */
import type { AgenticConfig } from '../config/schema';
import { PluginError } from '../errors';
import { sandboxRefusal, sandboxSupport } from '../sandbox/python';
import type { PluginHost } from '../host/plugin_host';

/** The warning of python_sandbox=unconfined, printed by the command's start-up check. */
export const UNCONFINED_WARNING =
  'python_sandbox=unconfined: model-written Python runs without bwrap (resource limits, an audit hook and timeouts only); this is not a boundary';

export interface SandboxCheckOptions {
  /** The custom_envs tags the run plays; default: train_env_manager's and val_env_manager's. */
  tags?: readonly string[];
  /** Where the unconfined warning goes. */
  warn?: (line: string) => void;
}

/** If the envs use a sandboxed plugin: returns when bwrap works, warns (unconfined), or throws a one-line PluginError. */
export async function checkPythonSandbox(config: AgenticConfig, host: PluginHost, options: SandboxCheckOptions = {}): Promise<void> {
  const used = await sandboxedPluginsUsed(config, host, options.tags);
  if (used.length === 0) return;
  if (config.python_sandbox === 'unconfined') {
    options.warn?.(UNCONFINED_WARNING);
    return;
  }
  const support = await sandboxSupport();
  if (support.problem) throw new PluginError(sandboxRefusal(support, ` (needed by ${used.join(', ')})`));
}

/** `tool python_executor in Coding, CodingVal` for each sandboxed plugin the envs of `tags` name. */
export async function sandboxedPluginsUsed(config: AgenticConfig, host: PluginHost, tags?: readonly string[]): Promise<string[]> {
  const wanted = tags ?? [...config.train_env_manager.tags, ...config.val_env_manager.tags];
  const used = new Map<string, Set<string>>();
  for (const tag of new Set(wanted)) {
    const custom = config.custom_envs[tag];
    if (!custom) continue;
    let envConfig: unknown = custom.env_config;
    try {
      const parsed = (await host.resolveEnv(custom.env_type)).config.safeParse(custom.env_config);
      if (parsed.success) envConfig = parsed.data;
    } catch {
      // an env that does not resolve is reported where it is built; its raw env_config still counts
    }
    for (const name of stringsIn(envConfig)) {
      for (const kind of ['tool', 'reward'] as const) {
        if (!host.registry.get(kind, name)?.definition.sandboxed) continue;
        const key = `${kind} ${name}`;
        used.set(key, (used.get(key) ?? new Set()).add(tag));
      }
    }
  }
  return [...used].map(([key, inTags]) => `${key} in ${[...inTags].join(', ')}`);
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}
