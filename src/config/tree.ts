/**
 * Config trees are plain JSON-like data: objects, arrays and scalars. These helpers address a
 * node by its path (`actor_train.model_args.dtype`, `tags[0]`) and merge trees the Hydra way.
 */
import { createDefu } from 'defu';

export type Scalar = string | number | boolean | null;
export type Tree = Scalar | Tree[] | { [key: string]: Tree };
export type TreeObject = { [key: string]: Tree };
export type PathSegment = string | number;
export type Path = readonly PathSegment[];

export function isObject(value: unknown): value is TreeObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `a.b[0].c`; the empty path prints as `<root>`. */
export function formatPath(path: Path): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out === '' ? '<root>' : out;
}

const KEY_SEGMENT = /^[^.[\]\s=~+'"]+$/;

/**
 * Parses `a.b.c`, `a[0].b` or `a.0.b` into segments. Numeric segments after a dot stay strings
 * (a dict may have a key "0"); the tree operations treat them as indices on arrays.
 */
export function parseKeyPath(text: string): PathSegment[] | null {
  if (text === '') return null;
  const path: PathSegment[] = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\./g;
  let expectKey = true;
  let position = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index !== position) return null;
    position = re.lastIndex;
    if (m[0] === '.') {
      if (expectKey) return null;
      expectKey = true;
    } else if (m[2] !== undefined) {
      if (path.length === 0) return null;
      path.push(Number(m[2]));
      expectKey = false;
    } else {
      if (!expectKey || !KEY_SEGMENT.test(m[1]!)) return null;
      path.push(m[1]!);
      expectKey = false;
    }
  }
  if (position !== text.length || expectKey) return null;
  return path;
}

function childKey(node: Tree, segment: PathSegment): PathSegment | undefined {
  if (Array.isArray(node)) {
    const index = typeof segment === 'number' ? segment : /^\d+$/.test(segment) ? Number(segment) : NaN;
    return Number.isInteger(index) && index >= 0 && index < node.length ? index : undefined;
  }
  if (isObject(node) && typeof segment === 'string' && Object.hasOwn(node, segment)) return segment;
  return undefined;
}

export type Lookup = { found: true; value: Tree } | { found: false; missingAt: number };

/** Walks `path`; on failure reports how many segments matched. */
export function lookup(root: Tree, path: Path): Lookup {
  let node: Tree = root;
  for (let i = 0; i < path.length; i++) {
    const key = childKey(node, path[i]!);
    if (key === undefined) return { found: false, missingAt: i };
    node = (node as Record<PathSegment, Tree>)[key]!;
  }
  return { found: true, value: node };
}

/** Sets `path` to `value`, creating intermediate objects. Fails if a parent is a scalar. */
export function setAt(root: TreeObject, path: Path, value: Tree): void {
  let node: Tree = root;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i]!;
    const key = childKey(node, segment);
    if (key !== undefined) {
      node = (node as Record<PathSegment, Tree>)[key]!;
      continue;
    }
    if (!isObject(node)) throw new Error(`${formatPath(path.slice(0, i))} is not a mapping`);
    const created: TreeObject = {};
    node[String(segment)] = created;
    node = created;
  }
  const last = path.at(-1)!;
  if (Array.isArray(node)) {
    const index = childKey(node, last);
    if (index === undefined) throw new Error(`${formatPath(path)}: index out of range`);
    node[index as number] = value;
  } else if (isObject(node)) {
    node[String(last)] = value;
  } else {
    throw new Error(`${formatPath(path.slice(0, -1))} is not a mapping`);
  }
}

/** Removes the node at `path` (an array element is spliced out). Returns whether it existed. */
export function deleteAt(root: Tree, path: Path): boolean {
  const parent = lookup(root, path.slice(0, -1));
  if (!parent.found) return false;
  const key = childKey(parent.value, path.at(-1)!);
  if (key === undefined) return false;
  if (Array.isArray(parent.value)) parent.value.splice(key as number, 1);
  else delete (parent.value as TreeObject)[key as string];
  return true;
}

/** Stands in for null while defu merges: defu skips null values, Hydra lets them override. */
class ExplicitNull {}
const EXPLICIT_NULL = new ExplicitNull();

function encodeNulls(value: unknown): unknown {
  if (value === null) return EXPLICIT_NULL;
  if (Array.isArray(value)) return value.map(encodeNulls);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeNulls(v)]));
  return value;
}

function decodeNulls(value: unknown): unknown {
  if (value === EXPLICIT_NULL) return null;
  if (Array.isArray(value)) return value.map(decodeNulls);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decodeNulls(v)]));
  return value;
}

const defuReplacingLists = createDefu((target, key, value) => {
  if (Array.isArray(value)) {
    (target as Record<string, unknown>)[key as string] = value;
    return true;
  }
  return false;
});

/**
 * Hydra's merge: mappings merge key by key, everything else (lists included) is replaced by the
 * higher layer, and an explicit null replaces too. Layers come highest priority first, as defu
 * takes them and as c12 calls its merger. Inputs are not modified.
 */
export function mergeLayers(...layers: Array<Record<string, unknown> | null | undefined>): Record<string, unknown> {
  const encoded = layers.filter((layer) => layer != null).map((layer) => encodeNulls(layer) as Record<string, unknown>);
  return decodeNulls((defuReplacingLists as (...objects: object[]) => object)(...encoded)) as Record<string, unknown>;
}

/** Merges `higher` over `lower`. */
export function mergeOver(lower: TreeObject, higher: TreeObject): TreeObject {
  return mergeLayers(higher, lower) as TreeObject;
}
