/**
 * OmegaConf-style interpolation, resolved once all layers and overrides are merged:
 *
 *   ${exp_name}                      another key; a string that is only this keeps the key's type
 *   ${actor_train.model_args.dtype}  dotted paths, list indices as tags[0] or tags.0
 *   ${.sibling} ${..uncle}           relative to the mapping that holds the string
 *   ${oc.env:HOME} ${oc.env:X,dflt}  environment variables (strings); a default may be null
 *   ${oc.decode:${oc.env:N}}         parse a string as an override value (typed)
 *   ${oc.select:key,dflt}            a key, or the default when it is missing
 *   ${oc.create:{a: 1}}              a mapping or list, from a literal or a YAML string
 *   ${oc.deprecated:new.key}         the value of new.key, with a warning that the key holding this is deprecated
 *   ${now:%Y%m%d-%H%M%S}             the local time, in Python's strftime codes (one time per run, as Hydra caches it)
 *   ${hydra:runtime.cwd}             Hydra's runtime values (hydra_runtime.ts)
 *   \${not interpolated}             escape
 *   ???                              a value that must be given; an error until it is
 *
 * A cycle or a missing key is an error that names the path of the string that asked for it. As in
 * OmegaConf, a value is resolved when it is read: an error in a value that nothing reads (a
 * tracker's setting set aside as having no effect, a helper no interpolation reads) is kept with
 * the value, and raised only if the value survives to validation (throwIfRead).
 */
import { ConfigError } from '../errors';
import { hydraLookup, type HydraJob } from './hydra_runtime';
import { parseOverrideValue, typedScalar } from './overrides';
import { strftime } from './strftime';
import { parseYaml } from './yaml';
import { formatPath, isObject, lookup, parseKeyPath, type Path, type PathSegment, type Tree, type TreeObject } from './tree';

type Part = { kind: 'text'; text: string } | { kind: 'interp'; expr: string };

export const MISSING = '???';

/** Splits a string into literal text and `${...}` expressions; null when it has none. */
function splitInterpolations(text: string, where: string): Part[] | null {
  if (!text.includes('${')) return null;
  const parts: Part[] = [];
  let literal = '';
  let i = 0;
  let found = false;
  while (i < text.length) {
    if (text[i] === '\\' && text.startsWith('${', i + 1)) {
      literal += '${';
      i += 3;
      continue;
    }
    if (text.startsWith('${', i)) {
      const end = matchingBrace(text, i + 2);
      if (end === -1) throw new ConfigError(`${where}: unclosed interpolation in '${text}'`);
      if (literal) parts.push({ kind: 'text', text: literal });
      literal = '';
      parts.push({ kind: 'interp', expr: text.slice(i + 2, end) });
      found = true;
      i = end + 1;
      continue;
    }
    literal += text[i];
    i++;
  }
  if (literal) parts.push({ kind: 'text', text: literal });
  return found ? parts : [{ kind: 'text', text: literal }];
}

/** Index of the `}` closing an interpolation whose body starts at `start`, or -1. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** Splits resolver arguments on commas that are outside quotes and nested interpolations. */
function splitArgs(text: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && i + 1 < text.length) {
        current += c + text[++i];
        continue;
      }
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) {
      args.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  args.push(current.trim());
  return args;
}

const RESOLVER = /^\s*([A-Za-z_][\w.]*)\s*:([\s\S]*)$/;
const RESOLVERS = ['oc.env', 'oc.decode', 'oc.select', 'oc.create', 'oc.deprecated', 'now', 'hydra'];
const DEPRECATED_MESSAGE = "'$OLD_KEY' is deprecated. Change your code and config to use '$NEW_KEY'";

/** The run an interpolation may ask about: Hydra's job, and the one time `now` reads. */
export interface RunContext extends HydraJob {
  now: Date;
}

/** A value whose interpolation failed, left as written; an error once it is read. */
export interface Unresolved {
  path: Path;
  error: ConfigError;
}

class Resolver {
  private readonly done = new Map<string, Tree>();
  private readonly stack: string[] = [];
  readonly unresolved: Unresolved[] = [];
  readonly warnings: string[] = [];

  constructor(
    private readonly root: TreeObject,
    private readonly run: RunContext,
  ) {}

  /** The tree with every value resolved that resolves; the others stay as written, in `unresolved`. */
  walk(path: Path, raw: Tree): Tree {
    if (typeof raw === 'string') {
      if (raw !== MISSING && !raw.includes('${')) return raw;
      try {
        return this.resolveAt(path);
      } catch (error) {
        const failed = error instanceof MissingKey ? new ConfigError(`${error.message}: does not exist`) : error;
        if (!(failed instanceof ConfigError)) throw error;
        this.unresolved.push({ path, error: failed });
        return raw;
      }
    }
    if (Array.isArray(raw)) return raw.map((item, i) => this.walk([...path, i], item));
    if (isObject(raw)) {
      const out: TreeObject = {};
      for (const [key, value] of Object.entries(raw)) out[key] = this.walk([...path, key], value!);
      return out;
    }
    return raw;
  }

