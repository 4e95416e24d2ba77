/**
 * The layers of src/ (docs/layers.md): dependency-cruiser's rules hold on the tree, and they do
 * catch an import upwards and a folder that has no place in the layers.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, scratch } from './helpers';

setDefaultTimeout(60_000);

const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

function cruise(cwd: string): { code: number; out: string } {
  const run = Bun.spawnSync([process.execPath, '--bun', join(ROOT, 'node_modules/.bin/depcruise'), 'src', '--config', CONFIG, '--output-type', 'err'], {
    cwd,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return { code: run.exitCode, out: run.stdout.toString() + run.stderr.toString() };
}

function tree(files: Record<string, string>): string {
  const dir = scratch(files);
  copyFileSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  return dir;
}

describe('the layer rules', () => {
  test('hold on src/', () => {
    const result = cruise(ROOT);
    expect(result.out).not.toContain('error');
    expect(result.code).toBe(0);
  });

  test('refuse an import upwards', () => {
    const dir = tree({
      'src/train/trainer.ts': 'export const step = 1;\n',
      'src/algo/advantage.ts': "import { step } from '../train/trainer';\nexport const a = step;\n",
      'src/rollout/env_manager.ts': "import { a } from '../algo/advantage';\nexport const b = a;\n",
    });
    const result = cruise(dir);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain('algo-imports-up: src/algo/advantage.ts → src/train/trainer.ts');
    expect(result.out).not.toContain('rollout-imports-up');
  });

  test('refuse a folder with no place in the layers', () => {
    const dir = tree({ 'src/util/a.ts': 'export const a = 1;\n', 'src/misc/b.ts': "import { a } from '../util/a';\nexport const b = a;\n" });
    const result = cruise(dir);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain('unknown-folder: src/misc/b.ts');
  });
});
