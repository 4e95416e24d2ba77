/**
 * A checkpoint's manifest: the size and sha256 of every other file in the folder, written last.
 * A folder without one was never finished; a file that is missing, of another size or with another
 * hash was damaged after the fact. Either way the checkpoint is not used.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { z } from 'zod';
import { CheckpointError, firstLine } from '../errors';
import { displayPath } from '../util/paths';

export const MANIFEST_FILE = 'manifest.json';
export const CHECKPOINT_FORMAT = 'agentic-checkpoint';
export const CHECKPOINT_VERSION = 1;

const Entry = z.strictObject({ bytes: z.int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/) });

const Manifest = z.strictObject({
  format: z.literal(CHECKPOINT_FORMAT),
  version: z.literal(CHECKPOINT_VERSION),
  step: z.int().min(0),
  files: z.record(z.string().min(1), Entry),
});

export type Manifest = z.output<typeof Manifest>;

/** Every regular file under `folder`, as sorted '/'-separated relative paths. */
function filesUnder(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else found.push(relative(folder, path).split(sep).join('/'));
    }
  };
  walk(folder);
  return found.sort();
}

/** The sha256 of a file, read in chunks (weights can be larger than one read). */
function sha256Of(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 22);
    for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) hash.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Flushes a file or a folder (its entries) to the disk. */
export function flush(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Flushes every file of a finished folder and its sub-folders, then writes the manifest of those
 * files, flushed too. After this the folder can be renamed into place.
 */
export function seal(folder: string, step: number): Manifest {
  const files: Manifest['files'] = {};
  const folders = new Set<string>([folder]);
  for (const file of filesUnder(folder)) {
    const path = join(folder, file);
    flush(path);
    files[file] = { bytes: statSync(path).size, sha256: sha256Of(path) };
    folders.add(join(path, '..'));
  }
  const manifest: Manifest = { format: CHECKPOINT_FORMAT, version: CHECKPOINT_VERSION, step, files };
  const manifestPath = join(folder, MANIFEST_FILE);
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  flush(manifestPath);
  for (const dir of folders) flush(dir);
  return manifest;
}

/** The manifest of a checkpoint folder after checking every file against it; else a CheckpointError. */
export function verifyCheckpoint(folder: string): Manifest {
  const shown = displayPath(folder);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new CheckpointError(`${shown}: no such checkpoint folder`);
  const manifestPath = join(folder, MANIFEST_FILE);
  if (!existsSync(manifestPath)) throw new CheckpointError(`${shown}: incomplete checkpoint (no ${MANIFEST_FILE})`);
  let manifest: Manifest;
  try {
    manifest = Manifest.parse(JSON.parse(readFileSync(manifestPath, 'utf8')));
  } catch (error) {
    const reason = error instanceof z.ZodError ? `${error.issues[0]!.path.join('.') || 'manifest'}: ${error.issues[0]!.message}` : firstLine(error);
    throw new CheckpointError(`${shown}: unreadable ${MANIFEST_FILE} (${reason})`);
  }
  for (const [file, expected] of Object.entries(manifest.files)) {
    const path = join(folder, ...file.split('/'));
    if (!existsSync(path)) throw new CheckpointError(`${shown}: ${file} is missing`);
    const bytes = statSync(path).size;
    if (bytes !== expected.bytes) throw new CheckpointError(`${shown}: ${file} has ${bytes} bytes, the manifest says ${expected.bytes}`);
    if (sha256Of(path) !== expected.sha256) throw new CheckpointError(`${shown}: ${file} does not match its checksum in ${MANIFEST_FILE}`);
  }
  return manifest;
}
