/**
 * An env manager (train_env_manager or val_env_manager): `num_env_groups x group_size`
 * environments built from custom_envs, the groups split over `tags` by `num_groups_partition`.
 *
 * Seeds: every environment of a group plays the same episode id, and an episode's seed is a hash
 * of (run seed, mode, tag, group, episode id), so a group starts from one state and GRPO-style
 * statistics compare like with like. Training groups advance through fresh episode ids step by
 * step; validation starts again from episode 0 at each evaluation, so every evaluation plays the
 * same maps and curves compare like with like (ROLL's validation keeps advancing instead).
 *
 * A batch of B trajectories is B / group_size whole groups: round r gives the next episode to
 * groups 0, 1, ... until enough groups have one, so which episodes make a batch never depends on
 * which env happens to finish first.
 *
 * Draws: the episodes of one tag form a stream, numbered in that order across steps (draw d is
 * the sum of the tag's group counters before the batch, plus its rank in the batch), and reset
 * gets the number with the stream's seed. An env reading a dataset reads row after row in seeded
 * epochs by it (plugins/epochs.ts), so the checkpoint's episode counters say which row is next,
 * and a validation (counters back at 0) plays draws 0 .. val_batch_size/group_size - 1.
 *
 * With val_suite, validation's group episode of rank r replays the suite's episode r instead
 * (reset's options.episode), with the seed above for its randomness: every validation, every run,
 * plays the suite's first val_batch_size/group_size episodes.
 */
import { isHttpProxy, type AgenticConfig, type CustomEnvConfig, type EnvManagerConfig, type GeneratingConfig } from '../config/schema';
import { hashSeed } from '../engine/rng';
import { AgenticError } from '../errors';
import type { Qwen2Model } from '../model/qwen2';
import type { SamplingParams } from '../model/sampling';
import { ANSWER_OPENING } from '../sdk/answer';
import type { GuardedEnv } from '../sdk/guarded_env';
import type { PluginHost } from '../host/plugin_host';
import type { EnvContext, EnvPlugin, EpisodeDraw, SuiteEpisode } from '../sdk/types';
import { loadSuite, type Suite } from '../config/suites';
import type { ChatFormat } from './chat';
import { stopGateway } from './agent_episode';
import { entryEnv } from './entry_env';
import { playEpisode } from './episode';
import { type PastOpponents, type PastOpponentSource, seatPlays } from './seat_players';
import { playSeatedEpisode } from './seated_episode';
import { type EpisodeLimits, type EpisodeTask, type MovePrices, pricedMoves } from './episode_record';
import { rolloutMetrics, type RolloutTiming } from './metrics';
import { HttpPolicy, serverSampling } from './http_policy';
import { ModelPolicy, RandomPolicy, type Policy } from './policy';
import { InferenceServers } from './servers';
import { episodeSamples } from './samples';
import { loadSeatAgent, type SeatAgentModule } from './seat_agent';
import type { Episode, RolloutBatch, RolloutMode } from './types';

export interface EnvSlot {
  envId: number;
  groupId: number;
  tag: string;
  custom: CustomEnvConfig;
  env: GuardedEnv;
  /** The outside agent of the tag's agent seats (seat_agent), loaded at build; null without one. */
  seatAgent: SeatAgentModule | null;
}

export function managerOf(config: AgenticConfig, mode: RolloutMode): EnvManagerConfig {
  return mode === 'train' ? config.train_env_manager : config.val_env_manager;
}

/** The sampling settings of a rollout: the manager's own, else actor_infer's. */
export function generatingArgs(config: AgenticConfig, mode: RolloutMode): GeneratingConfig {
  return managerOf(config, mode).generating_args ?? config.actor_infer.generating_args;
}

/** The sampler's settings for generating_args. */
export function samplingParams(gen: GeneratingConfig): SamplingParams {
  const params: SamplingParams = { temperature: gen.temperature, topP: gen.top_p, topK: gen.top_k, doSample: gen.do_sample };
  return gen.answer_temperature === null ? params : { ...params, opening: { ...ANSWER_OPENING, temperature: gen.answer_temperature } };
}

export function managerName(mode: RolloutMode): 'train_env_manager' | 'val_env_manager' {
  return mode === 'train' ? 'train_env_manager' : 'val_env_manager';
}

/** `config` with `mode`'s manager answered by another proxy (a command's --policy, a checkpoint played here). */
export function withProxyType(config: AgenticConfig, mode: RolloutMode, type: EnvManagerConfig['llm_proxy']['proxy_type']): AgenticConfig {
  const key = managerName(mode);
  const manager = config[key];
  return { ...config, [key]: { ...manager, llm_proxy: { ...manager.llm_proxy, proxy_type: type } } };
}

