/**
 * The README's examples are code users will paste: they must work. Its results table is the one
 * results/learning.jsonl renders, its test command the one CI runs, and its links and the docs' lead
 * somewhere.
 */
import { expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { checkoutConfigs, pageSection, RESULT_PAGES, readResults, renderResultsTable, withResultsTable } from '../scripts/results_table';
import { PluginHost } from '../src/host/plugin_host';
import type { Env, ResetResult, StepResult } from '../src/sdk/types';
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

test('the results table on each page is the one results/learning.jsonl renders, the published rows under it', async () => {
  const results = readResults();
  for (const page of RESULT_PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    expect(
      withResultsTable(text, await pageSection(page, results, checkoutConfigs()), page),
      `${page}: run \`bun run docs\` after editing results/learning.jsonl`,
    ).toBe(text);
  }
});

test('a results table row names its run in full', () => {
  const rows = renderResultsTable(readResults()).split('\n').slice(2);
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row.split(' | ')).toHaveLength(11);
  expect(() => withResultsTable('no markers here', '| a |', 'page.md')).toThrow('page.md: no results markers');
});

test("the README's test command is the one CI runs", () => {
  const setup = /## Set up\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  const commands = setup.split('\n').map((line) => line.replace(/#.*$/, '').trim());
  expect(commands).toContain('npm ci && npm run train');
  expect(commands).toContain('npm ci && npm test');
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // one test file per core at a time, the slowest first (test/timings.json, refreshed by `npm run test:timings`)
  expect(pkg.scripts.test).toBe('bun scripts/test.ts');
  expect(readFileSync(join(ROOT, 'scripts/test.ts'), 'utf8')).toContain("['bun', 'test', '--parallel', '--timings=test/timings.json', '--timeout=30000'");
  expect(pkg.scripts.train).toBe('bun src/cli/main.ts train');
  const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
  expect(ci).toMatch(/^npm ci\b/m);
  expect(ci).toMatch(/^npm test\b/m);
});

test("the README names the Node.js versions package.json's engines allows", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  // '^20.19.0 || ^22.13.0 || >=24' reads '20.19+, 22.13+ or 24+'
  const versions = pkg.engines.node.split(' || ').map((range) => `${/^(?:\^|>=)(\d+(?:\.[1-9]\d*)?)/.exec(range)![1]}+`);
  expect(/with Node\.js (.*?) and npm/.exec(readme)?.[1]).toBe(`${versions.slice(0, -1).join(', ')} or ${versions.at(-1)}`);
});

test('the README reads in five minutes: under 200 lines', () => {
  expect(readme.split('\n').length).toBeLessThan(200);
});

test('docs/README.md lists every page of docs/', () => {
  const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
  const pages = readdirSync(join(ROOT, 'docs')).filter((name) => name !== 'README.md' && /\.(md|json)$/.test(name));
  expect(pages.length).toBeGreaterThan(10);
  for (const page of pages) expect(index, `docs/README.md does not list ${page}`).toContain(`](${page})`);
});

test('every relative link in the README and docs points to a file and heading that exist', () => {
  const pages = [
    'README.md',
    'scripts/README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((n) => n.endsWith('.md'))
      .map((n) => `docs/${n}`),
  ];
  const broken: string[] = [];
  for (const page of pages) {
    for (const target of relativeLinks(readFileSync(join(ROOT, page), 'utf8'))) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path));
      if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
      else if (anchor && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});

test('the link check sees links, skips code, and knows GitHub heading anchors', () => {
  const text = 'See [a](docs/a.md#x-y) and [web](https://x.org).\n```sh\n[no](code.md)\n```\n`[no](inline.md)` [b](b.md)';
  expect(relativeLinks(text)).toEqual(['docs/a.md#x-y', 'b.md']);
  expect([...headingAnchors('# Why `a`, and b?\n## Step 1\n## Step 1\n```\n# not a heading\n```')]).toEqual(['why-a-and-b', 'step-1', 'step-1-1']);
});

/** The relative targets of the markdown links in `text`, outside code. */
function relativeLinks(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of text.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}
