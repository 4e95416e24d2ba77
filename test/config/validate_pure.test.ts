/**
 * Validation reads and decides; it loads no plugin, starts no process and edits nothing it is
 * given. What only a loaded plugin or a built env can tell is the start-up's (cli/start_up.ts).
 */
import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import toolUse from '../../plugins/envs/tool_use';
import { configDefaults } from '../../src/config/schema';
import { mergeOver, type TreeObject } from '../../src/config/tree';
import { validateConfig, validateEnvSettings } from '../../src/config/validate';
import { defineEnv, z } from '../../src/sdk';
import type { Env, EnvPlugin } from '../../src/sdk/types';
import { scratch } from '../helpers';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** A plugin file that leaves a mark when imported, and an MCP server that leaves one when started. */
function sideEffects(): { dir: string; imported: string; started: string; tree: TreeObject } {
  const dir = scratch({
    'loud_env.ts': `import { writeFileSync } from 'node:fs';\nwriteFileSync(new URL('./imported', import.meta.url), 'x');\nexport default [];\n`,
  });
  const started = join(dir, 'started');
  const tree = mergeOver(
    configDefaults() as TreeObject,
    {
      plugins: [join(dir, 'loud_env.ts')],
      python_sandbox: 'unconfined',
      custom_envs: {
        Loud: { env_type: join(dir, 'loud_env.ts'), env_config: { size: 3 } },
        Tools: { env_type: 'tool_use', env_config: { tools: [{ mcp: { command: 'sh', args: ['-c', `touch ${started}`] } }] } },
      },
      train_env_manager: { tags: ['Loud'], num_env_groups: 1, group_size: 1 },
      val_env_manager: { tags: ['Tools'], num_env_groups: 1, group_size: 1 },
      rollout_batch_size: 1,
      val_batch_size: 1,
    } as TreeObject,
  );
  return { dir, imported: join(dir, 'imported'), started, tree };
}

describe('validation is pure', () => {
  test('a config naming a plugin file, an MCP server and python_sandbox: nothing imported or started, its frozen input accepted as it was', async () => {
    const { imported, started, tree } = sideEffects();
    const before = structuredClone(tree);
    const config = validateConfig(deepFreeze(tree));
    expect(config.custom_envs.Tools!.env_type).toBe('tool_use');
    expect(config.python_sandbox).toBe('unconfined');
    await Bun.sleep(100); // a process it started would have touched its file by now
    expect([existsSync(imported), existsSync(started)]).toEqual([false, false]);
    expect(tree).toEqual(before);
  });

  test('env configs are checked against the plugins given: their defaults filled into a new config, the given one left as it was', () => {
    const { tree } = sideEffects();
    const config = deepFreeze(validateConfig(tree));
    const before = structuredClone(config);
    const loud: EnvPlugin = defineEnv({
      name: 'loud',
      description: 'a stand-in',
      config: z.strictObject({ size: z.number(), slip: z.number().default(0.1) }),
      env: class {} as never as new () => Env,
    });
    const checked = validateEnvSettings(config, {
      envs: new Map([
        ['Loud', loud],
        ['Tools', toolUse as EnvPlugin],
      ]),
    });
    expect(checked.custom_envs.Loud!.env_config).toEqual({ size: 3, slip: 0.1 });
    expect(checked.custom_envs.Tools!.env_config).toMatchObject({ tools: [{ mcp: { command: 'sh' } }] });
    expect(config).toEqual(before);
    expect(() =>
      validateEnvSettings(config, {
        envs: new Map<string, EnvPlugin | Error>([
          ['Loud', loud],
          ['Tools', new Error('not resolved')],
        ]),
      }),
    ).toThrow('not resolved');
  });
});