/** The inference servers a manager's llm_proxy names (sglang, openai), not yet connected; null for the other proxies. */
export function proxyServers(config: AgenticConfig, mode: RolloutMode): InferenceServers | null {
  const proxy = managerOf(config, mode).llm_proxy;
  return isHttpProxy(proxy.proxy_type) ? new InferenceServers(proxy.proxy_type, proxy.proxy_config, managerName(mode)) : null;
}

export interface PolicyOptions {
  /** Decode greedily whatever generating_args say (ReMax's baseline rollouts). */
  greedy?: boolean;
  /** The connected servers of an HTTP proxy (proxyServers, then connect()). */
  servers?: InferenceServers | null;
}

/**
 * The policy a manager's llm_proxy names; `model` is required for the `policy` proxy, the
 * servers for sglang and openai.
 *
 * A model policy keeps each env's keys and values between turns; they are only valid for the
 * weights that computed them, so make a new policy after every weight update.
 */
export function makePolicy(config: AgenticConfig, mode: RolloutMode, model: Qwen2Model | null, chat: ChatFormat, options: PolicyOptions = {}): Policy {
  const type = managerOf(config, mode).llm_proxy.proxy_type;
  if (type === 'random') return new RandomPolicy(chat);
  const gen = { ...generatingArgs(config, mode), ...(options.greedy ? { do_sample: false, temperature: 0 } : {}) };
  if (isHttpProxy(type)) {
    if (!options.servers) throw new AgenticError(`${managerName(mode)}: proxy_type ${type} needs its inference servers`);
    return new HttpPolicy(options.servers, { sampling: serverSampling(gen, chat.stopTokenIds) });
  }
  if (!model) throw new AgenticError(`${managerName(mode)}: the policy proxy needs a model`);
  return modelPolicy(config, gen, model, chat);
}

/** A policy of `model` in this process, sampling as `gen` says (the policy proxy; the opponent pool's snapshots). */
export function modelPolicy(config: AgenticConfig, gen: GeneratingConfig, model: Qwen2Model, chat: ChatFormat): ModelPolicy {
  return new ModelPolicy(model, chat, {
    sampling: samplingParams(gen),
    stopStrings: gen.stop_strings,
    maxRunning: config.max_running_requests,
    maxLength: config.sequence_length,
  });
}

/** Environment `envId` of `tag`, made by entryEnv (its instance is made at its first reset). */
export function guardedEnv(plugin: EnvPlugin, custom: CustomEnvConfig, context: EnvContext, tag: string, envId: number): GuardedEnv {
  return entryEnv(plugin, custom, context, `env ${tag}#${envId}`);
}

/** One group's episode of a batch: every env of the group plays it from the same seed. */
export interface GroupEpisode {
  /** Its rank in the batch. */
  order: number;
  mode: RolloutMode;
  tag: string;
  groupId: number;
  episodeId: number;
  seed: number;
  draw: EpisodeDraw;
  /** The suite episode the group replays (validation with val_suite: the batch's rank-th). */
  episode?: SuiteEpisode;
  /** The group's envs, one trajectory each. */
  envIds: number[];
}

/** The task of one env of a group episode. */
export function memberTask(group: GroupEpisode, envId: number): EpisodeTask {
  const { mode, tag, groupId, episodeId, seed, draw, episode } = group;
  return { mode, tag, envId, groupId, episodeId, seed, draw, ...(episode === undefined ? {} : { episode }) };
}

/** The limits and settings `mode`'s episodes are played under. */
export function episodeLimits(config: AgenticConfig, mode: RolloutMode): EpisodeLimits {
  const gen = generatingArgs(config, mode);
  return {
    maxNewTokens: gen.max_new_tokens,
    sequenceLength: config.sequence_length,
    runSeed: config.seed,
    temperature: gen.temperature,
    topP: gen.top_p,
    onMismatch: config.gateway.on_mismatch,
  };
}

/** An episode and the rank of its group episode in the batch. */
export interface PlayedEpisode {
  order: number;
  episode: Episode;
}

/**
 * The batch of played episodes: in the batch's order (group episodes by rank, envs by id), each
 * episode's rows with the policy version `versionOf` says played it.
 */
export function rolloutBatch(
  mode: RolloutMode,
  played: PlayedEpisode[],
  versionOf: (episode: Episode) => number,
  timing: RolloutTiming,
  prices: MovePrices,
): RolloutBatch {
  played.sort((a, b) => a.order - b.order || a.episode.envId - b.episode.envId || (a.episode.seat?.index ?? 0) - (b.episode.seat?.index ?? 0));
  const versions = played.map((p) => versionOf(p.episode));
  const episodes = played.map((p) => p.episode);
  // validation and held-out scores stay the env's own
  const scored = mode === 'train' ? pricedMoves(episodes, prices) : episodes;
  return {
    mode,
    episodes: scored,
    samples: scored.flatMap((e, i) => episodeSamples(e, versions[i])),
    metrics: rolloutMetrics(mode, scored, timing),
  };
}

