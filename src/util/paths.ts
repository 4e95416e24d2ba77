import { isAbsolute, relative } from 'node:path';

/** A path as messages show it: relative to `cwd` when it lies inside, else absolute. */
export function displayPath(path: string, cwd: string = process.cwd()): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
