/**
 * Finds plugins: the built-ins by name, and users' files and folders by path, loaded at run time
 * with a dynamic import (also from the compiled binary). A user's plugin imports 'agentic' and
 * gets this process's SDK module, so it shares our zod, RNG and (later) tfjs engine; its other
 * packages resolve as Node resolves them from its folder, checked before it is imported
 * (sdk/package_imports.ts).
 *
 * A folder of plugins holds plugin modules: each .ts/.js/.mjs file directly in it, and each
 * sub-folder with an index file; a sub-folder without one is searched the same way (so a folder
 * laid out like ours, envs/ rewards/ tools/, works). Files starting with `_` are helpers, not
 * plugins, and tests and type declarations are skipped.
 *
 * The envs a host builds get its services in their EnvContext: the run's MCP connections and its
 * python_sandbox. A command loads its config with a plain host, and its start-up (cli/start_up.ts)
 * hands on `host.forRun(services)`: the same plugins, with what start-up decided.
 */
import { plugin as registerBunPlugin } from 'bun';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { firstLine, PluginError } from '../errors';
import { displayPath } from '../util/paths';
import { BUILTIN_PLUGINS } from './builtin_plugins';
import { checkDefinition, PluginRegistry } from './registry';
import type { PythonSandboxMode } from '../sandbox/modes';
import * as sdk from '../sdk';
import { McpPool } from '../sdk/mcp/pool';
import { checkPackagesInstalled, missingPackageIn } from '../sdk/package_imports';
import { bindReward, rewardName } from '../sdk/reward_reference';
import type { EnvContext, EnvPlugin, McpServers, PluginDefinition, PluginKind, PluginOfKind, RewardPlugin } from '../sdk/types';

const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];
const MAX_FOLDER_DEPTH = 4;

let sdkModuleRegistered = false;

/** Makes `import ... from 'agentic'` resolve to this process's SDK, for every later import. */
function registerSdkModule(): void {
  if (sdkModuleRegistered) return;
  registerBunPlugin({
    name: 'agentic-sdk',
    setup(build) {
      build.module('agentic', () => ({ exports: sdk as Record<string, unknown>, loader: 'object' }));
    },
  });
  sdkModuleRegistered = true;
}

/** Whether an env_type (or similar reference) names a file rather than a registered plugin. */
export function isPathReference(ref: string): boolean {
  return ref.includes('/') || ref.includes('\\') || /\.(m?[jt]s)$/.test(ref);
}

function isModuleFile(name: string): boolean {
  return (
    MODULE_EXTENSIONS.some((ext) => name.endsWith(ext)) &&
    !name.startsWith('_') &&
    !name.startsWith('.') &&
    !name.endsWith('.d.ts') &&
    !/\.(test|spec)\.[mc]?[jt]s$/.test(name)
  );
}

/** The plugin module files of a folder, by the rule in this file's header. */
export function pluginFilesIn(folder: string, depth = 0): string[] {
  const files: string[] = [];
  const entries = readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isFile() && isModuleFile(entry.name)) files.push(path);
    else if (entry.isDirectory() && !entry.name.startsWith('.') && !entry.name.startsWith('_') && entry.name !== 'node_modules') {
      const index = MODULE_EXTENSIONS.map((ext) => join(path, `index${ext}`)).find((p) => existsSync(p));
      if (index) files.push(index);
      else if (depth < MAX_FOLDER_DEPTH) files.push(...pluginFilesIn(path, depth + 1));
    }
  }
  return files;
}

/** What a run hands the plugins it builds, decided once at its start. */
export interface PluginServices {
  /** The run's MCP connections (an McpPool the run closes when it ends). */
  readonly mcp: McpServers;
  /** How runPython contains model-written code (the config's python_sandbox). */
  readonly pythonSandbox: PythonSandboxMode;
}

/** The plugins' tables, shared by a host and the hosts made from it with forRun. */
interface PluginTables {
  readonly registry: PluginRegistry;
  readonly loaded: Map<string, PluginDefinition[]>;
}

export class PluginHost {
  readonly registry: PluginRegistry;
  private readonly loaded: Map<string, PluginDefinition[]>;

  /**
   * `services`: what the envs this host builds get; by default an MCP pool of the host's own
   * (empty until an env names a server) and python_sandbox bwrap.
   */
  constructor(
    readonly cwd: string = process.cwd(),
    readonly services: PluginServices = { mcp: new McpPool(), pythonSandbox: 'bwrap' },
    tables?: PluginTables,
  ) {
    this.registry = tables?.registry ?? new PluginRegistry();
    this.loaded = tables?.loaded ?? new Map();
    if (tables) return;
    for (const { definition, source } of BUILTIN_PLUGINS) this.registry.register(checkDefinition(definition, source), source, true);
  }

