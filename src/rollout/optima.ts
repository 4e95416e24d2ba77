/**
 * The optimum of the episodes an evaluation played, for envs whose class computes it
 * (EvaluationHooks.optimalSuccess): the best policy's success probability from each episode's
 * start within its entry's max_steps. One env per tag is reset the way the episode was (seed,
 * draw, suite episode) and asked; a start met again (a group's copies, another pass) is asked
 * once. Envs without the hook give none, and the held-out result then reports no optimum.
 */
import type { AgenticConfig } from '../config/schema';
import type { PluginHost } from '../host/plugin_host';
import type { GuardedEnv } from '../sdk/guarded_env';
import { entryEnv } from './entry_env';
import type { Episode } from './types';

/** `episodes` with their optimum where their env computes one; `info` says why none could be had, if a call failed. */
export async function withOptima(
  config: AgenticConfig,
  host: PluginHost,
  episodes: readonly Episode[],
  info: (line: string) => void = () => {},
): Promise<Episode[]> {
  const optima = new Map<Episode, number>();
  for (const tag of new Set(episodes.map((e) => e.tag))) {
    const found = await optimaOfTag(
      config,
      host,
      tag,
      episodes.filter((e) => e.tag === tag),
    );
    if (typeof found === 'string') {
      info(`no optimum: ${found}`);
      return [...episodes];
    }
    for (const [episode, optimum] of found) optima.set(episode, optimum);
  }
  return episodes.map((e) => (optima.has(e) ? { ...e, optimum: optima.get(e)! } : e));
}

/** The optimum of each episode of `tag`: none where its env has no hook, or the one-line reason a call failed. */
async function optimaOfTag(config: AgenticConfig, host: PluginHost, tag: string, episodes: readonly Episode[]): Promise<Map<Episode, number> | string> {
  const custom = config.custom_envs[tag]!;
  const env = entryEnv(await host.resolveEnv(custom.env_type), custom, host.envContext(), `env ${tag}`);
  const optima = new Map<Episode, number>();
  if (!env.hasOptimum) return optima;
  const byStart = new Map<string, number>();
  try {
    for (const episode of episodes) {
      const start = JSON.stringify([episode.seed, episode.draw ?? null, episode.suiteEpisode ?? null]);
      let optimum = byStart.get(start);
      if (optimum === undefined) {
        const asked = await optimumOf(env, episode, custom.max_steps);
        if (typeof asked === 'string') return asked;
        byStart.set(start, (optimum = asked));
      }
      optima.set(episode, optimum);
    }
    return optima;
  } finally {
    await env.close();
  }
}

/** The optimum of the episode's start, or the failure's one-line reason. */
async function optimumOf(env: GuardedEnv, episode: Episode, maxSteps: number): Promise<number | string> {
  const reset = await env.reset(episode.seed, episode.draw, episode.suiteEpisode ? { episode: episode.suiteEpisode } : undefined);
  if (reset.failure) return reset.failure.reason;
  const optimum = await env.optimalSuccess(maxSteps);
  return optimum.failure ? optimum.failure.reason : optimum.value;
}
