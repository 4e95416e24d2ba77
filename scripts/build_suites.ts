/**
 * Makes the evaluation suites (suites/<env>/<version>.jsonl) once: `bun scripts/build_suites.ts
 * [name...]` writes the named ones (all without names) that do not exist yet. The files are
 * committed and never remade; a new list is a new version. Each suite is drawn for
 * the val tag of the shipped config that names it, and holds no episode the config's training
 * plays (the RL stream over max_steps and the warm start's streams, twice over, as margin):
 *
 * - frozen_lake/v1 (configs/agentic.yaml of its day: random moves, 250 RL steps): 200 maps of the FrozenLake tag, from seeds of the
 *   suite's own stream, no map twice.
 * - frozen_lake/v2 (configs/agentic.yaml's task lakes: 4x4, p=0.8): 200 maps of the FrozenLake tag
 *   that are held out (isHeldOutMap), which training envs with hold_out_maps never draw: no seed's
 *   training plays a suite map, whatever the training config.
 * - sokoban/v1 (configs/sokoban_compact.yaml before it had worked examples): 200 rooms of the
 *   SimpleSokoban tag, the same way.
 * - sokoban/v2 (configs/sokoban_compact.yaml): 200 rooms of the SimpleSokoban tag whose walls and
 *   targets are a held-out layout (isHeldOutLayout), which its training envs never draw
 *   (hold_out_rooms): no seed's training plays a suite room's puzzle.
 * - tool_use/v1 (configs/calculator.yaml): arithmetic/val's 200 questions, none of which
 *   arithmetic/train asks.
 * - webshop/v1 (configs/webshop.yaml, and webshop_compact.yaml since): the shipped catalog's val goals whose product no train
 *   goal asks for (the train env skips val products besides: hold_out_products).
 *
 * test/config/suites.test.ts checks what this promises against the shipped configs as they are.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isHeldOutMap, lakeOf } from '../plugins/envs/frozen_lake/suite';
import { isHeldOutLayout, roomOf } from '../plugins/envs/sokoban/suite';
import { goalEpisode } from '../plugins/envs/webshop/suite';
import { openStore } from '../plugins/envs/webshop/store';
import { loadRows } from '../plugins/envs/tool_use/dataset';
import { loadConfig } from '../src/config/load';
import type { AgenticConfig, CustomEnvConfig } from '../src/config/schema';
import { hashSeed } from '../src/engine/rng';
import { PluginHost } from '../src/host/plugin_host';
import { EnvManager } from '../src/rollout/env_manager';
import type { EpisodeDraw, ResetResult, SuiteEpisode } from '../src/sdk/types';
import { writeFileAtomic } from '../src/util/atomic';

const ROOT = join(import.meta.dir, '..');
const SIZE = 200;

/** An episode's identity: its content as one JSON line. */
export const episodeKey = (episode: SuiteEpisode): string => JSON.stringify(episode);

/** One reset a run plays: the tag, its seed and draw. */
export interface PlannedReset {
  tag: string;
  seed: number;
  draw?: EpisodeDraw;
}

/**
 * The resets `config`'s training plays: RL's stream over max_steps, the warm start's state rows,
 * worked examples and random-action episodes (data.ts), each `margin` times as long.
 */
export async function trainingResets(config: AgenticConfig, host: PluginHost, margin = 1): Promise<PlannedReset[]> {
  const resets: PlannedReset[] = [];
  const planOf = async (seeded: AgenticConfig, batch: number, batches: number) => {
    const manager = await EnvManager.build('train', seeded, host);
    for (let step = 0; step < batches; step++) {
      for (const group of manager.plan(batch)) resets.push({ tag: group.tag, seed: group.seed, draw: group.draw });
    }
  };
  const train = config.train_env_manager;
  await planOf(config, config.rollout_batch_size, config.max_steps * margin);
  const warm = config.warm_start;
  if (warm.enabled) {
    const perTag = Math.ceil((warm.episodes * margin) / train.tags.length);
    for (const tag of train.tags) {
      for (let episode = 0; episode < perTag; episode++) resets.push({ tag, seed: hashSeed(config.seed, 'warm_start', 'states', tag, episode) });
    }
    const worked = warm.worked_examples * margin;
    if (worked > 0) {
      const seeded = {
        ...config,
        seed: hashSeed(config.seed, 'warm_start', 'worked'),
        train_env_manager: { ...train, group_size: 1, num_env_groups: train.tags.length, num_groups_partition: null },
      };
      await planOf(seeded, train.tags.length, Math.ceil(worked / train.tags.length));
    }
    const random = { ...config, seed: hashSeed(config.seed, 'warm_start'), train_env_manager: { ...train, group_size: 1 } };
    await planOf(random, train.num_env_groups, Math.ceil((warm.episodes * margin) / train.num_env_groups));
  }
  return resets;
}

/** Plays resets of one tag's env and returns the episodes they start, in order. */
export async function episodesOf(config: AgenticConfig, host: PluginHost, tag: string, resets: readonly PlannedReset[]): Promise<SuiteEpisode[]> {
  const custom: CustomEnvConfig = config.custom_envs[tag]!;
  const plugin = await host.resolveEnv(custom.env_type);
  const env = new plugin.env(plugin.config.parse(custom.env_config), host.envContext());
  const episodes: SuiteEpisode[] = [];
  for (const reset of resets) {
    const result = (await env.reset(reset.seed, reset.draw)) as ResetResult;
    if (!result.info.episode) throw new Error(`${custom.env_type}: reset gives no info.episode, so it cannot be in a suite`);
    episodes.push(result.info.episode);
  }
  await env.close();
  return episodes;
}

