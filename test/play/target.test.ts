/** How `agentic play ENV_OR_TAG` finds its env: a tag of the config, else a plugin through a new custom_envs entry. */
import { describe, expect, test } from 'bun:test';
import { loadConfig } from '../../src/config/load';
import { parseOverride } from '../../src/config/overrides';
import { PluginHost } from '../../src/host/plugin_host';
import { entryOverride, resolvePlayTarget, tagForPlugin } from '../../src/play/target';

const host = new PluginHost();
const load = async (overrides: readonly string[]) => (await loadConfig({ overrides }, host)).config;

describe('resolvePlayTarget', () => {
  test("a tag of the config is played with the config's own entry", async () => {
    const target = await resolvePlayTarget('FrozenLake', ['seed=3'], load, host);
    expect(target).toMatchObject({ tag: 'FrozenLake', via: 'tag', overrides: ['seed=3'] });
    expect(target.config.custom_envs.FrozenLake!.env_manager_cls).toBe('step');
  });

  test("a registered env gets an entry of the schema's defaults, which the user's overrides can then set", async () => {
    const target = await resolvePlayTarget('sokoban', ['custom_envs.sokoban.max_steps=3'], load, host);
    expect(target).toMatchObject({ tag: 'sokoban', via: 'plugin', overrides: ['+custom_envs.sokoban.env_type=sokoban', 'custom_envs.sokoban.max_steps=3'] });
    expect(target.config.custom_envs.sokoban).toMatchObject({ env_type: 'sokoban', max_steps: 3, env_manager_cls: 'traj' });
  });

  test('an unknown name is one line naming the tags and the envs', async () => {
    await expect(resolvePlayTarget('Mars', [], load, host)).rejects.toThrow(
      "unknown env 'Mars': not a custom_envs tag of this config (FrozenLake, FrozenLakeTrain), a registered env (agent, bandit, connect_four, fifteen_puzzle, frozen_lake, gem_logic, gem_math, gem_qa, guess_the_number, hangman, kuhn_poker, letter_counting, mastermind, minesweeper, simple_negotiation, sokoban, sudoku, tic_tac_toe, tool_use, tower_of_hanoi, webshop, wordle) or a plugin file path",
    );
  });

  test("a config error is the config's, not 'unknown env'", async () => {
    await expect(resolvePlayTarget('FrozenLake', ['seed=abc'], load, host)).rejects.toThrow('seed: expected integer');
  });
});

describe('tagForPlugin and entryOverride', () => {
  test('a plugin name becomes a tag that does not clash with the config', () => {
    expect(tagForPlugin('frozen_lake', ['FrozenLake'])).toBe('frozen_lake');
    expect(tagForPlugin('frozen_lake', ['frozen_lake'])).toBe('frozen_lake_2');
    expect(tagForPlugin('3d.maze', [])).toBe('env_3d_maze');
  });

  test('the env_type survives the override grammar, quoted only when it must be', () => {
    expect(entryOverride('lake', 'frozen_lake')).toBe('+custom_envs.lake.env_type=frozen_lake');
    expect(entryOverride('mine', './envs/mine.ts')).toBe('+custom_envs.mine.env_type=./envs/mine.ts');
    for (const ref of ["/tmp/it's here/env.ts", 'C:\\envs\\mine.ts', '/tmp/a,b/[x].ts']) {
      expect(parseOverride(entryOverride('mine', ref)).value).toBe(ref);
    }
  });
});
