/**
 * What every episode records, whoever plays it (an env turn by turn, episode.ts, or an outside
 * agent, agent_episode.ts): the task it was given, its limits, its ids, the state hashes GiGPO
 * anchors on, and its metrics.
 */
import { createHash } from 'node:crypto';
import { ConfigError } from '../errors';
import { aggregateMetric } from '../sdk/env_contract';
import type { GuardedEnv, GuardedStep } from '../sdk/guarded_env';
import type { CustomEnvConfig, SessionMismatchAction } from '../config/schema';
import type { EpisodeDraw, MetricAgg, MetricValue, SuiteEpisode } from '../sdk/types';
import type { EnvManagerKind } from '../config/schema';
import type { ChatFormat } from './chat';
import type { Policy } from './policy';
import type { EndReason, Episode, RolloutMode, Turn } from './types';

export interface EpisodeTask {
  mode: RolloutMode;
  tag: string;
  envId: number;
  groupId: number;
  episodeId: number;
  seed: number;
  /** The episode's place in its tag's stream of episodes (env_manager.ts); absent: reset by the seed alone. */
  draw?: EpisodeDraw;
  /** The suite episode it replays (val_suite), the seed then seeding only its randomness. */
  episode?: SuiteEpisode;
}

export interface EpisodeLimits {
  /** generating_args.max_new_tokens of the rollout. */
  maxNewTokens: number;
  /** Most ids in a trajectory (traj) or in one step's prompt and response (step). */
  sequenceLength: number;
  /** The run's seed: with the task it seeds each turn's sampling stream. */
  runSeed: number;
  /** The rollout's sampling (generating_args), which an outside agent's calls are sampled with. */
  temperature: number;
  topP: number;
  /** What an outside agent's call that does not extend its session costs (gateway.on_mismatch). */
  onMismatch: SessionMismatchAction;
}

/** What one episode is played with, an env's or an outside agent's. */
export interface EpisodePlay {
  env: GuardedEnv;
  custom: CustomEnvConfig;
  task: EpisodeTask;
  limits: EpisodeLimits;
  policy: Policy;
  chat: ChatFormat;
}

/**
 * The turn a step played, as the episode records it: the observation answered, this turn's new
 * ids, the response's ids and log-probs, the text the env was given, and what the env said of it.
 */
export function playedTurn(
  { observation }: { observation: string },
  promptIds: number[],
  response: { tokens: number[]; logProbs: number[] },
  responseText: string,
  result: GuardedStep,
): Turn {
  return {
    observation,
    promptIds,
    responseIds: response.tokens,
    logProbs: response.logProbs,
    responseText,
    reward: result.reward,
    action: result.info.action,
    actionDesc: result.info.actionDesc,
    metrics: result.info.metrics,
    metricsAgg: result.info.metricsAgg ?? {},
    stateHash: stateHash(observation),
    ...(result.info.reward_error === undefined ? {} : { rewardError: result.info.reward_error }),
  };
}

export function stateHash(observation: string): string {
  return createHash('sha256').update(observation).digest('hex');
}

export function trajGroupId(task: EpisodeTask): string {
  return `${task.tag}_${task.groupId}_${task.episodeId}_${task.seed}`;
}

/**
 * The env's per-turn metrics reduced over the episode (each by its metricsAgg, default mean;
 * booleans count as 0/1), plus what the rollout knows: num_actions, and 0/1 flags timed_out,
 * context_full and env_failure, and infer_failure where a `remote` policy (inference servers)
 * answered, the only kind that can fail so.
 */
export function episodeMetrics(turns: readonly Pick<Turn, 'metrics' | 'metricsAgg'>[], endReason: EndReason, remote = false): Record<string, number> {
  const series = new Map<string, { values: number[]; agg: MetricAgg }>();
  for (const turn of turns) {
    for (const [name, value] of Object.entries(turn.metrics) as Array<[string, MetricValue]>) {
      const entry = series.get(name) ?? { values: [], agg: 'mean' };
      entry.values.push(typeof value === 'boolean' ? Number(value) : value);
      entry.agg = turn.metricsAgg[name] ?? entry.agg;
      series.set(name, entry);
    }
  }
  const metrics: Record<string, number> = {};
  for (const [name, { values, agg }] of series) metrics[name] = aggregateMetric(values, agg);
  metrics.num_actions = turns.length;
  metrics.timed_out = Number(endReason === 'timeout');
  metrics.context_full = Number(endReason === 'context_full');
  metrics.env_failure = Number(endReason === 'env_failure');
  if (remote) metrics.infer_failure = Number(endReason === 'infer_failure');
  return metrics;
}

