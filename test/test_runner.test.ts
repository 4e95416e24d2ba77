/**
 * `npm test` (scripts/test.ts): Bun's runner with a file per core, and one line at the end naming
 * every system tool whose tests were skipped, however many worker processes skipped them.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'bun:test';
import { ROOT } from './helpers';

const bin = mkdtempSync(join(tmpdir(), 'agentic-runner-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

test('two files that skip in their own workers end the run with one line naming both', async () => {
  // a PATH with Bun alone: tmux and redis-server are missing, and outside CI their tests skip
  symlinkSync(process.execPath, join(bin, 'bun'));
  const fixtures = ['needs_tmux.fixture.ts', 'needs_redis.fixture.ts'].map((file) => `./test/fixtures/skipped_tools/${file}`);
  const env: Record<string, string | undefined> = { ...process.env, PATH: bin, CI: '' };
  const run = Bun.spawn([process.execPath, 'scripts/test.ts', '--parallel=2', ...fixtures], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  const lines = `${out}\n${err}`.split('\n');
  expect(code).toBe(0);
  expect(lines.filter((line) => line.startsWith('skipped tests:'))).toEqual([
    'skipped tests: redis-server, tmux not installed (apt-get install redis-server tmux); CI installs them, and there a missing one fails',
  ]);
  expect(err.trimEnd().split('\n').at(-1)).toStartWith('skipped tests:');
  expect(lines.some((line) => /^ *2 skip$/.test(line))).toBe(true);
});