  /** The fully resolved value at `path`. */
  resolveAt(path: Path, requestedBy?: string): Tree {
    const key = formatPath(path);
    const cached = this.done.get(key);
    if (cached !== undefined) return cached;
    if (this.stack.includes(key)) {
      const cycle = [...this.stack.slice(this.stack.indexOf(key)), key].join(' -> ');
      throw new ConfigError(`${requestedBy ?? key}: interpolation cycle: ${cycle}`);
    }
    this.stack.push(key);
    try {
      const raw = this.rawAt(path, requestedBy ?? key);
      const value = this.resolveValue(raw, path);
      this.done.set(key, value);
      return value;
    } finally {
      this.stack.pop();
    }
  }

  /** The unresolved node at `path`, resolving interpolated parents on the way. */
  private rawAt(path: Path, requestedBy: string): Tree {
    let node: Tree = this.root;
    for (let i = 0; i < path.length; i++) {
      if (typeof node === 'string' && node.includes('${') && i > 0) node = this.resolveAt(path.slice(0, i), requestedBy);
      const segment: PathSegment = path[i]!;
      let next: Tree | undefined;
      if (Array.isArray(node)) {
        const index = typeof segment === 'number' ? segment : /^\d+$/.test(segment) ? Number(segment) : -1;
        next = index >= 0 ? node[index] : undefined;
      } else if (isObject(node) && typeof segment === 'string' && Object.hasOwn(node, segment)) {
        next = node[segment];
      }
      if (next === undefined) throw new MissingKey(formatPath(path));
      node = next;
    }
    return node;
  }

  private resolveValue(raw: Tree, path: Path): Tree {
    if (typeof raw === 'string') return this.resolveString(raw, path);
    if (Array.isArray(raw)) return raw.map((_, i) => this.resolveAt([...path, i]));
    if (isObject(raw)) {
      const out: TreeObject = {};
      for (const key of Object.keys(raw)) out[key] = this.resolveAt([...path, key]);
      return out;
    }
    return raw;
  }

  private resolveString(text: string, path: Path): Tree {
    const where = formatPath(path);
    if (text === MISSING) throw new ConfigError(`${where}: missing mandatory value (???); set it in a config or with ${where}=...`);
    const parts = splitInterpolations(text, where);
    if (!parts) return text;
    if (parts.length === 1 && parts[0]!.kind === 'interp') return this.evaluate(parts[0]!.expr, path);
    let out = '';
    for (const part of parts) {
      if (part.kind === 'text') {
        out += part.text;
        continue;
      }
      const value = this.evaluate(part.expr, path);
      if (isObject(value) || Array.isArray(value)) {
        throw new ConfigError(`${where}: \${${part.expr}} is a ${Array.isArray(value) ? 'list' : 'mapping'} and cannot be part of a string`);
      }
      out += String(value);
    }
    return out;
  }

  private evaluate(expr: string, path: Path): Tree {
    const where = formatPath(path);
    const call = RESOLVER.exec(expr);
    if (call) return this.callResolver(call[1]!, splitArgs(call[2]!), path);
    const target = this.targetPath(expr.trim(), path);
    try {
      return structuredClone(this.resolveAt(target, where));
    } catch (error) {
      if (error instanceof MissingKey) {
        throw new ConfigError(`${where}: \${${expr}} refers to ${formatPath(target)}, which does not exist`);
      }
      throw error;
    }
  }

  private targetPath(expr: string, path: Path): PathSegment[] {
    const where = formatPath(path);
    const dots = /^\.*/.exec(expr)![0].length;
    const keys = parseKeyPath(expr.slice(dots));
    if (!keys) throw new ConfigError(`${where}: '\${${expr}}' is not a key path`);
    if (dots === 0) return keys;
    const up = path.length - dots;
    if (up < 0) throw new ConfigError(`${where}: \${${expr}} climbs above the top of the config`);
    return [...path.slice(0, up), ...keys];
  }