export class EnvManager {
  /** The next episode id of each group. */
  private nextEpisode: number[];

  /** The inference servers of an HTTP proxy, to be connected (connect()) before a rollout; null for the other proxies. */
  readonly servers: InferenceServers | null;

  private opponentPool: PastOpponentSource | null = null;

  private constructor(
    readonly mode: RolloutMode,
    private readonly config: AgenticConfig,
    readonly slots: readonly EnvSlot[],
    readonly groupCount: number,
  ) {
    this.nextEpisode = new Array<number>(groupCount).fill(0);
    this.servers = proxyServers(config, mode);
  }

  /** Builds the manager's environments (their instances are made at their first reset). */
  static async build(mode: RolloutMode, config: AgenticConfig, host: PluginHost): Promise<EnvManager> {
    const manager = managerOf(config, mode);
    const partition = manager.num_groups_partition ?? manager.tags.map(() => manager.num_env_groups / manager.tags.length);
    const context = host.envContext();
    const slots: EnvSlot[] = [];
    let groupId = 0;
    for (const [i, tag] of manager.tags.entries()) {
      const custom = config.custom_envs[tag]!;
      const plugin = await host.resolveEnv(custom.env_type);
      const seatAgent = custom.seat_agent === null ? null : await loadSeatAgent(custom.seat_agent, host.cwd);
      for (let g = 0; g < partition[i]!; g++, groupId++) {
        for (let member = 0; member < manager.group_size; member++) {
          const envId = groupId * manager.group_size + member;
          slots.push({ envId, groupId, tag, custom, env: guardedEnv(plugin, custom, context, tag, envId), seatAgent });
        }
      }
    }
    return new EnvManager(mode, config, slots, groupId);
  }

  /** The tag each group plays. */
  private get groupTags(): string[] {
    const tags: string[] = [];
    for (const slot of this.slots) tags[slot.groupId] = slot.tag;
    return tags;
  }

  /** Draw `draw` of `tag`'s stream, with the stream's seed. */
  private drawOf(tag: string, draw: number): EpisodeDraw {
    return { draw, streamSeed: hashSeed(this.config.seed, this.mode, tag, 'draws') };
  }

  /** Draws so far of each tag (its groups' episode counters summed): where each stream stands. */
  get drawsByTag(): ReadonlyMap<string, number> {
    const drawn = new Map<string, number>();
    const tags = this.groupTags;
    tags.forEach((tag, group) => drawn.set(tag, (drawn.get(tag) ?? 0) + this.nextEpisode[group]!));
    return drawn;
  }

  /** The suite validation replays (val_suite), or null: episodes drawn by seed. */
  get suite(): Suite | null {
    return this.mode === 'val' && this.config.val_suite !== null ? loadSuite(this.config.val_suite) : null;
  }

  get groupSize(): number {
    return managerOf(this.config, this.mode).group_size;
  }

  /** Episode counters, for checkpoints. */
  get episodeCounters(): readonly number[] {
    return [...this.nextEpisode];
  }

  restoreEpisodeCounters(counters: readonly number[]): void {
    if (counters.length !== this.groupCount) throw new AgenticError(`rollout state has ${counters.length} groups, this manager ${this.groupCount}`);
    this.nextEpisode = [...counters];
  }

  /**
   * The group episodes of the next batch of `batchSize` trajectories (whole groups), in the order
   * the batch ranks them, advancing the episode counters (validation starts again from 0).
   */
  plan(batchSize: number): GroupEpisode[] {
    const groupSize = this.groupSize;
    if (batchSize % groupSize !== 0) throw new AgenticError(`a batch of ${batchSize} trajectories is not whole groups of ${groupSize}`);
    if (this.mode === 'val') this.nextEpisode.fill(0);
    const groups = batchSize / groupSize;
    const suite = this.suite;
    if (suite && groups > suite.episodes.length) throw new AgenticError(`a batch of ${groups} groups, but ${suite.name} has ${suite.episodes.length} episodes`);
    const drawn = new Map(this.drawsByTag);
    const groupTags = this.groupTags;
    const planned: GroupEpisode[] = [];
    for (let order = 0; order < groups; order++) {
      const group = order % this.groupCount;
      const tag = groupTags[group]!;
      const draw = drawn.get(tag) ?? 0;
      drawn.set(tag, draw + 1);
      const episodeId = this.nextEpisode[group]!++;
      planned.push({
        order,
        mode: this.mode,
        tag,
        groupId: group,
        episodeId,
        seed: hashSeed(this.config.seed, this.mode, tag, group, episodeId),
        draw: this.drawOf(tag, draw),
        ...(suite ? { episode: suite.episodes[order]! } : {}),
        envIds: this.slots.filter((s) => s.groupId === group).map((s) => s.envId),
      });
    }
    return planned;
  }

