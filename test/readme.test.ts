/** The README's examples are code users will paste: they must work. */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PluginHost } from '../src/plugins/host';
import type { Env, ResetResult, StepResult } from '../src/plugins/types';
import { agentic, ROOT, scratch } from './helpers';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

test('the plugin example loads, validates its config and plays an episode', async () => {
  const source = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  const dir = scratch({ 'my_env.ts': source });
  const host = new PluginHost(dir);
  const plugin = await host.resolveEnv('./my_env.ts');
  expect(plugin.name).toBe('guess_parity');
  const env = new plugin.env(plugin.config.parse({}) as never, host.envContext()) as Env;
  const { observation } = (await env.reset(1)) as ResetResult;
  const n = Number(/(\d+)/.exec(observation)![1]);
  const step = (await env.step(`<answer>${n % 2 ? 'odd' : 'even'}</answer>`)) as StepResult;
  expect(step).toMatchObject({ reward: 1, terminated: true });
  expect((await agentic(['plugins', './my_env.ts'], { cwd: dir })).stdout).toContain('guess_parity');
  const check = await agentic(['plugins', 'check', './my_env.ts', '--episodes', '3'], { cwd: dir });
  expect(check.stdout).toContain("env 'guess_parity': all checks passed");
  expect(check.code).toBe(0);
});

test('the config examples run', async () => {
  const block = /```sh\nagentic config([\s\S]*?)```/.exec(readme)![0];
  const commands = block.split('\n').filter((l) => l.startsWith('agentic config'));
  expect(commands.length).toBeGreaterThanOrEqual(4);
  for (const line of commands) {
    const words = line
      .replace(/#.*$/, '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map((w) => w.replace(/^'(.*)'$/, '$1'));
    const { code, stderr } = await agentic(words);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }
}, 60_000);
