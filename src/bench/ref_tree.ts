/**
 * Another version of this repository, checked out to run beside ours: a detached git worktree of
 * a ref in a temporary folder, with node_modules it can run from (a link to ours when its
 * package-lock.json is ours, else its own `npm ci`). `close` removes the worktree and the folder.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgenticError, UsageError } from '../errors';

export interface RefTree {
  /** The ref as given. */
  ref: string;
  commit: string;
  dir: string;
  /** How its node_modules came to be: `linked` (ours) or `npm ci`. */
  modules: 'linked' | 'npm ci';
  close(): void;
}

function git(cwd: string, args: string[]): { ok: boolean; out: string; err: string } {
  const done = Bun.spawnSync(['git', ...args], { cwd, stdout: 'pipe', stderr: 'pipe' });
  return { ok: done.exitCode === 0, out: done.stdout.toString().trim(), err: done.stderr.toString().trim() };
}

/** The commit a ref names in the repository at `root`; a UsageError when it names none. */
export function resolveCommit(root: string, ref: string): string {
  const found = git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (!found.ok || !found.out) throw new UsageError(`--against: no commit '${ref}' in ${root}`);
  return found.out;
}

/** The short commit of the tree at `root`, marked `-dirty` when it has uncommitted changes. */
export function describeCheckout(root: string): string {
  const commit = git(root, ['rev-parse', '--short', 'HEAD']).out;
  const dirty = git(root, ['status', '--porcelain', '--untracked-files=no']).out !== '';
  return dirty ? `${commit}-dirty` : commit;
}

/** Checks `ref` out beside the repository at `root` and makes it runnable; `onProgress` hears the slow parts. */
export function openRefTree(root: string, ref: string, onProgress: (line: string) => void): RefTree {
  const commit = resolveCommit(root, ref);
  const parent = mkdtempSync(join(tmpdir(), 'agentic-ref-'));
  const dir = join(parent, 'tree');
  const close = () => {
    if (existsSync(dir)) git(root, ['worktree', 'remove', '--force', dir]);
    rmSync(parent, { recursive: true, force: true });
    git(root, ['worktree', 'prune']);
  };
  try {
    const added = git(root, ['worktree', 'add', '--detach', dir, commit]);
    if (!added.ok) throw new AgenticError(`git worktree add ${ref}: ${added.err.split('\n').at(-1)}`);
    const theirLock = git(root, ['show', `${commit}:package-lock.json`]);
    const ourLock = readFileSync(join(root, 'package-lock.json'), 'utf8').trim();
    let modules: RefTree['modules'] = 'linked';
    if (theirLock.ok && theirLock.out === ourLock) {
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    } else {
      modules = 'npm ci';
      onProgress(`${ref}: its package-lock.json differs from ours; npm ci in ${dir}`);
      const installed = Bun.spawnSync(['npm', 'ci', '--no-audit', '--no-fund'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
      if (installed.exitCode !== 0) throw new AgenticError(`npm ci for ${ref}: ${installed.stderr.toString().trim().split('\n').at(-1)}`);
    }
    return { ref, commit, dir, modules, close };
  } catch (error) {
    close();
    throw error;
  }
}
