/**
 * `npm test`: Bun's test runner with a test file per core, the slowest files first
 * (test/timings.json), then the one line naming the system tools whose tests were skipped.
 *
 * Under --parallel every file runs in a fresh global of a worker process, so no afterAll sees the
 * whole run: each file appends the packages it skipped to a file of this run, named by
 * AGENTIC_SKIPPED_PACKAGES (test/system_tools.ts), and the line is printed here, once, after
 * Bun's summary. Arguments go to `bun test` (`npm test -- test/train`, `--update-timings`).
 *
 *   bun scripts/test.ts [bun test arguments]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { skippedLine } from '../test/skipped_line';

const root = resolve(import.meta.dir, '..');
const folder = mkdtempSync(join(tmpdir(), 'agentic-test-'));
const skippedFile = join(folder, 'skipped');
try {
  // a test's time limit guards against hangs, not slowness: two files share the cores, and a test
  // that takes 3-4 s alone may take over Bun's default 5 s beside another.
  // One file runs per core, so each takes one wasm thread (and one BLAS thread): with a pool of
  // two a file, two pools took turns on two cores, and the suite took 570 s where it takes 452 s
  // (AMD EPYC, 2 cores). The kernel tests that are about threads set their own count.
  const bun = Bun.spawn(['bun', 'test', '--parallel', '--timings=test/timings.json', '--timeout=30000', ...process.argv.slice(2)], {
    cwd: root,
    stdio: ['inherit', 'inherit', 'inherit'],
    env: { AGENTIC_WASM_THREADS: '1', ...process.env, AGENTIC_SKIPPED_PACKAGES: skippedFile },
  });
  const code = await bun.exited;
  let skipped: string[] = [];
  try {
    skipped = [...new Set(readFileSync(skippedFile, 'utf8').split('\n').filter(Boolean))].sort();
  } catch {
    // no file skipped a test
  }
  if (skipped.length > 0) console.warn(skippedLine(skipped));
  process.exitCode = code;
} finally {
  rmSync(folder, { recursive: true, force: true });
}