  /** The same plugins (loaded ones included), building envs with a run's services. */
  forRun(services: PluginServices): PluginHost {
    return new PluginHost(this.cwd, services, { registry: this.registry, loaded: this.loaded });
  }

  /** Loads a plugin file or folder (relative to the working folder) and registers what it defines. */
  async load(path: string): Promise<PluginDefinition[]> {
    const absolute = resolve(this.cwd, path);
    if (!existsSync(absolute)) throw new PluginError(`${path}: no such plugin file or folder`);
    if (statSync(absolute).isDirectory()) {
      const definitions: PluginDefinition[] = [];
      for (const file of pluginFilesIn(absolute)) definitions.push(...(await this.loadFile(file)));
      return definitions;
    }
    return this.loadFile(absolute);
  }

  async loadAll(paths: readonly string[]): Promise<void> {
    for (const path of paths) await this.load(path);
  }

  private async loadFile(file: string): Promise<PluginDefinition[]> {
    const cached = this.loaded.get(file);
    if (cached) return cached;
    const shown = displayPath(file, this.cwd);
    registerSdkModule();
    checkPackagesInstalled(file, this.cwd);
    let mod: { default?: unknown };
    try {
      mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
    } catch (error) {
      throw new PluginError(loadFailure(error, file, this.cwd), { cause: error });
    }
    if (mod.default === undefined) {
      throw new PluginError(`${shown}: no default export; write export default defineEnv(...) (or defineReward, defineTool)`);
    }
    const exported = Array.isArray(mod.default) ? mod.default : [mod.default];
    if (exported.length === 0) throw new PluginError(`${shown}: the default export is an empty list`);
    const definitions = exported.map((value) => checkDefinition(value, shown));
    for (const definition of definitions) this.registry.register(definition, shown);
    this.loaded.set(file, definitions);
    return definitions;
  }

  /** A plugin of `kind` by registered name or by file path. */
  async resolve<K extends PluginKind>(kind: K, ref: string): Promise<PluginOfKind<K>> {
    if (!isPathReference(ref)) return this.registry.require(kind, ref).definition;
    const definitions = await this.load(ref);
    const matching = definitions.filter((d) => d.kind === kind);
    if (matching.length === 1) return matching[0] as PluginOfKind<K>;
    const kinds = definitions.map((d) => `${d.kind} '${d.name}'`).join(', ');
    throw new PluginError(
      matching.length === 0
        ? `${ref}: defines ${kinds}, not ${kind === 'env' ? 'an' : 'a'} ${kind} plugin`
        : `${ref}: defines ${matching.length} ${kind} plugins; name one of them by its registered name instead`,
    );
  }

  resolveEnv(ref: string): Promise<EnvPlugin> {
    return this.resolve('env', ref);
  }

  /** A reward plugin by registered name (rewards are named, never loaded by path, in env configs). */
  rewardPlugin(name: string): RewardPlugin {
    return this.registry.require('reward', name).definition;
  }

  /** The context every environment is constructed with: lookups in this host's registry, and its services. */
  envContext(): EnvContext {
    const { mcp, pythonSandbox } = this.services;
    return {
      tool: (name) => this.registry.require('tool', name).definition,
      reward: (reference) => bindReward(this.rewardPlugin(rewardName(reference)), reference, { pythonSandbox }),
      cwd: this.cwd,
      mcp,
      pythonSandbox,
    };
  }
}

/** Where a build message points: Bun's BuildMessage and ResolveMessage carry one. */
interface SourcePosition {
  file: string;
  line: number;
  column: number;
}

function positionOf(error: unknown): SourcePosition | null {
  const position = (error as { position?: Partial<SourcePosition> | null } | null)?.position;
  return position && typeof position.file === 'string' && typeof position.line === 'number' ? (position as SourcePosition) : null;
}

/**
 * One line for a plugin module that does not import. A package that is not installed is named with
 * its install command (sdk/package_imports.ts). A syntax error (Bun reports each as a
 * BuildMessage, several as an AggregateError "N errors building ...") shows the first with its
 * file, line and column: the plugin's own, or the module it imports that has the error.
 */
function loadFailure(error: unknown, file: string, cwd: string): string {
  const missing = missingPackageIn(error, cwd);
  if (missing) return missing;
  const shown = displayPath(file, cwd);
  const all = error instanceof AggregateError ? error.errors : [error];
  const position = positionOf(all[0]);
  if (!position) return `${shown}: cannot load: ${firstLine(error)}`;
  const more = all.length > 1 ? ` (and ${all.length - 1} more error${all.length > 2 ? 's' : ''})` : '';
  const at = `${position.line}:${position.column}`;
  const where = position.file === file ? `${shown}:${at}` : `${shown}: in ${displayPath(position.file, cwd)}:${at}`;
  return `${where}: cannot load: ${firstLine(all[0])}${more}`;
}
