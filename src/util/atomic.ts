/**
 * Writes that never leave a half-written result: the data goes to a temporary sibling first and
 * is renamed into place, so a reader sees either the old file (or folder) or the complete new one.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

let counter = 0;

/** A fresh temporary path beside `path` (same folder, so the rename stays on one file system). */
export function temporarySibling(path: string): string {
  counter += 1;
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now().toString(36)}-${counter}`);
}

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = temporarySibling(path);
  try {
    writeFileSync(temporary, data);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * Fills a folder through `fill(temporaryFolder)`, then moves it to `path`, replacing any folder
 * there. An interrupted fill leaves only a hidden temporary folder, never a partial `path`.
 */
export async function writeFolderAtomic(path: string, fill: (folder: string) => void | Promise<void>): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = temporarySibling(path);
  mkdirSync(temporary);
  try {
    await fill(temporary);
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw error;
  }
  if (existsSync(path)) {
    const old = temporarySibling(path);
    renameSync(path, old);
    renameSync(temporary, path);
    rmSync(old, { recursive: true, force: true });
  } else {
    renameSync(temporary, path);
  }
}
