/**
 * Hydra's command-line overrides:
 *
 *   key=value      set an existing key (mappings merge into mappings, everything else is replaced)
 *   +key=value     add a key that does not exist yet
 *   ++key=value    add or set
 *   ~key           delete a key;  ~key=value deletes it only if it holds that value
 *
 * Values are typed: integers, floats (`1e-3`, `inf`, `nan`), true/false, null, lists `[a, b]`,
 * mappings `{k: v}`; quoted strings stay strings; anything else is a string (so `${...}`
 * interpolations pass through to be resolved later). A top-level comma is Hydra's sweep syntax,
 * which agentic does not run: quote the value or write a list.
 */
import { ConfigError } from '../errors';
import { didYouMean } from '../util/suggest';
import { deleteAt, formatPath, isObject, lookup, mergeOver, parseKeyPath, setAt, type Path, type PathSegment, type Tree, type TreeObject } from './tree';

export type OverrideOp = 'set' | 'add' | 'force' | 'delete';

export interface Override {
  readonly op: OverrideOp;
  readonly path: PathSegment[];
  /** Absent only for a bare `~key`. */
  readonly value?: Tree;
  /** The override as the user wrote it, for messages. */
  readonly text: string;
}

/** Tells whether a key the tree lacks is still declared (by the schema or a plugin's schema). */
export interface KeyOracle {
  isDeclared(path: Path, tree: TreeObject): boolean | Promise<boolean>;
  /** Keys that could stand at `parent`, for "did you mean". */
  knownKeys(parent: Path, tree: TreeObject): string[] | Promise<string[]>;
}

/** Whether a command-line word is meant as an override (as opposed to a path or a name). */
export function looksLikeOverride(arg: string): boolean {
  return arg.startsWith('~') || /^\+{0,2}[^=+]+=/.test(arg);
}

export function parseOverride(text: string): Override {
  const fail = (why: string): never => {
    throw new ConfigError(`override '${text}': ${why}`);
  };
  let op: OverrideOp = 'set';
  let rest = text;
  if (rest.startsWith('++')) [op, rest] = ['force', rest.slice(2)];
  else if (rest.startsWith('+')) [op, rest] = ['add', rest.slice(1)];
  else if (rest.startsWith('~')) [op, rest] = ['delete', rest.slice(1)];

  const eq = rest.indexOf('=');
  const keyText = eq === -1 ? rest : rest.slice(0, eq);
  if (eq === -1 && op !== 'delete') fail('expected key=value');
  const path = parseKeyPath(keyText.trim());
  if (!path) fail(`'${keyText}' is not a key (use dotted names such as actor_train.model_args.dtype)`);
  if (eq === -1) return { op, path: path!, text };
  const value = parseOverrideValue(rest.slice(eq + 1), text);
  return { op, path: path!, value, text };
}

// ---------------------------------------------------------------------------------------------
// Values

const OPENERS: Record<string, string> = { '[': ']', '{': '}', '(': ')' };

class ValueParser {
  private pos = 0;
  constructor(
    private readonly src: string,
    private readonly overrideText: string,
  ) {}

  private fail(why: string): never {
    throw new ConfigError(`override '${this.overrideText}': ${why}`);
  }

  parseTop(): Tree {
    this.skipSpace();
    if (this.pos === this.src.length) return '';
    const value = this.parseElement(true);
    this.skipSpace();
    if (this.pos < this.src.length) {
      if (this.src[this.pos] === ',') {
        this.fail('a top-level comma is a Hydra sweep, which agentic does not run; quote the value or use a list [a,b]');
      }
      this.fail(`unexpected '${this.src[this.pos]}' at column ${this.pos + 1} of the value`);
    }
    return value;
  }

