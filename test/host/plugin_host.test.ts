import { describe, expect, test } from 'bun:test';
import * as tf from '@tensorflow/tfjs-core';
import { join, relative } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { BUILTIN_PLUGINS } from '../../src/host/builtin_plugins';
import { PluginHost, isPathReference, pluginFilesIn } from '../../src/host/plugin_host';
import { PluginError } from '../../src/errors';
import { ROOT, restoreBackendAfterFile, scratch } from '../helpers';

restoreBackendAfterFile();

const ENV_PLUGIN = `
import { defineEnv, z, Rng } from 'agentic';
import { greeting } from './_helper';

class Echo {
  constructor(private config: { word: string }) {}
  reset(seed: number) { return { observation: greeting() + ' ' + Rng.fromSeed(seed).int(10), info: { instruction: 'say ' + this.config.word } }; }
  step(response: string) {
    const ok = response.includes(this.config.word);
    return { observation: '', reward: ok ? 1 : 0, terminated: true, truncated: false, info: { metrics: { success: ok } } };
  }
  render() { return 'echo'; }
  close() {}
  sampleRandomAction() { return '<answer>' + this.config.word + '</answer>'; }
}

export default defineEnv({
  name: 'echo',
  description: 'Repeat a word.',
  config: z.strictObject({ word: z.string().default('hello') }),
  env: Echo,
});
`;

const REWARD_PLUGIN = `import { defineReward } from 'agentic';
export default defineReward({ name: 'always_one', description: 'Scores 1.', score: () => 1 });`;

const TOOL_PLUGIN = `import { defineTool, z } from 'agentic';
export default defineTool({ name: 'shout', description: 'Upper-cases text.', parameters: z.object({ text: z.string() }), call: ({ text }) => text.toUpperCase() });`;

describe('built-in plugins', () => {
  test('are registered by name', () => {
    const host = new PluginHost();
    expect(host.registry.names('env')).toContain('bandit');
    expect(host.registry.names('reward')).toContain('exact_match');
    expect(host.registry.names('tool')).toContain('calculator');
  });

  test('the built-in list matches the plugins/ folder, module for module', async () => {
    const files = pluginFilesIn(join(ROOT, 'plugins')).map((f) => relative(ROOT, f).replace(/\/index\.ts$/, ''));
    expect(files.sort()).toEqual(BUILTIN_PLUGINS.map((p) => p.source).sort());
    // loading the folder finds the same definitions (no clash: they are the same objects)
    const host = new PluginHost();
    const loaded = await host.load(join(ROOT, 'plugins'));
    expect(loaded.map((d) => d.name).sort()).toEqual(BUILTIN_PLUGINS.map((p) => p.definition.name).sort());
  });
});

