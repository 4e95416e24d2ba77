/**
 * The layers of src/ and plugins/ (docs/layers.md): dependency-cruiser's rules hold on the tree,
 * and they do catch an import upwards, a folder that has no place in the layers, a built-in
 * plugin reaching past the SDK's entry and a loop of file imports.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, scratch } from './helpers';

setDefaultTimeout(60_000);

const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

/** Under Node, as `npm run lint`: dependency-cruiser 17 (the last for Node 20) finds no @swc/core parser under Bun. */
function cruise(cwd: string, roots: readonly string[] = ['src']): { code: number; out: string } {
  const run = Bun.spawnSync(['node', join(ROOT, 'node_modules/.bin/depcruise'), ...roots, '--config', CONFIG, '--output-type', 'err'], {
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
  test('hold on src/ and plugins/', () => {
    const result = cruise(ROOT, ['src', 'plugins']);
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

  test('keep the rollout sources between the loop and the run: train/ may not import them, nor they the run', () => {
    const dir = tree({
      'src/train/rollout_source.ts': 'export interface RolloutSource { next(): number }\n',
      'src/train/trainer.ts': "import { openRollouts } from '../rollout_sources/open';\nexport const trainer = openRollouts;\n",
      'src/rollout_sources/open.ts':
        "import type { RolloutSource } from '../train/rollout_source';\nexport const openRollouts = (): RolloutSource => ({ next: () => 1 });\n",
      'src/rollout_sources/local.ts': "import { run } from '../cli/train';\nexport const local = run;\n",
      'src/cli/train.ts': "import { openRollouts } from '../rollout_sources/open';\nexport const run = openRollouts;\n",
    });
    const result = cruise(dir);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain('train-imports-up: src/train/trainer.ts → src/rollout_sources/open.ts');
    expect(result.out).toContain('rollout_sources-imports-up: src/rollout_sources/local.ts → src/cli/train.ts');
    expect(result.out).not.toContain('src/rollout_sources/open.ts →');
    expect(result.out).not.toContain('cli-imports-up');
  });

  test('refuse a folder with no place in the layers', () => {
    const dir = tree({ 'src/util/a.ts': 'export const a = 1;\n', 'src/misc/b.ts': "import { a } from '../util/a';\nexport const b = a;\n" });
    const result = cruise(dir);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain('unknown-folder: src/misc/b.ts');
  });

  test('refuse a built-in plugin importing more of src/ than the SDK entry and the base below it', () => {
    const dir = tree({
      'src/sdk/index.ts': "export { guard } from './guarded_env';\n",
      'src/sdk/guarded_env.ts': 'export const guard = 1;\n',
      'src/train/trainer.ts': 'export const step = 1;\n',
      'src/engine/rng.ts': 'export const rng = 1;\n',
      'plugins/envs/ok.ts': "import { guard } from '../../src/sdk/index';\nimport { rng } from '../../src/engine/rng';\nexport default guard + rng;\n",
      'plugins/envs/inner.ts': "import { guard } from '../../src/sdk/guarded_env';\nexport default guard;\n",
      'plugins/envs/loop.ts': "import { step } from '../../src/train/trainer';\nexport default step;\n",
    });
    const result = cruise(dir, ['src', 'plugins']);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain('plugins-import-the-sdk-entry: plugins/envs/inner.ts → src/sdk/guarded_env.ts');
    expect(result.out).toContain('plugins-imports-up: plugins/envs/loop.ts → src/train/trainer.ts');
    expect(result.out).not.toContain('plugins/envs/ok.ts');
  });

  test('refuse the SDK importing a built-in plugin', () => {
    const dir = tree({
      'plugins/envs/bandit.ts': 'export default 1;\n',
      'src/sdk/builtin.ts': "import bandit from '../../plugins/envs/bandit';\nexport const all = [bandit];\n",
      'src/host/builtin_plugins.ts': "import bandit from '../../plugins/envs/bandit';\nexport const all = [bandit];\n",
    });
    const result = cruise(dir, ['src', 'plugins']);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain('sdk-imports-up: src/sdk/builtin.ts → plugins/envs/bandit.ts');
    expect(result.out).not.toContain('src/host/builtin_plugins.ts');
  });

  test('refuse a loop of file imports inside one folder', () => {
    const dir = tree({
      'src/train/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
      'src/train/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
    });
    const result = cruise(dir);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain('no-circular: src/train/a.ts →');
  });
});