  private skipSpace(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos]!)) this.pos++;
  }

  private parseElement(topLevel: boolean): Tree {
    this.skipSpace();
    const c = this.src[this.pos];
    if (c === '[') return this.parseList();
    if (c === '{') return this.parseDict();
    if (c === '"' || c === "'") {
      const start = this.pos;
      const quoted = this.parseQuoted();
      // a quoted string followed by more text (e.g. 'a'b) is not a value
      const save = this.pos;
      this.skipSpace();
      if (this.pos < this.src.length && !(topLevel ? false : ',]}:'.includes(this.src[this.pos]!))) {
        this.pos = start;
        this.fail('text after a quoted string; quote the whole value');
      }
      this.pos = save;
      return quoted;
    }
    return typedScalar(this.parseBare(topLevel));
  }

  private parseList(): Tree[] {
    this.pos++; // [
    const items: Tree[] = [];
    this.skipSpace();
    if (this.src[this.pos] === ']') {
      this.pos++;
      return items;
    }
    for (;;) {
      items.push(this.parseElement(false));
      this.skipSpace();
      const c = this.src[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ']') {
        this.pos++;
        return items;
      }
      this.fail(c === undefined ? "unclosed '['" : `expected ',' or ']' at column ${this.pos + 1} of the value`);
    }
  }

  private parseDict(): TreeObject {
    this.pos++; // {
    const out: TreeObject = {};
    this.skipSpace();
    if (this.src[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      const c = this.src[this.pos];
      let key: string;
      if (c === '"' || c === "'") key = this.parseQuoted();
      else {
        const start = this.pos;
        while (this.pos < this.src.length && !':,}'.includes(this.src[this.pos]!)) this.pos++;
        key = this.src.slice(start, this.pos).trim();
      }
      this.skipSpace();
      if (this.src[this.pos] !== ':') this.fail(this.pos >= this.src.length ? "unclosed '{'" : `expected ':' after key '${key}'`);
      if (key === '') this.fail('empty key in a mapping');
      if (Object.hasOwn(out, key)) this.fail(`duplicate key '${key}' in a mapping`);
      this.pos++; // :
      out[key] = this.parseElement(false);
      this.skipSpace();
      const next = this.src[this.pos];
      if (next === ',') {
        this.pos++;
        continue;
      }
      if (next === '}') {
        this.pos++;
        return out;
      }
      this.fail(next === undefined ? "unclosed '{'" : `expected ',' or '}' at column ${this.pos + 1} of the value`);
    }
  }

  private parseQuoted(): string {
    const quote = this.src[this.pos]!;
    this.pos++;
    let out = '';
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === '\\' && (this.src[this.pos + 1] === quote || this.src[this.pos + 1] === '\\')) {
        out += this.src[this.pos + 1];
        this.pos += 2;
      } else if (c === quote) {
        this.pos++;
        return out;
      } else {
        out += c;
        this.pos++;
      }
    }
    return this.fail(`unclosed ${quote}`);
  }

  /**
   * Unquoted text. Inside a list or mapping it ends at an unnested `,` `]` `}`; at the top level
   * it runs to the end, stopping only at an unnested comma (a sweep). `${...}`, brackets and
   * parentheses nest, and `\` escapes the next character.
   */
  private parseBare(topLevel: boolean): string {
    const stack: string[] = [];
    let out = '';
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === '\\' && this.pos + 1 < this.src.length) {
        out += this.src[this.pos + 1];
        this.pos += 2;
        continue;
      }
      if (stack.length === 0) {
        if (c === ',') break;
        if (!topLevel && (c === ']' || c === '}')) break;
      }
      if (c === '$' && this.src[this.pos + 1] === '{') {
        stack.push('}');
        out += '${';
        this.pos += 2;
        continue;
      }
      if (c in OPENERS) stack.push(OPENERS[c]!);
      else if (stack.length > 0 && c === stack.at(-1)) stack.pop();
      else if (stack.length === 0 && (c === ']' || c === '}' || c === ')')) this.fail(`unbalanced '${c}'`);
      out += c;
      this.pos++;
    }
    if (stack.length > 0) this.fail(`unclosed '${stack.at(-1) === '}' ? '${' : stack.at(-1)}'`);
    return out.trim();
  }
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$/;

