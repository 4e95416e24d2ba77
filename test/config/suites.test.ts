import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILDERS, episodeKey, episodesOf, trainingEpisodeKeys, trainingResets } from '../../scripts/build_suites';
import { isHeldOutMap, lakeOf } from '../../plugins/envs/frozen_lake/suite';
import { isHeldOutLayout, roomOf } from '../../plugins/envs/sokoban/suite';
import { loadRows } from '../../plugins/envs/tool_use/dataset';
import { loadConfig } from '../../src/config/load';
import type { AgenticConfig } from '../../src/config/schema';
import { BUILTIN_SUITES, loadSuite } from '../../src/config/suites';
import { PluginHost } from '../../src/host/plugin_host';
import { EnvManager } from '../../src/rollout/env_manager';
import type { ResetResult, SuiteEpisode } from '../../src/sdk/types';
import { ROOT } from '../helpers';

const host = new PluginHost(ROOT);
const shipped = async (name: string, overrides: string[] = []) => (await loadConfig({ configName: name, overrides }, host)).config;

/** The suite each target config names. */
const TARGETS = [
  ['frozen_lake/v2', 'agentic'],
  ['sokoban/v2', 'sokoban_compact'],
  ['tool_use/v1', 'calculator'],
  ['webshop/v1', 'webshop_compact'],
] as const;
/** Each suite and the shipped config whose val tag plays it (sokoban/v1 and frozen_lake/v1: the lists before v2). */
const SUITES = [...TARGETS, ['sokoban/v1', 'sokoban_compact'], ['frozen_lake/v1', 'agentic']] as const;

async function valEnv(config: AgenticConfig) {
  const custom = config.custom_envs[config.val_env_manager.tags[0]!]!;
  const plugin = await host.resolveEnv(custom.env_type);
  return new plugin.env(plugin.config.parse(custom.env_config), host.envContext());
}

