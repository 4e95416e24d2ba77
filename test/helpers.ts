/** Shared test helpers: running the CLI as a user would, and scratch folders. */
import { afterAll, beforeAll } from 'bun:test';
import { tf } from '../src/engine/tf';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dir, '..');
export const MAIN = join(ROOT, 'src/cli/main.ts');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `agentic ...args` (from source, or the binary at `bin`) and collects its output; `stdin` is piped in when given. */
export async function agentic(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; bin?: string; stdin?: string } = {},
): Promise<RunResult> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
  if (!options.env?.AGENTIC_DEBUG) delete env.AGENTIC_DEBUG;
  const command = options.bin ? [options.bin, ...args] : [process.execPath, MAIN, ...args];
  const stdin = options.stdin === undefined ? 'ignore' : new Blob([options.stdin]);
  const child = Bun.spawn(command, { cwd: options.cwd ?? ROOT, env, stdin, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

/** The non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary folder, removed after the test file, optionally filled with files. */
export function scratch(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentic-test-'));
  made.push(dir);
  writeFiles(dir, files);
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
}

/**
 * Puts back, after this file's tests, the backend that was current before them: bun runs every
 * file in one process, and a file that switches to another backend would otherwise leave the
 * next file's tensors (made on the backend it set up when first imported) to be copied across.
 */
export function restoreBackendAfterFile(): void {
  let found: string | null = null;
  beforeAll(() => {
    found = tf.engine().backendName ?? null;
  });
  afterAll(async () => {
    if (found !== null && tf.getBackend() !== found) await tf.setBackend(found);
  });
}

/**
 * The processes other than this test runner whose command line holds every one of `markers`,
 * read from /proc (procps's `ps` is not on every machine).
 */
export function processesWith(...markers: string[]): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .flatMap((pid) => {
      try {
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return markers.every((marker) => command.includes(marker)) ? [Number(pid)] : [];
      } catch {
        return []; // it ended while we read
      }
    });
}