describe('plugins from paths', () => {
  test('an env file that imports agentic and a relative helper', async () => {
    const dir = scratch({ 'my_env.ts': ENV_PLUGIN, '_helper.ts': "export const greeting = () => 'hi';" });
    const host = new PluginHost(dir);
    const env = await host.resolveEnv('./my_env.ts');
    expect(env.name).toBe('echo');
    expect(host.registry.get('env', 'echo')?.source).toBe('my_env.ts');
    const instance = new env.env(env.config.parse({}) as never, host.envContext());
    const reset = (await instance.reset(3)) as { observation: string; info: { instruction: string } };
    expect(reset.observation).toStartWith('hi ');
    expect(reset.info.instruction).toBe('say hello');
  });

  test('a folder of plugins: files, folders with index files, nested kind folders; helpers skipped', async () => {
    const dir = scratch({
      'mine/envs/echo/index.ts': ENV_PLUGIN,
      'mine/envs/echo/_helper.ts': "export const greeting = () => 'hi';",
      'mine/envs/_helper.ts': "export const greeting = () => 'hi';",
      'mine/rewards/always_one.ts': REWARD_PLUGIN,
      'mine/shout.ts': TOOL_PLUGIN,
      'mine/shout.test.ts': 'throw new Error("tests are not plugins")',
      'mine/types.d.ts': 'export {}',
    });
    const host = new PluginHost(dir);
    const loaded = await host.load('mine');
    expect(loaded.map((d) => `${d.kind}:${d.name}`).sort()).toEqual(['env:echo', 'reward:always_one', 'tool:shout']);
    const tool = await host.resolve('tool', 'shout');
    expect(await tool.call({ text: 'hey' }, { signal: new AbortController().signal })).toBe('HEY');
  });

  test("a plugin gets the host's own tfjs through agentic", async () => {
    const dir = scratch({
      'tf_reward.ts': `import { defineReward, tf } from 'agentic';
export const engine = tf.engine();
export default defineReward({ name: 'tf_sum', description: 'Sums with tfjs.', score: () => tf.tidy(() => tf.sum(tf.tensor1d([1, 2, 3])).arraySync() as number) });`,
    });
    await startBackend('cpu');
    const host = new PluginHost(dir);
    const reward = await host.resolve('reward', './tf_reward.ts');
    expect(await reward.score({ response: '', trajectory: [], row: {} })).toBe(6);
    const mod = (await import(join(dir, 'tf_reward.ts'))) as { engine: unknown };
    expect(mod.engine).toBe(tf.engine());
  });

  test('a module may export a list of definitions', async () => {
    const dir = scratch({
      'pack.ts': `import { defineReward } from 'agentic';
export default [
  defineReward({ name: 'r_one', description: 'one', score: () => 1 }),
  defineReward({ name: 'r_two', description: 'two', score: () => 2 }),
];`,
    });
    const host = new PluginHost(dir);
    await host.load('pack.ts');
    expect(host.registry.names('reward')).toContain('r_two');
    await expect(host.resolve('reward', './pack.ts')).rejects.toThrow('defines 2 reward plugins');
  });

  test('isPathReference', () => {
    for (const ref of ['./x.ts', '../a/b', '/abs/env.js', 'my_env.ts', 'dir\\env']) expect(isPathReference(ref)).toBe(true);
    for (const ref of ['bandit', 'frozen_lake']) expect(isPathReference(ref)).toBe(false);
  });
});

