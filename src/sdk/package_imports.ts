/**
 * The one rule for the packages a user's module imports (a plugin file, an agent module, and the
 * files of the user's they import), the same in the compiled binary and in a checkout: Node's. A
 * package resolves from the importing file's folder up: its node_modules, then each parent
 * folder's (so a plugin inside a project, or inside this repository, gets that project's).
 *
 * Bun alone does more from a checkout: where no node_modules folder lies above a file, it
 * downloads what the file imports into its global cache at run time (auto-install), which the
 * binary never does; a plugin that ran from a checkout then failed in the binary. bunfig.toml turns
 * auto-install off for a checkout started in its own folder (`npm run agentic`); for any other
 * start (`bun ~/agentic/src/cli/main.ts` in the plugin's folder) this check runs before Bun
 * resolves anything, so a package that is not installed is the same one line everywhere, naming
 * the package, the file and the install command, and nothing is downloaded.
 *
 * The check reads the imports Bun's transpiler finds in each file (type-only imports are not
 * imports). A computed `import(name)` is not seen: Bun resolves it when it runs, and
 * `missingPackageIn` reads its failure as the same line (from a checkout started in another folder,
 * Bun may still download it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, extname, isAbsolute, join, sep } from 'node:path';
import { PluginError } from '../errors';
import { displayPath } from '../util/paths';

/** The transpiler loader of each module extension a user's file can have. */
const LOADERS: Record<string, 'ts' | 'tsx' | 'js' | 'jsx'> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
};

/** Whether a specifier names a file by its path ('./helper', '../shared/util.ts', '/abs/file.js'). */
function isPath(specifier: string): boolean {
  return specifier.startsWith('.') || isAbsolute(specifier);
}

/**
 * The package a specifier names ('openai/resources/chat' -> 'openai', '@ai-sdk/openai-compatible'),
 * or null for what is not a package: a path, a built-in module, a URL, 'agentic' (this process's SDK).
 */
export function packageName(specifier: string): string | null {
  if (isPath(specifier) || specifier.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(specifier)) return null;
  if (specifier === 'agentic' || isBuiltin(specifier)) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Whether `name` is installed where Node looks from `folder`: a node_modules in it or in a folder above. */
function installedFrom(folder: string, name: string): boolean {
  for (let dir = folder; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name))) return true;
    if (dirname(dir) === dir) return false;
  }
}

/** Where to install a package `file` imports: the nearest folder above it with a package.json, else its own. */
function installFolder(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(file);
  }
}

/** The one line for a package `file` imports that is not installed. */
function missingPackageMessage(file: string, name: string, cwd: string): string {
  return `${displayPath(file, cwd)} imports '${name}', which is not installed: run \`npm install ${name}\` in ${installFolder(file)}`;
}

/** The specifiers `file` imports, or none where it is not a module the transpiler reads (or does not parse: its import says why). */
function importsOf(file: string): string[] {
  const loader = LOADERS[extname(file)];
  if (!loader) return [];
  try {
    return new Bun.Transpiler({ loader }).scanImports(readFileSync(file, 'utf8')).map((found) => found.path);
  } catch {
    return [];
  }
}

/** The user's module a path specifier in `importer` names, or null (not found, or in an installed package). */
function userModule(specifier: string, importer: string): string | null {
  let file: string;
  try {
    file = Bun.resolveSync(specifier, dirname(importer));
  } catch {
    return null;
  }
  return file.split(sep).includes('node_modules') ? null : file;
}

/**
 * Checks that every package `entry` imports, and every user's file it imports in turn, is
 * installed by the rule above; throws a PluginError naming the first that is not.
 */
export function checkPackagesInstalled(entry: string, cwd: string = process.cwd()): void {
  const seen = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of importsOf(file)) {
      const imported = isPath(specifier) ? userModule(specifier, file) : null;
      if (imported) pending.push(imported);
      const name = packageName(specifier);
      if (name !== null && !installedFrom(dirname(file), name)) throw new PluginError(missingPackageMessage(file, name, cwd));
    }
  }
}

/** The one line for Bun's own failure to find a package (a computed import), or null for any other error. */
export function missingPackageIn(error: unknown, cwd: string): string | null {
  const { code, specifier, referrer } = (error ?? {}) as { code?: unknown; specifier?: unknown; referrer?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' || typeof specifier !== 'string' || typeof referrer !== 'string') return null;
  const name = packageName(specifier);
  return name === null ? null : missingPackageMessage(referrer, name, cwd);
}
