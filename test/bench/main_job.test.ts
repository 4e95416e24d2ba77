/**
 * The main-job benchmark's command line: bad input is one line and exit 2, before anything runs
 * and with nothing written at --out; a path whose library is missing is left out with a line; the
 * closing lines say which matmuls the other version really ran.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type MainJobResult, parseMainJobArgs, presentPaths, resultLines } from '../../src/bench/main_job';
import { UsageError } from '../../src/errors';
import { lines, ROOT, scratch } from '../helpers';

const SCRIPT = join(ROOT, 'scripts/bench/main_job.ts');

async function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, SCRIPT, ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

describe('parseMainJobArgs', () => {
  test('defaults: 8 steps, 1 round, every path present, output/bench/main.json', () => {
    expect(parseMainJobArgs([])).toEqual({ steps: 8, rounds: 1, paths: null, out: 'output/bench/main.json', base: null, against: null });
    expect(parseMainJobArgs(['--steps', '3', '--paths', 'none', '--against', 'main']).paths).toEqual(['none']);
  });

  test.each([
    [['--fast'], "Unknown option '--fast'"],
    [['--steps', '1'], '--steps: expected an integer of at least 2'],
    [['--steps', 'many'], '--steps: expected an integer of at least 2'],
    [['--rounds', '0'], '--rounds: expected an integer of at least 1'],
    [['--paths', 'gpu'], "--paths: expected auto, none, openblas, blis, mkl, accelerate or a library path, got 'gpu'"],
    [['now'], "Unexpected argument 'now'"],
  ])('refuses %p', (argv, message) => {
    expect(() => parseMainJobArgs(argv)).toThrow(UsageError);
    expect(() => parseMainJobArgs(argv)).toThrow(message);
  });
});

test('a path whose library does not load is left out with a line; none left is an error', () => {
  const said: string[] = [];
  expect(presentPaths(['none', '/nowhere/libopenblas.so.0'], (line) => said.push(line))).toEqual(['none']);
  expect(said).toEqual([expect.stringContaining('/nowhere/libopenblas.so.0: ')]);
  expect(said[0]).toEndWith('; left out');
  expect(() => presentPaths(['/nowhere/libopenblas.so.0'], () => {})).toThrow('none of the paths asked for is present');
});

describe('bad input from the command line', () => {
  test.each([[['--steps', '0']], [['--wat']], [['--against', 'no-such-ref-anywhere', '--paths', 'none']]])(
    '%p: one line, exit 2, nothing at --out',
    async (argv) => {
      const out = join(scratch(), 'main.json');
      const result = await bench([...argv, '--out', out]);
      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr).toStartWith('error: ');
      expect(existsSync(out)).toBe(false);
    },
  );
});

test("the closing lines give the ratio and say when the other version ran other matmuls than the path's", () => {
  const tree = (stepS: number, matmuls: string) => ({ step_s: stepS, matmuls, mfu: 0.01 }) as MainJobResult['paths'][string]['ours'];
  const result = {
    paths: {
      auto: {
        peak_gflops: 120,
        ours: tree(2, 'OpenBLAS 0.3.21 (...) (blas=auto)'),
        theirs: tree(3, 'XNNPACK (a version without the BLAS path)'),
        theirs_over_ours: 1.5,
      },
      none: { peak_gflops: 45, ours: tree(3, 'XNNPACK (blas=none)') },
    },
  } as unknown as MainJobResult;
  const [auto, none] = resultLines(result);
  expect(auto).toContain('theirs ran XNNPACK on the auto path');
  expect(auto).toContain('1.5x (above 1: ours is faster)');
  expect(none).toBe('none: ours 3.000 s/step (XNNPACK, MFU 0.01)');
});