describe('bad plugins get one line naming the file', () => {
  const cases: Array<[string, string, string]> = [
    ['syntax.ts', 'export default defineEnv({ name: "x", ', 'syntax.ts:1:38: cannot load: Expected identifier but found end of file'],
    ['throws.ts', 'throw new Error("boom at import");', 'throws.ts: cannot load: boom at import'],
    ['bad_import.ts', 'import { nope } from "./does_not_exist"; export default nope;', 'bad_import.ts: cannot load: '],
    ['no_default.ts', 'export const x = 1;', 'no_default.ts: no default export; write export default defineEnv(...)'],
    ['not_plugin.ts', 'export default { hello: 1 };', 'not_plugin.ts: the default export is not a plugin'],
    [
      'bad_name.ts',
      `import { defineReward } from 'agentic'; export default defineReward({ name: 'Bad-Name', description: 'x', score: () => 0 });`,
      'must be snake_case',
    ],
    [
      'no_desc.ts',
      `import { defineReward } from 'agentic'; export default defineReward({ name: 'r', description: '', score: () => 0 });`,
      "reward 'r' needs a one-line description",
    ],
    [
      'no_score.ts',
      `import { defineReward } from 'agentic'; export default defineReward({ name: 'r', description: 'x' } as any);`,
      "reward 'r' has no score() function",
    ],
    [
      'no_reset.ts',
      `import { defineEnv } from 'agentic';
class E { step() {} render() {} close() {} sampleRandomAction() { return ''; } }
export default defineEnv({ name: 'e', description: 'x', env: E as any });`,
      "no_reset.ts: env 'e': the environment class has no reset() method",
    ],
    [
      'env_not_class.ts',
      `import { defineEnv } from 'agentic'; export default defineEnv({ name: 'e', description: 'x', env: {} as any });`,
      "env 'e': 'env' must be the environment class",
    ],
    [
      'tool_params.ts',
      `import { defineTool } from 'agentic'; export default defineTool({ name: 't', description: 'x', parameters: {} as any, call: () => '' });`,
      "tool 't': 'parameters' must be z.object",
    ],
    ['empty_list.ts', 'export default [];', 'empty_list.ts: the default export is an empty list'],
  ];

  for (const [file, source, message] of cases) {
    test(file, async () => {
      const dir = scratch({ [file]: source });
      const error = await new PluginHost(dir).load(file).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PluginError);
      expect((error as Error).message).toContain(message);
      expect((error as Error).message).toStartWith(file);
    });
  }

  test('a syntax error shows the first error with its line and column, also in a module the plugin imports', async () => {
    const broken = 'import { defineTool } from "agentic";\nexport default defineTool({\n  name: "x"\n  description: "y",\n});\n';
    const dir = scratch({ 'broken.ts': broken, 'wrapper.ts': 'import tool from "./broken.ts";\nexport default tool;\n' });
    await expect(new PluginHost(dir).load('broken.ts')).rejects.toThrow(
      new PluginError('broken.ts:4:3: cannot load: Expected "}" but found "description" (and 3 more errors)'),
    );
    await expect(new PluginHost(dir).load('wrapper.ts')).rejects.toThrow(
      new PluginError('wrapper.ts: in broken.ts:4:3: cannot load: Expected "}" but found "description" (and 3 more errors)'),
    );
  });

  test('a package that is not installed names the file, the package and the install command, also when the import is computed', async () => {
    const dir = scratch({
      'direct.ts': "import pad from 'agentic-test-missing-pkg-xyz';\nexport default pad;\n",
      'computed.ts': "export default await import(['agentic-test', 'missing-pkg-xyz'].join('-'));\n",
    });
    for (const file of ['direct.ts', 'computed.ts']) {
      await expect(new PluginHost(dir).load(file)).rejects.toThrow(
        new PluginError(`${file} imports 'agentic-test-missing-pkg-xyz', which is not installed: run \`npm install agentic-test-missing-pkg-xyz\` in ${dir}`),
      );
    }
  });

  test('a missing file or folder', async () => {
    await expect(new PluginHost(scratch()).load('./gone.ts')).rejects.toThrow('./gone.ts: no such plugin file or folder');
  });

  test('a name clash with a built-in names both places', async () => {
    const dir = scratch({
      'bandit.ts': ENV_PLUGIN.replace("name: 'echo'", "name: 'bandit'").replace("import { greeting } from './_helper';", 'const greeting = () => "x";'),
    });
    await expect(new PluginHost(dir).load('bandit.ts')).rejects.toThrow(
      "bandit.ts: env 'bandit' is already defined by plugins/envs/bandit; rename one of them",
    );
  });

  test('a name clash between two user files', async () => {
    const dir = scratch({ 'a.ts': REWARD_PLUGIN, 'b.ts': REWARD_PLUGIN });
    const host = new PluginHost(dir);
    await host.load('a.ts');
    await expect(host.load('b.ts')).rejects.toThrow("b.ts: reward 'always_one' is already defined by a.ts");
  });

  test('a plugin of the wrong kind', async () => {
    const dir = scratch({ 'r.ts': REWARD_PLUGIN });
    await expect(new PluginHost(dir).resolveEnv('./r.ts')).rejects.toThrow("./r.ts: defines reward 'always_one', not an env plugin");
  });

  test('an unknown name lists what exists or suggests', async () => {
    const host = new PluginHost();
    expect(() => host.registry.require('tool', 'calculater')).toThrow("unknown tool 'calculater' (did you mean calculator?)");
    expect(() => host.registry.require('tool', 'zzz')).toThrow(/^unknown tool 'zzz'; registered: (\w+, )*calculator(, \w+)*$/);
  });
});