/** The episodes `config`'s training plays, by key, over all its train tags. */
export async function trainingEpisodeKeys(config: AgenticConfig, host: PluginHost, margin = 1): Promise<Set<string>> {
  const resets = await trainingResets(config, host, margin);
  const keys = new Set<string>();
  for (const tag of config.train_env_manager.tags) {
    for (const episode of await episodesOf(
      config,
      host,
      tag,
      resets.filter((r) => r.tag === tag),
    ))
      keys.add(episodeKey(episode));
  }
  return keys;
}

/**
 * `SIZE` distinct episodes of the val tag, drawn from the suite's own seeds, none of them in
 * `training` and each one `kept` allows.
 */
async function drawnSuite(
  name: string,
  config: AgenticConfig,
  host: PluginHost,
  training: Set<string>,
  kept: (episode: SuiteEpisode) => boolean = () => true,
): Promise<SuiteEpisode[]> {
  const tag = config.val_env_manager.tags[0]!;
  const chosen = new Map<string, SuiteEpisode>();
  for (let i = 0; chosen.size < SIZE; i++) {
    const [episode] = await episodesOf(config, host, tag, [{ tag, seed: hashSeed('suite', name, i) }]);
    const key = episodeKey(episode!);
    if (!training.has(key) && !chosen.has(key) && kept(episode!)) chosen.set(key, episode!);
  }
  return [...chosen.values()];
}

/** A shipped config, less its val_suite (the suite being built may be the one it names), with `overrides`. */
async function shipped(name: string, host: PluginHost, overrides: readonly string[] = []): Promise<AgenticConfig> {
  return (await loadConfig({ configName: name, overrides: ['val_suite=null', ...overrides] }, host)).config;
}

/** Suite `name` drawn for a shipped config's val tag (`overrides` give the config of its day), none of its training episodes in it. */
async function drawnFor(
  name: string,
  host: PluginHost,
  configName: string,
  overrides: readonly string[],
  kept?: (episode: SuiteEpisode) => boolean,
): Promise<SuiteEpisode[]> {
  const config = await shipped(configName, host, overrides);
  return drawnSuite(name, config, host, await trainingEpisodeKeys(config, host, 2), kept);
}

/** How each suite was made, by name (test/config/suites.test.ts checks that each file is what its builder makes). */
export const BUILDERS: Record<string, (host: PluginHost) => Promise<SuiteEpisode[]>> = {
  // the config as it was: 250 RL steps, 1024 random-move episodes, no worked examples, training lakes of 30% holes
  'frozen_lake/v1': (host) =>
    drawnFor('frozen_lake/v1', host, 'agentic', [
      'max_steps=250',
      'warm_start.episodes=1024',
      'warm_start.worked_examples=0',
      'custom_envs.FrozenLakeTrain.env_config.p=0.7',
      'custom_envs.FrozenLakeTrain.env_config.hold_out_maps=false',
    ]),
  // held-out maps only, of the task's lakes (pinned: 4x4, p=0.8); with hold_out_maps the training plays none of them
  'frozen_lake/v2': (host) =>
    drawnFor(
      'frozen_lake/v2',
      host,
      'agentic',
      [
        'custom_envs.FrozenLake.env_config.size=4',
        'custom_envs.FrozenLake.env_config.p=0.8',
        'custom_envs.FrozenLake.env_config.hold_out_maps=false',
        'custom_envs.FrozenLakeTrain.env_config.hold_out_maps=true',
      ],
      (episode) => isHeldOutMap(lakeOf(episode)),
    ),
  // the config as it was: random moves, no worked examples, 600 RL steps, every layout in training
  'sokoban/v1': (host) =>
    drawnFor('sokoban/v1', host, 'sokoban_compact', [
      'warm_start.worked_examples=0',
      'max_steps=600',
      'train_env_manager.tags=[SokobanNear,SimpleSokoban]',
      'custom_envs.SokobanNear.env_config.hold_out_rooms=false',
    ]),
  // held-out layouts only, which the shipped config's training envs never draw (hold_out_rooms)
  'sokoban/v2': (host) => drawnFor('sokoban/v2', host, 'sokoban_compact', [], (episode) => isHeldOutLayout(roomOf(episode))),
  'tool_use/v1': async () => {
    const trainQuestions = new Set(loadRows('arithmetic/train', ROOT).map((r) => r.question));
    return loadRows('arithmetic/val', ROOT)
      .filter((row) => !trainQuestions.has(row.question))
      .map((row) => ({ ...row }));
  },
  'webshop/v1': async () => {
    const goals = openStore(null, ROOT).catalog.goals;
    const trainAsins = new Set(goals.filter((g) => g.split === 'train').map((g) => g.asin));
    return goals.filter((g) => g.split === 'val' && !trainAsins.has(g.asin)).map(goalEpisode);
  },
};

/** Writes the named suites; one that exists already stays as it is (a shipped suite never changes). */
async function build(names: readonly string[]): Promise<void> {
  const host = new PluginHost(ROOT);
  for (const name of names) {
    const builder = BUILDERS[name];
    if (!builder) throw new Error(`no suite '${name}' to build (known: ${Object.keys(BUILDERS).join(', ')})`);
    const file = join(ROOT, 'suites', `${name}.jsonl`);
    if (existsSync(file)) {
      console.log(`suites/${name}.jsonl exists: a shipped suite never changes, so it is left as it is`);
      continue;
    }
    const episodes = await builder(host);
    writeFileAtomic(file, `${episodes.map(episodeKey).join('\n')}\n`);
    console.log(`suites/${name}.jsonl: ${episodes.length} episodes`);
  }
}

if (import.meta.main) {
  try {
    await build(process.argv.length > 2 ? process.argv.slice(2) : Object.keys(BUILDERS));
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exit(2);
  }
}