/** Hydra's typing of an unquoted word. */
export function typedScalar(word: string): Tree {
  const lower = word.toLowerCase();
  if (lower === 'null') return null;
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (INT.test(word)) {
    const n = Number(word);
    return Number.isSafeInteger(n) ? n : word;
  }
  if (FLOAT.test(word)) return Number(word);
  if (/^[+-]?inf$/.test(lower)) return lower.startsWith('-') ? -Infinity : Infinity;
  if (lower === 'nan') return Number.NaN;
  return word;
}

export function parseOverrideValue(source: string, overrideText = source): Tree {
  return new ValueParser(source, overrideText).parseTop();
}

// ---------------------------------------------------------------------------------------------
// Application

function sameValue(a: Tree, b: Tree): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** An error naming the first segment of the override's key that neither exists nor is declared. */
async function unknownKeyError(override: Override, tree: TreeObject, oracle: KeyOracle): Promise<ConfigError> {
  // a key inside a node that is one interpolation (ROLL's `dapo_17k: ${gem_math.dapo_17k}`) is set where that node comes from
  for (let i = 0; i < override.path.length - 1; i++) {
    const node = lookup(tree, override.path.slice(0, i + 1));
    const source = node.found && typeof node.value === 'string' ? /^\$\{([A-Za-z_][\w.-]*)\}$/.exec(node.value)?.[1] : undefined;
    if (source) {
      const rest = override.path.slice(i + 1).join('.');
      const value = override.text.slice(override.text.indexOf('=') + 1);
      return new ConfigError(`${formatPath(override.path.slice(0, i + 1))} is \${${source}}: set ${source}.${rest}=${value} instead`);
    }
  }
  let missingAt = override.path.length - 1;
  for (let i = 0; i < override.path.length; i++) {
    const prefix = override.path.slice(0, i + 1);
    if (!lookup(tree, prefix).found && !(await oracle.isDeclared(prefix, tree))) {
      missingAt = i;
      break;
    }
  }
  const parent = override.path.slice(0, missingAt);
  const parentNode = lookup(tree, parent);
  const known = new Set<string>(await oracle.knownKeys(parent, tree));
  if (parentNode.found && isObject(parentNode.value)) for (const k of Object.keys(parentNode.value)) known.add(k);
  const hint = didYouMean(String(override.path[missingAt]), known);
  const add = hint === '' && override.op === 'set' ? `; to add it, write +${override.text}` : '';
  return new ConfigError(`${formatPath(override.path.slice(0, missingAt + 1))}: unknown key${hint}${add}`);
}

/** Applies overrides in order to a copy of `tree`. */
export async function applyOverrides(tree: TreeObject, overrides: readonly Override[], oracle: KeyOracle): Promise<TreeObject> {
  let out = structuredClone(tree);
  for (const override of overrides) {
    const current = lookup(out, override.path);
    const where = formatPath(override.path);
    switch (override.op) {
      case 'set': {
        if (!current.found && !(await oracle.isDeclared(override.path, out))) {
          throw await unknownKeyError(override, out, oracle);
        }
        out = assign(out, override, current.found ? current.value : undefined);
        break;
      }
      case 'add': {
        if (current.found) {
          throw new ConfigError(`${where}: already set; to change it, write ${override.text.slice(1)} (or ++${override.text.slice(1)})`);
        }
        out = assign(out, override, undefined);
        break;
      }
      case 'force':
        out = assign(out, override, current.found ? current.value : undefined);
        break;
      case 'delete': {
        if (!current.found) throw await unknownKeyError(override, out, oracle);
        if (override.value !== undefined && !sameValue(current.value, override.value)) {
          throw new ConfigError(`${where}: ~${where}=... expects ${JSON.stringify(override.value)} but the key holds ${JSON.stringify(current.value)}`);
        }
        deleteAt(out, override.path);
        break;
      }
    }
  }
  return out;
}

function assign(tree: TreeObject, override: Override, existing: Tree | undefined): TreeObject {
  const value = override.value as Tree;
  const merged = isObject(existing) && isObject(value) ? mergeOver(existing, value) : value;
  try {
    setAt(tree, override.path, merged);
  } catch (error) {
    throw new ConfigError(`override '${override.text}': ${(error as Error).message}`);
  }
  return tree;
}
