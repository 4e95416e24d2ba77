/**
 * `agentic render`: plays validation episodes (as `agentic eval` does) or replays saved ones, and
 * writes render_save_dir: an animated GIF per episode for envs that draw pictures, a transcript
 * per episode for every env, episodes.json, and a self-contained report.html with the run's
 * learning curves and the rendered episodes' metrics.
 */
import type { AgenticConfig } from '../config/schema';
import type { PluginHost } from '../host/plugin_host';
import type { SavedEpisode } from '../render/episodes_file';
import { UsageError } from '../errors';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log, out } from './log';

const POLICIES = ['model', 'random'] as const;
/** Episodes played when --episodes is not given (rounded up to whole validation groups). */
export const DEFAULT_EPISODES = 8;

function positiveCount(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`--episodes: expected a whole number of at least 1, got '${text}'`);
  return value;
}

const RENDER_FOOTER = `${OVERRIDES_HELP}

WHAT IT WRITES (into render_save_dir, default <output_dir>/render, replaced whole)
  report.html        learning curves (<logging_dir>/metrics.jsonl), metrics per tag, every episode
  episodes/*.gif     one animation per episode of envs that draw pictures (FrozenLake, Sokoban)
  episodes/*.txt     one transcript per episode, every env
  episodes.json      the episodes, replayable with --trajectories

EXAMPLES
  agentic render --config-name frozen_lake --policy random
  agentic render --config-name frozen_lake pretrain=output/agentic/model --episodes 16
  agentic render --config-name frozen_lake --trajectories output/render/episodes.json render_save_dir=output/render2`;

export default command(
  {
    meta: { name: 'render', description: 'Render validation episodes to GIFs, transcripts and a self-contained HTML report' },
    args: {
      ...configArgs,
      episodes: {
        type: 'string',
        valueHint: 'N',
        description: `Episodes to play (default ${DEFAULT_EPISODES}, in whole val_env_manager groups); with --trajectories, at most N of the file's (default all)`,
      },
      policy: {
        type: 'string',
        valueHint: 'model|random',
        description: "model: actor_infer's model, or the inference servers the config names (default); random: each env's random actions, no model",
      },
      trajectories: { type: 'string', valueHint: 'file', description: "Replay saved episodes (a JSON array, as a render's episodes.json) instead of playing" },
      ...overridesArg,
    },
    async run({ args }) {
      const overrides = overridesFrom(args._);
      if (args.policy !== undefined) {
        if (!POLICIES.includes(args.policy as (typeof POLICIES)[number]))
          throw new UsageError(`--policy: expected one of ${POLICIES.join(', ')}, got '${args.policy}'`);
        if (args.trajectories !== undefined) throw new UsageError('--policy: --trajectories replays saved responses, so there is no policy to choose');
        if (args.policy === 'random') overrides.push('val_env_manager.llm_proxy.proxy_type=random');
      }
      if (args.trajectories === '') throw new UsageError("option '--trajectories' needs a value");
      const requested = args.episodes === undefined ? null : positiveCount(args.episodes);
      const { loadConfig } = await import('../config/load');
      const { PluginHost } = await import('../host/plugin_host');
      const { checkRenderFolder } = await import('../render/folder');
      const host = new PluginHost();
      const loaded = (await loadConfig(configRequest(args, overrides), host)).config;
      const { withPlugins } = await import('./start_up');
      return withPlugins(loaded, host, async (run) => {
        let config = loaded;
        if (args.policy === 'model' && config.val_env_manager.llm_proxy.proxy_type === 'random') {
          const { withProxyType } = await import('../rollout/env_manager');
          config = withProxyType(config, 'val', 'policy');
        }
        const { resolve } = await import('node:path');
        if (config.render_save_dir === null)
          throw new UsageError('render_save_dir: null, so there is no folder to render to; give one with render_save_dir=DIR');
        // before playing, so minutes of play never end in a refusal to write
        checkRenderFolder(resolve(config.render_save_dir));
        return renderWith(config, run, args.trajectories, requested);
      });
    },
  },
  RENDER_FOOTER,
);

/** `agentic render` once its config is settled and its plugins started. */
async function renderWith(config: AgenticConfig, host: PluginHost, trajectories: string | undefined, requested: number | null): Promise<number> {
  const { checkPythonSandbox } = await import('./sandbox_check');
  const { renderToFolder } = await import('../render/folder');
  const warn = (line: string) => log.warn(line);
  const args = { trajectories };

  let episodes: SavedEpisode[];
  let source: string;
  if (args.trajectories !== undefined) {
    const { readEpisodesFile } = await import('../render/episodes_file');
    const all = readEpisodesFile(args.trajectories);
    all.forEach((episode, i) => {
      if (!config.custom_envs[episode.tag]) {
        const defined = Object.keys(config.custom_envs);
        throw new UsageError(
          `${args.trajectories}: episode ${i + 1}: tag '${episode.tag}' is not in this config's custom_envs (defined: ${defined.join(', ') || 'none'}); pass the config the episodes were played with`,
        );
      }
    });
    episodes = requested === null ? all : all.slice(0, requested);
    // replaying steps the envs again, so their tools run again
    await checkPythonSandbox(config, host, { tags: [...new Set(episodes.map((e) => e.tag))], warn });
    source = `${episodes.length} episode${episodes.length === 1 ? '' : 's'} replayed from ${args.trajectories}.`;
    log.info(`replaying ${episodes.length} saved episode(s) from ${args.trajectories}`);
  } else {
    const groupSize = config.val_env_manager.group_size;
    const count = requested ?? Math.ceil(DEFAULT_EPISODES / groupSize) * groupSize;
    if (count % groupSize !== 0) throw new UsageError(`--episodes: ${count} is not whole groups of val_env_manager.group_size (${groupSize})`);
    if (config.val_env_manager.tags.length === 0)
      throw new UsageError('val_env_manager.tags: no validation environments to play; name at least one entry of custom_envs');
    await checkPythonSandbox(config, host, { tags: config.val_env_manager.tags, warn });
    const { evaluate } = await import('../rollout/evaluate');
    const { savedEpisodeOf } = await import('../render/episodes_file');
    const result = await evaluate(config, host, (line) => log.info(line), count);
    episodes = result.batch.episodes.map(savedEpisodeOf);
    const who =
      result.json.policy === 'random' ? 'random actions' : `the model ${result.json.model}${result.json.backend === null ? '' : ` on ${result.json.backend}`}`;
    source = `${episodes.length} validation episode${episodes.length === 1 ? '' : 's'} played by ${who} (seed ${config.seed}).`;
  }
  const rendered = await renderToFolder(config, host, episodes, { source, info: (line) => log.info(line) });
  out(rendered.table);
  log.info(`wrote ${rendered.folder}: report.html, ${rendered.gifs} GIF(s), ${rendered.episodes} transcript(s), episodes.json`);
  return 0;
}
