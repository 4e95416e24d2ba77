/**
 * The whole config pipeline, lowest layer first:
 *
 *   schema defaults -> config file (with its defaults list and extends) -> AgentFly's command-line
 *   keys (agentfly.ts: translated to ours) -> agentic's command-line overrides -> interpolation
 *   -> ROLL's keys (roll.ts: inert ones set aside, refused ones an error, helper variables
 *   removed) -> validation (schema, cross-key rules) -> the plugins (the `plugins:` paths loaded,
 *   each entry's env_type resolved) -> each env_config against its plugin's schema
 *
 * Validation is pure (validate.ts); loading reads files and plugins, and builds nothing: what only
 * a built env can tell is checked at the start of the command that builds envs (cli/start_up.ts).
 *
 * With no config file named, the config file is the built-in configs/agentic.yaml (embedded in
 * the binary), as Hydra's @hydra.main names a default config; a command line with AgentFly's keys
 * gets AgentFly's own default instead, the built-in configs/agentfly.yaml. `--config-name` looks
 * in the config folder, then among the built-in configs (search_path.ts).
 */
import { basename, extname, resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { ConfigError, firstLine, PluginError, UsageError } from '../errors';
import { didYouMean } from '../util/suggest';
import { BUILTIN_CONFIGS, builtinConfigName } from './builtin';
import { composeFile, composeText, type ComposedConfig } from './compose';
import { resolveLazily, throwIfRead } from './interpolate';
import { createKeyOracle } from './keys';
import { isAgentFlyPath, translateAgentFly } from './agentfly';
import { applyOverrides, parseOverride } from './overrides';
import { applyRollKeys, referencedRoots } from './roll';
import { availableConfigs, searchPath } from './search_path';
import { configDefaults, type AgenticConfig } from './schema';
import { mergeOver, type TreeObject } from './tree';
import { playedTags, validateConfig, validateEnvSettings, type EnvResolver, type PluginSchemas } from './validate';

export const DEFAULT_CONFIG_PATH = 'configs';
export const BUILTIN_CONFIG_NAME = builtinConfigName('agentic.yaml');
export const AGENTFLY_CONFIG_NAME = "configs/agentfly.yaml (built in: AgentFly's defaults)";

export interface ConfigRequest {
  /** `-c FILE`: a config file path. */
  configFile?: string;
  /** `--config-path DIR` (default ./configs) with `--config-name NAME`. */
  configPath?: string;
  configName?: string;
  /** Hydra overrides, in order. */
  overrides?: readonly string[];
  cwd?: string;
}

export interface LoadedConfig {
  config: AgenticConfig;
  /** The config files that contributed (or the built-in name). */
  files: string[];
  overrides: string[];
  /** ROLL keys read but with no effect here, and helper values nothing reads (roll.ts); absent: none. */
  inert?: string[];
  unusedHelpers?: string[];
  /** custom_envs entries that no env manager's tags name: not built or checked, as in ROLL (validate.ts); absent: none. */
  unplayedEnvs?: string[];
  /** AgentFly keys read but with no effect here (agentfly.ts); absent: none. */
  agentFlyInert?: string[];
  /** Warnings of the interpolations (oc.deprecated), one a line; absent: none. */
  warnings?: string[];
}

/**
 * Reads the primary config and everything it pulls in (no defaults layer, no overrides);
 * `agentFly`: the command line has AgentFly's keys, so the built-in default is AgentFly's.
 */
export async function composePrimary(request: ConfigRequest, agentFly = false): Promise<ComposedConfig> {
  const cwd = request.cwd ?? process.cwd();
  if (request.configFile && (request.configName || request.configPath)) {
    throw new UsageError('give either -c FILE or --config-path/--config-name, not both');
  }
  if (request.configFile) {
    const file = resolve(cwd, request.configFile);
    if (!existsSync(file)) throw new ConfigError(`${request.configFile}: no such config file`);
    if (statSync(file).isDirectory())
      throw new ConfigError(`${request.configFile}: is a folder; name a config file (or use --config-path DIR --config-name NAME)`);
    return composeFile(file);
  }
  if (request.configName) {
    const root = resolve(cwd, request.configPath ?? DEFAULT_CONFIG_PATH);
    const files = searchPath(root);
    const file = files.find(root, request.configName);
    if (!file) throw new ConfigError(notFound(request.configName, root, request.configPath));
    return composeFile(file, files);
  }
  if (request.configPath) throw new UsageError('--config-path needs --config-name');
  const [text, name] = agentFly ? [BUILTIN_CONFIGS['agentfly.yaml'], AGENTFLY_CONFIG_NAME] : [BUILTIN_CONFIGS['agentic.yaml'], BUILTIN_CONFIG_NAME];
  if (typeof text !== 'string') throw new Error('the built-in config was not embedded as text');
  return composeText(text, name);
}

/** A missing --config-name, with every name there is; a --config-path that does not exist is said so. */
function notFound(name: string, root: string, configPath: string | undefined): string {
  const folder = `${configPath ?? DEFAULT_CONFIG_PATH}/${configPath !== undefined && !existsSync(root) ? ' (no such folder)' : ''}`;
  const names = availableConfigs(root).map((c) => c.name);
  return `config '${name}' not found in ${folder} or built in${didYouMean(name, names)}; available: ${names.join(', ')}`;
}

/** Composes, overrides, interpolates and sets ROLL's keys aside: the final tree before validation. */
export async function resolveTree(
  request: ConfigRequest,
  envs: EnvResolver,
): Promise<{ tree: TreeObject; files: string[]; inert: string[]; unusedHelpers: string[]; agentFlyInert: string[]; warnings: string[] }> {
  const parsed = (request.overrides ?? []).map(parseOverride);
  const agentFly = parsed.filter((o) => isAgentFlyPath(o.path));
  const ours = parsed.filter((o) => !isAgentFlyPath(o.path));
  const primary = await composePrimary(request, agentFly.length > 0);
  const layered = mergeOver(configDefaults() as TreeObject, primary.tree);
  const oracle = createKeyOracle(envs);
  const translated = translateAgentFly(agentFly, layered, agentFly.length > 0 ? await datasetRows(envs) : undefined);
  const overridden = await applyOverrides(await applyOverrides(layered, translated.overrides, oracle), ours, oracle);
  const cwd = request.cwd ?? process.cwd();
  const resolved = resolveLazily(overridden, { configName: jobName(request), cwd });
  const roll = applyRollKeys(resolved.tree, referencedRoots(overridden));
  // as in OmegaConf, a value whose interpolation fails is an error only where it is read
  throwIfRead(roll.tree, resolved.unresolved);
  return { ...roll, files: primary.files, agentFlyInert: translated.inert, warnings: resolved.warnings };
}

/** The config's name, as Hydra's job.config_name: --config-name, or the file's name without .yaml; null for the built-in config. */
function jobName(request: ConfigRequest): string | null {
  if (request.configName) return basename(request.configName, extname(request.configName));
  if (request.configFile) return basename(request.configFile, extname(request.configFile));
  return null;
}

export async function loadConfig(request: ConfigRequest, envs: EnvResolver): Promise<LoadedConfig> {
  const { tree, files, inert, unusedHelpers, agentFlyInert, warnings } = await resolveTree(request, envs);
  const config = await validateWithPlugins(tree, envs);
  const unplayed = unplayedEnvs(config);
  return {
    config,
    files,
    overrides: [...(request.overrides ?? [])],
    inert,
    unusedHelpers,
    agentFlyInert,
    ...(unplayed.length ? { unplayedEnvs: unplayed } : {}),
    ...(warnings.length ? { warnings } : {}),
  };
}

/** Validates `tree`, then each env_config against its plugin, which `envs` loads and resolves. */
export async function validateWithPlugins(tree: TreeObject, envs: EnvResolver): Promise<AgenticConfig> {
  const config = validateConfig(tree);
  return validateEnvSettings(config, await resolvePluginSchemas(config, envs));
}

/** Loads the `plugins:` paths and resolves each entry's env_type: what validateEnvSettings checks env configs against. */
async function resolvePluginSchemas(config: AgenticConfig, envs: EnvResolver): Promise<PluginSchemas> {
  try {
    await envs.loadAll(config.plugins);
  } catch (error) {
    if (error instanceof PluginError) throw new ConfigError(`plugins: ${error.message}`, { cause: error });
    throw error;
  }
  const resolved = new Map<string, Awaited<ReturnType<EnvResolver['resolveEnv']>> | Error>();
  for (const [tag, entry] of Object.entries(config.custom_envs)) {
    resolved.set(tag, await envs.resolveEnv(entry.env_type).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))));
  }
  return { envs: resolved, ...(envs.rewardPlugin ? { reward: envs.rewardPlugin.bind(envs) } : {}) };
}

/** The custom_envs entries neither env manager plays (ROLL's example files define more envs than they play). */
function unplayedEnvs(config: AgenticConfig): string[] {
  const played = playedTags(config);
  return Object.keys(config.custom_envs).filter((tag) => !played.has(tag));
}

/** How many rows tool_use reads from a dataset (a file or a built-in set): AgentFly's validation covers them all. */
async function datasetRows(envs: EnvResolver): Promise<(dataset: string) => number> {
  const toolUse = await envs.resolveEnv('tool_use');
  const context = envs.envContext?.() ?? { cwd: process.cwd() };
  return (dataset) => {
    try {
      return toolUse.epochRows!({ dataset } as never, context as never);
    } catch (error) {
      throw new ConfigError(`data.val_files: ${firstLine(error)}`);
    }
  };
}