describe('pinned evaluation suites', () => {
  test('every file under suites/ is listed, and every listed suite has episodes', () => {
    const files = readdirSync(join(ROOT, 'suites'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.replace(/\.jsonl$/, ''))
      .sort();
    expect(Object.keys(BUILTIN_SUITES).sort()).toEqual(files);
    for (const [name] of SUITES) expect(loadSuite(name).episodes.length).toBeGreaterThan(0);
    expect(loadSuite('tool_use/v1').episodes).toHaveLength(200);
  });

  test('the four target configs name their suite', async () => {
    for (const [name, config] of TARGETS) expect((await shipped(config)).val_suite).toBe(name);
  });

  for (const [name, configName] of SUITES) {
    test(`${name}: each entry replays as recorded, and no two are the same`, async () => {
      const env = await valEnv(await shipped(configName));
      const episodes = loadSuite(name).episodes;
      expect(new Set(episodes.map(episodeKey)).size).toBe(episodes.length);
      for (const [i, episode] of episodes.entries()) {
        const replayed = (await env.reset(i, undefined, { episode })) as ResetResult;
        expect(replayed.info.episode).toEqual(episode);
      }
    });

    test(`${name}: an episode drawn by seed replays to the same first observation`, async () => {
      const env = await valEnv(await shipped(configName));
      for (const seed of [1, 2, 3]) {
        const drawn = (await env.reset(seed)) as ResetResult;
        const replayed = (await env.reset(seed, undefined, { episode: drawn.info.episode! })) as ResetResult;
        expect(replayed.observation).toBe(drawn.observation);
        expect(replayed.info.instruction).toBe(drawn.info.instruction);
      }
    });
  }

  test('each suite file is what scripts/build_suites.ts makes of it', async () => {
    for (const [name, builder] of Object.entries(BUILDERS)) {
      const made = `${(await builder(host)).map(episodeKey).join('\n')}\n`;
      expect(made).toBe(readFileSync(join(ROOT, 'suites', `${name}.jsonl`), 'utf8'));
    }
    expect(Object.keys(BUILDERS).sort()).toEqual(Object.keys(BUILTIN_SUITES).sort());
  }, 60_000);

  test("the shipped configs' training never plays a FrozenLake or Sokoban suite episode", async () => {
    for (const [name, configName] of [TARGETS[0], TARGETS[1]]) {
      const config = await shipped(configName);
      const trained = await trainingEpisodeKeys(config, host);
      // RL's stream alone is max_steps batches of groups
      expect(trained.size).toBeGreaterThan(1000);
      expect(loadSuite(name).episodes.filter((e) => trained.has(episodeKey(e)))).toEqual([]);
    }
  }, 120_000);

  test("sokoban/v2's rooms are held-out layouts, which sokoban_compact's training envs never draw, whatever the seed", async () => {
    expect(loadSuite('sokoban/v2').episodes.every((episode) => isHeldOutLayout(roomOf(episode)))).toBe(true);
    const config = await shipped('sokoban_compact');
    const envOf = async (tag: string) => {
      const custom = config.custom_envs[tag]!;
      const plugin = await host.resolveEnv(custom.env_type);
      return new plugin.env(plugin.config.parse(custom.env_config), host.envContext());
    };
    const heldOut = async (tag: string) => {
      const env = await envOf(tag);
      let count = 0;
      for (let seed = 0; seed < 2000; seed++) if (isHeldOutLayout(roomOf(((await env.reset(seed)) as ResetResult).info.episode!))) count++;
      return count / 2000;
    };
    for (const tag of config.train_env_manager.tags) expect(await heldOut(tag)).toBe(0);
    // the task's own rooms: about one in eight is a held-out layout
    expect(await heldOut(config.val_env_manager.tags[0]!)).toBeGreaterThan(0.05);
  });

  test("frozen_lake/v2's maps are held out, which a training env with hold_out_maps never draws, whatever the seed", async () => {
    expect(loadSuite('frozen_lake/v2').episodes.every((episode) => isHeldOutMap(lakeOf(episode)))).toBe(true);
    const config = await shipped('agentic');
    const heldOut = async (tag: string) => {
      const custom = config.custom_envs[tag]!;
      const plugin = await host.resolveEnv(custom.env_type);
      const env = new plugin.env(plugin.config.parse(custom.env_config), host.envContext());
      let count = 0;
      for (let seed = 0; seed < 2000; seed++) if (isHeldOutMap(lakeOf(((await env.reset(seed)) as ResetResult).info.episode!))) count++;
      return count / 2000;
    };
    expect(await heldOut('FrozenLakeTrain')).toBe(0);
    // the task's own lakes, which validation draws by seed: about one map in eight is held out
    expect(await heldOut('FrozenLake')).toBeGreaterThan(0.08);
    // nor does a seed's training without it, by the suite's construction for the shipped seed
    const trained = await trainingEpisodeKeys(await shipped('agentic', ['custom_envs.FrozenLakeTrain.env_config.hold_out_maps=false']), host);
    expect(loadSuite('frozen_lake/v2').episodes.filter((e) => trained.has(episodeKey(e)))).toEqual([]);
  }, 60_000);

  test("the calculator's training never asks a suite question", async () => {
    const config = await shipped('calculator');
    const suite = new Set(loadSuite('tool_use/v1').episodes.map((e) => e.question));
    const resets = (await trainingResets(config, host)).slice(0, 3000);
    const asked = await episodesOf(config, host, config.train_env_manager.tags[0]!, resets);
    expect(asked.filter((e) => suite.has(e.question))).toEqual([]);
    expect(loadRows('arithmetic/train', ROOT).filter((row) => suite.has(row.question))).toEqual([]);
  }, 60_000);

  test("WebShop's training never asks for a product of a suite goal (ROLL's recipe and the compact one)", async () => {
    const held = new Set(loadSuite('webshop/v1').episodes.map((e) => e.asin));
    for (const name of ['webshop', 'webshop_compact']) {
      const config = await shipped(name);
      expect(config.val_suite).toBe('webshop/v1');
      const resets = (await trainingResets(config, host)).slice(0, 2000);
      const asked = await episodesOf(config, host, config.train_env_manager.tags[0]!, resets);
      expect(asked.filter((e: SuiteEpisode) => held.has(e.asin as string))).toEqual([]);
    }
  }, 60_000);

  test('validation replays the suite: the group episode of rank r gets entry r', async () => {
    const config = await shipped('agentic');
    const manager = await EnvManager.build('val', config, host);
    const plan = manager.plan(config.val_batch_size);
    expect(plan.map((g) => g.episode)).toEqual(loadSuite('frozen_lake/v2').episodes.slice(0, config.val_batch_size));
    // the next validation plays the same ones
    expect(manager.plan(config.val_batch_size).map((g) => g.episode)).toEqual(plan.map((g) => g.episode));
    const train = await EnvManager.build('train', config, host);
    expect(train.plan(config.rollout_batch_size).every((g) => g.episode === undefined)).toBe(true);
    await manager.close();
    await train.close();
  });

  test('a suite that is unknown, for another env, or too short for a validation is a one-line ConfigError', async () => {
    await expect(shipped('agentic', ['val_suite=frozen_lake/v9'])).rejects.toThrow(
      "val_suite: no suite 'frozen_lake/v9' (known: frozen_lake/v1, frozen_lake/v2, sokoban/v1, sokoban/v2, tool_use/v1, webshop/v1)",
    );
    await expect(shipped('agentic', ['val_suite=sokoban/v1'])).rejects.toThrow(
      "val_suite: sokoban/v1 is played by sokoban envs, but val_env_manager's tag FrozenLake is a frozen_lake env",
    );
    await expect(shipped('agentic', ['val_batch_size=256', 'val_env_manager.num_env_groups=256'])).rejects.toThrow(
      'val_batch_size: 256 trajectories are 256 groups, but frozen_lake/v2 has 200 episodes',
    );
  });

  test('an entry an env cannot read is a one-line error', async () => {
    const lake = await valEnv(await shipped('agentic'));
    expect(() => lake.reset(0, undefined, { episode: { map: ['SF', 'FF'] } })).toThrow('the map needs exactly one S and one G');
    expect(() => lake.reset(0, undefined, { episode: { room: [] } })).toThrow('frozen_lake: cannot replay the episode');
    const room = await valEnv(await shipped('sokoban_compact'));
    expect(() => room.reset(0, undefined, { episode: { map: ['SG'] } })).toThrow('sokoban: cannot replay the episode');
    const shop = await valEnv(await shipped('webshop'));
    expect(() => shop.reset(0, undefined, { episode: { ...loadSuite('webshop/v1').episodes[0], asin: 'B000000000' } })).toThrow(
      'product B000000000 is not in the shipped catalog',
    );
  });
});