/** How an episode went, as its player saw it; recordEpisode adds the ids and the totals. */
export interface EpisodeOutcome {
  kind: EnvManagerKind;
  instruction: string;
  turns: Turn[];
  finalObservation: string;
  endReason: EndReason;
  failure: string | null;
  /** A remote policy (inference servers) answered: the episode carries infer_failure. */
  remote: boolean;
  /** performance.now() when the episode started. */
  started: number;
}

/** How an episode ended, with one line about a failure or a timeout (else null). */
export type EpisodeEnding = Pick<EpisodeOutcome, 'endReason' | 'failure'>;

/** The episode record of `task`: its ids, its turns, and what they add up to. */
export function recordEpisode(task: EpisodeTask, outcome: EpisodeOutcome): Episode {
  const id = trajGroupId(task);
  const { kind, instruction, turns, finalObservation, endReason, failure } = outcome;
  return {
    mode: task.mode,
    kind,
    tag: task.tag,
    envId: task.envId,
    groupId: task.groupId,
    episodeId: task.episodeId,
    seed: task.seed,
    ...(task.draw === undefined ? {} : { draw: task.draw }),
    ...(task.episode === undefined ? {} : { suiteEpisode: task.episode }),
    trajGroupId: id,
    trajId: `${id}_${task.envId}`,
    instruction,
    turns,
    finalObservation,
    endReason,
    score: turns.reduce((sum, t) => sum + t.reward, 0),
    failure,
    metrics: episodeMetrics(turns, endReason, outcome.remote),
    responseTokens: turns.reduce((sum, t) => sum + t.responseIds.length, 0),
    seconds: (performance.now() - outcome.started) / 1000,
  };
}

/** A turn whose env said its action changed nothing (action_is_effective: false). */
function ineffective(turn: Pick<Turn, 'metrics'>): boolean {
  const effective = turn.metrics.action_is_effective;
  return effective === false || effective === 0;
}

/** The prices training puts on wasted moves (ineffective_action_penalty, revisit_penalty; config/schema.ts). */
export interface MovePrices {
  ineffective_action_penalty: number;
  revisit_penalty: number;
}

/**
 * Training's episodes under the move prices: each turn's reward gains ineffective_action_penalty
 * where its env said its action changed nothing, and revisit_penalty where the observation it led
 * to is one the episode had already shown (its own included: a move into a wall); its episode's
 * score gains them all. Under ineffective_action_penalty, a tag none of whose turns say either way
 * is refused: the key would price nothing there.
 */
export function pricedMoves(episodes: readonly Episode[], prices: MovePrices): Episode[] {
  const { ineffective_action_penalty: stuck, revisit_penalty: back } = prices;
  if (stuck === 0 && back === 0) return [...episodes];
  if (stuck !== 0) {
    for (const tag of new Set(episodes.map((e) => e.tag))) {
      const turns = episodes.filter((e) => e.tag === tag).flatMap((e) => e.turns);
      if (turns.length > 0 && !turns.some((t) => 'action_is_effective' in t.metrics)) {
        throw new ConfigError(
          `ineffective_action_penalty: custom_envs.${tag}'s env reports no action_is_effective, so no move is known to have changed nothing`,
        );
      }
    }
  }
  return episodes.map((episode) => {
    const shown = new Set<string>();
    let added = 0;
    const turns = episode.turns.map((turn, i) => {
      shown.add(turn.observation);
      const next = episode.turns[i + 1]?.observation ?? episode.finalObservation;
      const price = (ineffective(turn) ? stuck : 0) + (shown.has(next) ? back : 0);
      added += price;
      return price === 0 ? turn : { ...turn, reward: turn.reward + price };
    });
    return added === 0 ? episode : { ...episode, turns, score: episode.score + added };
  });
}
