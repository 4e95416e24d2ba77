/**
 * The checkpoint folder of a run (checkpoint_config.output_dir) and what lies in it:
 *
 *   checkpoint-N/                   the state after N steps (complete once its manifest is there)
 *   .checkpoint-N.tmp-<pid>-...     a checkpoint being written, or one a crash left half-written
 *   checkpoint-N.eval.json          `agentic eval --checkpoint` of checkpoint-N
 *
 * Folders are only ever renamed into place whole, so `checkpoint-N` either is complete or was
 * damaged afterwards; the manifest tells which.
 */
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { temporarySibling } from '../util/atomic';

export const CHECKPOINT_PREFIX = 'checkpoint-';

const CHECKPOINT_NAME = /^checkpoint-(\d+)$/;
/** The hidden names temporarySibling gives a checkpoint, with the writer's pid. */
const TEMPORARY_NAME = /^\.checkpoint-\d+(?:\.eval\.json)?\.tmp-(\d+)-/;

export interface CheckpointFolder {
  step: number;
  path: string;
}

export function checkpointPath(root: string, step: number): string {
  return join(root, `${CHECKPOINT_PREFIX}${step}`);
}

/** The step a folder name says, or null when the name is not checkpoint-N. */
export function stepOfName(name: string): number | null {
  const match = CHECKPOINT_NAME.exec(name);
  return match ? Number(match[1]) : null;
}

/** The checkpoint-N folders under `root`, newest (highest N) first; none when root is missing. */
export function listCheckpoints(root: string): CheckpointFolder[] {
  if (!existsSync(root)) return [];
  const found: CheckpointFolder[] = [];
  for (const name of readdirSync(root)) {
    const step = stepOfName(name);
    if (step === null) continue;
    const path = join(root, name);
    if (statSync(path).isDirectory()) found.push({ step, path });
  }
  return found.sort((a, b) => b.step - a.step);
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes what writers that no longer run left half-written; returns how many. */
export function removeAbandonedTemporaries(root: string): number {
  if (!existsSync(root)) return 0;
  let removed = 0;
  for (const name of readdirSync(root)) {
    const match = TEMPORARY_NAME.exec(name);
    if (!match || processAlive(Number(match[1]))) continue;
    rmSync(join(root, name), { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}

/**
 * Deletes a checkpoint so that no crash can leave a partial `checkpoint-N` behind: it is first
 * renamed to a hidden temporary name, which `auto` never looks at, and then removed.
 */
export function removeCheckpoint(path: string): void {
  const aside = temporarySibling(path);
  renameSync(path, aside);
  rmSync(aside, { recursive: true, force: true });
}
