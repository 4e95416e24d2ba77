/**
 * scripts/bench/gpu.sh, the GPU measurements run later on a GPU machine: it must parse, and what
 * it asks of the CLI must exist, since a mistake there is found only where the GPU time is spent.
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentic, ROOT } from '../helpers';

const SCRIPT = join(ROOT, 'scripts/bench/gpu.sh');
const text = readFileSync(SCRIPT, 'utf8');

test('bash parses it, and it stops at the first unset variable or failed pipe', () => {
  const check = Bun.spawnSync(['bash', '-n', SCRIPT], { stderr: 'pipe' });
  expect(check.stderr.toString()).toBe('');
  expect(check.exitCode).toBe(0);
  expect(text).toContain('set -euo pipefail');
  expect(text).toContain('out="${OUT:-output/bench/gpu}"');
});

test("the training comparison's overrides are keys of the config", async () => {
  const overrides = text.match(/^TRAIN_OVERRIDES="([^"]+)"$/m)![1]!.split(' ');
  const { code, stderr } = await agentic(['config', ...overrides, 'backend=webgpu', 'exp_name=gpu_webgpu']);
  expect(stderr).toBe('');
  expect(code).toBe(0);
});

test('the scripts it runs exist and take the backend it gives them', () => {
  const scripts = [...text.matchAll(/^bun (scripts\/\S+\.ts) (\S+)/gm)];
  expect(scripts.map((m) => m[1])).toEqual(['scripts/bench/profile_model.ts']);
  for (const [, script, backend] of scripts) expect(readFileSync(join(ROOT, script!), 'utf8')).toContain(`'${backend}'`);
});

test('every bench it runs has flags the CLI accepts', async () => {
  const runs = [...text.matchAll(/^bench \S+ (.+)$/gm)].map((m) => m[1]!.split(' '));
  expect(runs.length).toBeGreaterThanOrEqual(4);
  const help = (await agentic(['bench', '--help'])).stdout;
  for (const flag of runs.flat().filter((word) => word.startsWith('--'))) expect(help).toContain(flag);
});
