/**
 * The start of every command that loads a config, once it has loaded: what only built envs can
 * tell is checked here, and what the run decides is handed on as arguments, never set in a
 * module. Each env a manager plays is built once and closed, its MCP servers opened first in the
 * run's pool, so a dataset file that is missing, a tool that does not exist or a server that
 * cannot start is a one-line config error before anything runs; the host that comes back builds
 * the run's envs with that pool and the config's python_sandbox. The Python sandbox's probe is the
 * other half of start-up (sandbox_check.ts), made where a command knows which envs it plays.
 */
import { playedTags } from '../config/validate';
import type { AgenticConfig } from '../config/schema';
import { formatPath } from '../config/tree';
import { ConfigError, firstLine } from '../errors';
import type { PluginHost } from '../host/plugin_host';
import { McpPool } from '../sdk/mcp/pool';

/** The plugins a run builds its envs with, and the servers it must end. */
export interface StartedPlugins {
  /** The command's plugins, building envs with the run's MCP pool and python_sandbox. */
  readonly host: PluginHost;
  /** The run's MCP connections: closed (their stdio servers exit) when the command ends. */
  readonly mcp: McpPool;
}

/** Builds each played env once, its MCP servers opened first in `mcp`; a failure is a ConfigError naming the entry. */
async function checkEnvsBuild(config: AgenticConfig, host: PluginHost, mcp: McpPool): Promise<void> {
  const played = playedTags(config);
  for (const [tag, entry] of Object.entries(config.custom_envs)) {
    if (!played.has(tag)) continue;
    const plugin = await host.resolveEnv(entry.env_type);
    try {
      await mcp.connectIn(entry.env_config);
      await new plugin.env(entry.env_config as never, host.envContext()).close();
    } catch (error) {
      throw new ConfigError(`${formatPath(['custom_envs', tag, 'env_config'])}: env '${plugin.name}' cannot be built: ${firstLine(error)}`, { cause: error });
    }
  }
}

/** Starts the run's plugins for a loaded `config`: the caller closes `mcp` when the command ends, however it ends. */
export async function startPlugins(config: AgenticConfig, host: PluginHost): Promise<StartedPlugins> {
  const mcp = new McpPool();
  const run = host.forRun({ mcp, pythonSandbox: config.python_sandbox });
  try {
    await checkEnvsBuild(config, run, mcp);
  } catch (error) {
    await mcp.close();
    throw error;
  }
  return { host: run, mcp };
}

/** Runs `body` with the run's plugins started for `config`, and ends their MCP servers after it. */
export async function withPlugins<T>(config: AgenticConfig, host: PluginHost, body: (host: PluginHost) => Promise<T>): Promise<T> {
  const started = await startPlugins(config, host);
  try {
    return await body(started.host);
  } finally {
    await started.mcp.close();
  }
}

/** The start-up checks alone, for a command that builds no env of its own (config, plugins, doctor, serve). */
export async function checkPlugins(config: AgenticConfig, host: PluginHost): Promise<void> {
  await withPlugins(config, host, async () => undefined);
}
