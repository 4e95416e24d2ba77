/**
 * The whole config pipeline, lowest layer first:
 *
 *   schema defaults -> config file (with its defaults list and extends) -> command-line overrides
 *   -> interpolation -> ROLL's keys (roll.ts: inert ones set aside, refused ones an error, helper
 *   variables removed) -> validation (schema, cross-key rules, plugin env configs)
 *
 * With no config file named, the config file is the built-in configs/agentic.yaml (embedded in
 * the binary), as Hydra's @hydra.main names a default config.
 */
import { resolve } from 'node:path';
import { existsSync, readdirSync, statSync } from 'node:fs';
import defaultConfigText from '../../configs/agentic.yaml' with { type: 'text' };
import { ConfigError, UsageError } from '../errors';
import { didYouMean } from '../util/suggest';
import { CONFIG_EXTENSIONS, composeFile, composeText, findConfigFile, type ComposedConfig } from './compose';
import { resolveInterpolations } from './interpolate';
import { createKeyOracle } from './keys';
import { applyOverrides, parseOverride } from './overrides';
import { applyRollKeys, referencedRoots } from './roll';
import { configDefaults, type AgenticConfig } from './schema';
import { mergeOver, type TreeObject } from './tree';
import { validateConfig, type EnvResolver } from './validate';

export const DEFAULT_CONFIG_PATH = 'configs';
export const BUILTIN_CONFIG_NAME = 'configs/agentic.yaml (built in)';

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
}

/** Reads the primary config and everything it pulls in (no defaults layer, no overrides). */
export async function composePrimary(request: ConfigRequest): Promise<ComposedConfig> {
  const cwd = request.cwd ?? process.cwd();
  if (request.configFile && (request.configName || request.configPath)) {
    throw new UsageError('give either -c FILE or --config-path/--config-name, not both');
  }
  if (request.configFile) {
    const file = resolve(cwd, request.configFile);
    if (!existsSync(file)) throw new ConfigError(`${request.configFile}: no such config file`);
    if (statSync(file).isDirectory()) throw new ConfigError(`${request.configFile}: is a folder; name a config file (or use --config-path DIR --config-name NAME)`);
    return composeFile(file);
  }
  if (request.configName) {
    const dir = resolve(cwd, request.configPath ?? DEFAULT_CONFIG_PATH);
    const file = findConfigFile(dir, request.configName);
    if (!file) throw new ConfigError(`config '${request.configName}' not found in ${request.configPath ?? DEFAULT_CONFIG_PATH}/${suggestConfig(dir, request.configName)}`);
    return composeFile(file);
  }
  if (request.configPath) throw new UsageError('--config-path needs --config-name');
  if (typeof defaultConfigText !== 'string') throw new Error('the built-in config was not embedded as text');
  return composeText(defaultConfigText, BUILTIN_CONFIG_NAME);
}

function suggestConfig(dir: string, name: string): string {
  if (!existsSync(dir)) return ' (the folder does not exist)';
  const names = readdirSync(dir)
    .filter((f) => CONFIG_EXTENSIONS.some((ext) => f.endsWith(ext)))
    .map((f) => f.replace(/\.[^.]+$/, ''));
  return didYouMean(name, names);
}

/** Composes, overrides, interpolates and sets ROLL's keys aside: the final tree before validation. */
export async function resolveTree(request: ConfigRequest, envs: EnvResolver): Promise<{ tree: TreeObject; files: string[]; inert: string[]; unusedHelpers: string[] }> {
  const primary = await composePrimary(request);
  const layered = mergeOver(configDefaults() as TreeObject, primary.tree);
  const overrides = (request.overrides ?? []).map(parseOverride);
  const overridden = await applyOverrides(layered, overrides, createKeyOracle(envs));
  const roll = applyRollKeys(resolveInterpolations(overridden), referencedRoots(overridden));
  return { ...roll, files: primary.files };
}

export async function loadConfig(request: ConfigRequest, envs: EnvResolver): Promise<LoadedConfig> {
  const { tree, files, inert, unusedHelpers } = await resolveTree(request, envs);
  const config = await validateConfig(tree, envs);
  return { config, files, overrides: [...(request.overrides ?? [])], inert, unusedHelpers };
}
