/**
 * Which keys exist, for `key=value` overrides: a key exists if the config has it, if the schema
 * declares it, or (under custom_envs.<tag>.env_config) if that environment's plugin declares it.
 * Entries of open mappings (custom_envs, vars, ...) exist only once a config defines them; `+`
 * adds new ones.
 */
import type { z } from 'zod';
import { declaredKeys, isOpenMapping, schemaAt, childSchema } from './introspect';
import type { KeyOracle } from './overrides';
import { ConfigShape } from './schema';
import { isObject, lookup, type Path, type TreeObject } from './tree';
import type { EnvResolver } from './validate';

const ENV_CONFIG_DEPTH = 3; // custom_envs.<tag>.env_config

function isEnvConfigPath(path: Path): boolean {
  return path.length >= ENV_CONFIG_DEPTH && path[0] === 'custom_envs' && path[2] === 'env_config';
}

export function createKeyOracle(envs: EnvResolver): KeyOracle {
  /** The env plugin's config schema for custom_envs.<tag>, when its env_type is a plain value. */
  const envSchema = async (tree: TreeObject, tag: string | number | undefined): Promise<z.core.$ZodType | undefined> => {
    const ref = lookup(tree, ['custom_envs', String(tag), 'env_type']);
    if (!ref.found || typeof ref.value !== 'string' || ref.value.includes('${')) return undefined;
    const plugins = lookup(tree, ['plugins']);
    if (plugins.found) {
      const paths = (Array.isArray(plugins.value) ? plugins.value : [plugins.value]).filter((p): p is string => typeof p === 'string' && !p.includes('${'));
      await envs.loadAll(paths);
    }
    return (await envs.resolveEnv(ref.value)).config;
  };

  const isDeclared = async (path: Path, tree: TreeObject): Promise<boolean> => {
    let schema: z.core.$ZodType | undefined = ConfigShape;
    for (let i = 0; i < path.length; i++) {
      if (i === ENV_CONFIG_DEPTH && isEnvConfigPath(path)) {
        const pluginSchema = await envSchema(tree, path[1]);
        return pluginSchema !== undefined && schemaAt(pluginSchema, path.slice(ENV_CONFIG_DEPTH)) !== undefined;
      }
      if (!schema) return false;
      // a new entry of an open mapping is not declared by the schema: it needs `+`
      if (isOpenMapping(schema) && !lookup(tree, path.slice(0, i + 1)).found) return false;
      schema = childSchema(schema, path[i]!);
    }
    return schema !== undefined;
  };

  const knownKeys = async (parent: Path, tree: TreeObject): Promise<string[]> => {
    if (parent.length === ENV_CONFIG_DEPTH && isEnvConfigPath([...parent, ''])) {
      const pluginSchema = await envSchema(tree, parent[1]).catch(() => undefined);
      return declaredKeys(pluginSchema);
    }
    const keys = declaredKeys(schemaAt(ConfigShape, parent));
    const node = lookup(tree, parent);
    if (node.found && isObject(node.value)) keys.push(...Object.keys(node.value));
    return keys;
  };

  return { isDeclared, knownKeys };
}