  /**
   * Plays `batchSize` trajectories (whole groups) with `policy`, all environments at once;
   * `policyVersion` is recorded on every sample. An env with seats plays one game per trajectory,
   * which gives a record for each seat the policy plays (self-play: two).
   */
  async collect(batchSize: number, policy: Policy, chat: ChatFormat, policyVersion = 0, past: PastOpponents | null = null): Promise<RolloutBatch> {
    // past seats outside training (the warm start's episodes) are played by the rollout's own policy
    const pastPlayers = past ?? { policyFor: () => policy };
    // episodes of each group, in the order they are played
    const plan: GroupEpisode[][] = Array.from({ length: this.groupCount }, () => []);
    for (const group of this.plan(batchSize)) plan[group.groupId]!.push(group);
    const limits = episodeLimits(this.config, this.mode);
    const before = policy.stats();
    const started = performance.now();
    const played: PlayedEpisode[] = [];
    await Promise.all(
      this.slots.map(async (slot) => {
        for (const group of plan[slot.groupId]!) {
          const task = memberTask(group, slot.envId);
          const seats = slot.env.seats;
          if (seats === null) played.push({ order: group.order, episode: await playEpisode(slot.env, slot.custom, task, limits, policy, chat) });
          else {
            const plays = seatPlays(slot.custom, seats, group, pastPlayers, slot.seatAgent);
            for (const episode of await playSeatedEpisode(slot.env, slot.custom, task, limits, policy, chat, plays))
              played.push({ order: group.order, episode });
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const after = policy.stats();
    return rolloutBatch(this.mode, played, () => policyVersion, { seconds, generatedTokens: after.generatedTokens - before.generatedTokens }, this.config);
  }

  /**
   * `batchSize` trajectories played by a fresh policy of `model`, closed afterwards: a policy's
   * cached keys and values belong to the weights that computed them, so every batch gets its own.
   */
  async play(batchSize: number, model: Qwen2Model | null, chat: ChatFormat, policyVersion = 0): Promise<RolloutBatch> {
    const policy = makePolicy(this.config, this.mode, model, chat, { servers: this.servers });
    const past = this.opponentPool?.open(chat) ?? null;
    try {
      return await this.collect(batchSize, policy, chat, policyVersion, past);
    } finally {
      await policy.close();
      await past?.close();
    }
  }

  /** The pool whose snapshots play the past seats of this manager's games (training, ./opponent_pool.ts). */
  useOpponentPool(pool: PastOpponentSource): void {
    this.opponentPool = pool;
  }

  /** ReMax's baselines of `episodes` (below), played greedily by a fresh policy of `model` (or of the servers). */
  async greedyBaselines(episodes: readonly Episode[], model: Qwen2Model, chat: ChatFormat): Promise<Map<string, number>> {
    const policy = makePolicy(this.config, this.mode, model, chat, { greedy: true, servers: this.servers });
    try {
      return await this.baselineScores(episodes, policy, chat);
    } finally {
      await policy.close();
    }
  }

  /**
   * ReMax's baselines: each given group's episode played once more, by the group's first env,
   * with `policy` (greedy). Returns the score of each trajGroupId.
   */
  async baselineScores(episodes: readonly Episode[], policy: Policy, chat: ChatFormat): Promise<Map<string, number>> {
    const wanted = new Map<string, { groupId: number; episodeId: number; draw: EpisodeDraw | undefined }>();
    for (const e of episodes) wanted.set(e.trajGroupId, { groupId: e.groupId, episodeId: e.episodeId, draw: e.draw });
    const limits = episodeLimits(this.config, this.mode);
    const scores = new Map<string, number>();
    await Promise.all(
      [...wanted].map(async ([trajGroupId, { groupId, episodeId, draw }]) => {
        const slot = this.slots.find((s) => s.groupId === groupId)!;
        const task: EpisodeTask = {
          mode: this.mode,
          tag: slot.tag,
          envId: slot.envId,
          groupId,
          episodeId,
          seed: hashSeed(this.config.seed, this.mode, slot.tag, groupId, episodeId),
          ...(draw === undefined ? {} : { draw }),
        };
        scores.set(trajGroupId, (await playEpisode(slot.env, slot.custom, task, limits, policy, chat)).score);
      }),
    );
    return scores;
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.env.close()));
    await stopGateway();
  }
}
