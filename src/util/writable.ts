/**
 * Whether a folder a run will write could be created, found before anything is written: the run
 * must fail on a bad output path at start-up, not after it has touched an earlier run's files.
 */
import { accessSync, constants, existsSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { displayPath } from './paths';

/**
 * Why `path` cannot be (or be used as) a writable folder, or null when it can. Nothing is left
 * behind: where the folder does not exist yet, a probe folder is made in its nearest existing
 * ancestor and removed again (access() alone says yes to root on /proc and read-only mounts).
 */
export function unwritableFolderReason(path: string): string | null {
  let at = resolve(path);
  while (!existsSync(at)) {
    const parent = dirname(at);
    if (parent === at) return `no part of ${displayPath(path)} exists`;
    at = parent;
  }
  if (!statSync(at).isDirectory()) return `${displayPath(at)} is a file, not a folder`;
  try {
    accessSync(at, constants.W_OK | constants.X_OK);
    if (at !== resolve(path)) rmdirSync(mkdtempSync(join(at, '.agentic-probe-')));
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return `${displayPath(at)} is not writable (${code})`;
  }
}