  private callResolver(name: string, rawArgs: string[], path: Path): Tree {
    const where = formatPath(path);
    const args = rawArgs.map((arg) => this.argValue(arg, path));
    switch (name) {
      case 'oc.env': {
        const [variable, ...fallback] = args;
        if (typeof variable !== 'string' || variable === '') throw new ConfigError(`${where}: oc.env needs a variable name`);
        const value = process.env[variable];
        if (value !== undefined) return value;
        if (fallback.length > 0) return fallback[0] === null ? null : String(fallback[0]);
        throw new ConfigError(`${where}: environment variable ${variable} is not set (give a default: \${oc.env:${variable},value})`);
      }
      case 'oc.decode': {
        const [text] = args;
        if (typeof text !== 'string') return text ?? null;
        return parseOverrideValue(text, `${where}: oc.decode`);
      }
      case 'oc.select': {
        const [key, ...fallback] = args;
        if (typeof key !== 'string') throw new ConfigError(`${where}: oc.select needs a key`);
        try {
          return structuredClone(this.resolveAt(this.targetPath(key, path), where));
        } catch (error) {
          if (error instanceof MissingKey && fallback.length > 0) return fallback[0]!;
          if (error instanceof MissingKey) throw new ConfigError(`${where}: \${oc.select:${key}} refers to a key that does not exist and has no default`);
          throw error;
        }
      }
      case 'oc.create': {
        const [source] = args;
        if (typeof source !== 'string') return source === undefined ? null : structuredClone(source);
        // a string is YAML (OmegaConf.create); its own interpolations resolve against this config
        const created = parseYaml(source, `${where}: oc.create`) as Tree;
        return this.resolveNested(created, path);
      }
      case 'oc.deprecated': {
        const [key, message] = args;
        if (typeof key !== 'string') throw new ConfigError(`${where}: oc.deprecated needs the new key`);
        const target = this.targetPath(key, path);
        let value: Tree;
        try {
          value = structuredClone(this.resolveAt(target, where));
        } catch (error) {
          if (error instanceof MissingKey) throw new ConfigError(`${where}: \${oc.deprecated:${key}} points to ${formatPath(target)}, which does not exist`);
          throw error;
        }
        const text = typeof message === 'string' ? message : DEPRECATED_MESSAGE;
        this.warnings.push(text.replaceAll('$OLD_KEY', where).replaceAll('$NEW_KEY', formatPath(target)));
        return value;
      }
      case 'now': {
        const [pattern] = args;
        if (typeof pattern !== 'string') throw new ConfigError(`${where}: now needs a strftime pattern, such as \${now:%Y-%m-%d_%H-%M-%S}`);
        try {
          return strftime(pattern, this.run.now);
        } catch (error) {
          throw new ConfigError(`${where}: \${now:${pattern}}: ${(error as Error).message}`);
        }
      }
      case 'hydra': {
        const [key] = args;
        if (typeof key !== 'string' || key === '') throw new ConfigError(`${where}: hydra needs a key, such as \${hydra:runtime.cwd}`);
        return hydraLookup(
          key,
          this.run,
          (sub) => this.hydraOwn(sub),
          (text) => this.resolveString(text, path),
          where,
        );
      }
      default:
        throw new ConfigError(`${where}: unknown resolver '${name}' (available: ${RESOLVERS.join(', ')})`);
    }
  }

  /** The config's own hydra.<key>, resolved; undefined when it has none. */
  private hydraOwn(key: string): Tree | undefined {
    const keys = parseKeyPath(key);
    if (!keys) return undefined;
    try {
      return structuredClone(this.resolveAt(['hydra', ...keys], `hydra.${key}`));
    } catch (error) {
      if (error instanceof MissingKey) return undefined;
      throw error;
    }
  }

  /** Every string in a created value resolved as if it were at `path`. */
  private resolveNested(value: Tree, path: Path): Tree {
    if (typeof value === 'string') return this.resolveString(value, path);
    if (Array.isArray(value)) return value.map((item) => this.resolveNested(item, path));
    if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolveNested(v!, path)]));
    return value;
  }

  /** A resolver argument: quoted text stays a string; otherwise typed like an override value. */
  private argValue(arg: string, path: Path): Tree {
    const quoted = /^(['"])([\s\S]*)\1$/.exec(arg);
    if (quoted) return this.resolveString(quoted[2]!.replace(/\\(.)/g, '$1'), path);
    if (arg.includes('${')) return this.resolveString(arg, path);
    // a mapping or list literal, as OmegaConf's grammar reads one in a resolver's arguments
    if (/^[[{]/.test(arg)) return parseOverrideValue(arg, `${formatPath(path)}: ${arg}`);
    return typedScalar(arg);
  }
}

class MissingKey extends Error {}

export interface ResolvedTree {
  tree: TreeObject;
  /** Values whose interpolation failed, in the order of the tree: an error if they are read. */
  unresolved: Unresolved[];
  /** oc.deprecated's warnings, one a line. */
  warnings: string[];
}

function runContext(run: Partial<RunContext>): RunContext {
  return { configName: run.configName ?? null, cwd: run.cwd ?? process.cwd(), now: run.now ?? new Date() };
}

/** Resolves every interpolation in `tree` that resolves; the others are returned beside it (see the header). */
export function resolveLazily(tree: TreeObject, run: Partial<RunContext> = {}): ResolvedTree {
  const resolver = new Resolver(tree, runContext(run));
  return { tree: resolver.walk([], tree) as TreeObject, unresolved: resolver.unresolved, warnings: resolver.warnings };
}

/** Throws the error of the first unresolved value that `tree` (what is read) still holds. */
export function throwIfRead(tree: TreeObject, unresolved: readonly Unresolved[]): void {
  for (const { path, error } of unresolved) if (lookup(tree, path).found) throw error;
}

/** Resolves every interpolation in `tree`, returning a new tree with none left. */
export function resolveInterpolations(tree: TreeObject, run: Partial<RunContext> = {}): TreeObject {
  const resolved = resolveLazily(tree, run);
  throwIfRead(resolved.tree, resolved.unresolved);
  return resolved.tree;
}
