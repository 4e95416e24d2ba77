/** `agentic config --list`, and naming a config that is nowhere. */
import { describe, expect, test } from 'bun:test';
import { BUILTIN_CONFIGS } from '../../src/config/builtin';
import { agentic, lines, scratch } from '../helpers';

const SHIPPED = Object.keys(BUILTIN_CONFIGS)
  .filter((file) => !file.includes('/'))
  .map((file) => file.replace(/\.yaml$/, ''))
  .sort();

describe('agentic config --list', () => {
  test('one line a config: the built-in ones with their summaries, a folder config with its file', async () => {
    const dir = scratch({ 'configs/mine.yaml': '# My experiment.\nseed: 1\n', 'configs/webshop.yaml': '# My WebShop.\nseed: 1\n' });
    const { code, stdout, stderr } = await agentic(['config', '--list'], { cwd: dir });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const listed = lines(stdout);
    expect(listed.map((line) => line.split(' ')[0])).toEqual([...SHIPPED, 'mine'].sort());
    // the names take one column, as wide as the longest
    const column = Math.max(...listed.map((line) => line.split(' ')[0]!.length)) + 2;
    const row = (name: string, summary: string) => `${name.padEnd(column)}${summary}`;
    expect(listed).toContain(row('calculator', 'Arithmetic word problems with the calculator tool, learned by a small policy on a laptop CPU.'));
    expect(listed).toContain(row('mine', 'My experiment.  [configs/mine.yaml]'));
    expect(listed).toContain(row('webshop', 'My WebShop.  [configs/webshop.yaml, over the built-in]'));
  });

  test('--list names no config and takes no overrides', async () => {
    const { code, stderr } = await agentic(['config', '--list', '--config-name', 'webshop'], { cwd: scratch() });
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('error: --list takes only --config-path');
  });
});

test('a config that is neither in the folder nor built in: one line naming every config there is', async () => {
  const { code, stdout, stderr } = await agentic(['config', '--config-name', 'nope'], { cwd: scratch() });
  expect(code).toBe(2);
  expect(stdout).toBe('');
  expect(stderr.trim()).toBe(`error: config 'nope' not found in configs/ or built in; available: ${SHIPPED.join(', ')}`);
});
