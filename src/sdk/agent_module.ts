/**
 * An outside agent's program as a module (the agent env's `agent:`, a seat's `seat_agent:`): the
 * function it exports under one name (`run`, `act`), as a named export or on its default export.
 * Each file is imported once, and every way it can be wrong is one line naming the key and the
 * file: missing, importing a package that is not installed, failing to load, exporting no such
 * function. The other form, a command line, is ./agent_command.ts.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { firstLine, PluginError } from '../errors';
import { checkPackagesInstalled } from './package_imports';

const loaded = new Map<string, Promise<unknown>>();

/**
 * The function `name` that the module at `path` (relative to `cwd`) exports. `key` is the config
 * key that named the module, for the messages. A missing file or package throws at once; a module
 * that does not load or lacks the export rejects.
 */
export function loadAgentFunction<Context>(key: string, path: string, cwd: string, name: string): Promise<(ctx: Context) => unknown> {
  const file = resolve(cwd, path);
  let module = loaded.get(`${file}#${name}`);
  if (!module) {
    if (!existsSync(file)) throw new PluginError(`${key}: ${path} does not exist (paths are relative to the run folder, ${cwd})`);
    checkPackagesInstalled(file, cwd);
    module = import(pathToFileURL(file).href).then(
      (exports: Record<string, unknown>) => {
        const found = exports[name] ?? (exports.default as Record<string, unknown> | undefined)?.[name];
        if (typeof found !== 'function') throw new PluginError(`${key}: ${path} exports no ${name}(ctx) function`);
        return found;
      },
      (error: unknown) => {
        // a module that does not parse or throws as it loads is the user's file, said in one line
        throw new PluginError(`${key}: ${path} did not load: ${firstLine(error)}`);
      },
    );
    loaded.set(`${file}#${name}`, module);
  }
  return module as Promise<(ctx: Context) => unknown>;
}
