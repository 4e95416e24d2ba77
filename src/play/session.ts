/**
 * One episode of `agentic play`: the rollout's own episode loop (playEpisode) on one guarded env
 * of the tag, with an observer that prints each turn as it happens. The prompt shown is decoded
 * from the very ids the policy is given, and the saved turns are the ones the rollout records.
 *
 * The episode is the validation one a rollout would play for this seed: val_env_manager's
 * generating_args, the env reset with `seed` itself (so `seed=3` always means the same map), and
 * the episode's time budget lifted while a person is in the loop.
 */
import { AGENT_PLAYER, type AgenticConfig, type CustomEnvConfig, PAST_PLAYER, POLICY_PLAYER } from '../config/schema';
import { UsageError } from '../errors';
import type { SeatSpec } from '../sdk/types';
import { configuredPlayers, type SeatPlay } from '../rollout/seat_players';
import { playSeatedEpisode } from '../rollout/seated_episode';
import { thinkTokenMask } from '../algo/think';
import type { GuardedStep } from '../sdk/guarded_env';
import type { PluginHost } from '../host/plugin_host';
import type { ChatFormat } from '../rollout/chat';
import { entryEnv } from '../rollout/entry_env';
import { episodeLimits } from '../rollout/env_manager';
import { playEpisode, type EpisodeObserver, type TurnStart } from '../rollout/episode';
import type { EpisodePlay, EpisodeTask } from '../rollout/episode_record';
import type { Policy } from '../rollout/policy';
import type { Episode, Turn } from '../rollout/types';
import { InputEnded } from './policies';
import { playRecord, type PlayedTurn, type SavedPlay } from './record';
import { episodeEndText, section, stepText, tokenTable, turnStartText } from './view';

export interface PlaySetup {
  config: AgenticConfig;
  host: PluginHost;
  tag: string;
  chat: ChatFormat;
  policy: Policy;
  /** Who answers, for the record: "you", "script FILE", "random", "model SOURCE". */
  policyLabel: string;
  /** Where the log-probs come from; null: none (no model loaded). */
  logProbs: 'sampled' | 'scored' | null;
  /** A person is in the loop: the episode's time budget (episode_timeout_s) would count their reading time. */
  untimed: boolean;
  print: (text: string) => void;
  /** Called after each turn is shown (tests watch tf's tensor count through it). */
  afterTurn?: (turn: number) => void;
  /** An env with seats: the seat `policy` plays (--seat); null: the first seat the config gives the policy. */
  seat?: string | null;
  /** An env with seats: who answers the other seats the config gives the policy (a loaded model); null: the env's random player. */
  opponent?: Policy | null;
}

export interface PlayOutcome {
  record: SavedPlay;
  /** The rollout's episode; null when the responses ran out first. */
  episode: Episode | null;
  /** The turn (1-based) at which the responses ran out, else null. */
  stoppedAt: number | null;
}

/** The episode played with `observer` watching; a seated env's game as your seat's record of it. */
async function playWatched(play: EpisodePlay, setup: PlaySetup, observer: EpisodeObserver): Promise<Episode | null> {
  const { env, custom, task, limits, policy, chat } = play;
  const spec = env.seats;
  if (!spec) return playEpisode(env, custom, task, limits, policy, chat, observer);
  const plays = seatsOfPlay(custom, spec, setup);
  setup.print(`seats: ${plays.map((p) => `${spec.names[p.seat]} ${p.recorded ? setup.policyLabel : p.player}`).join(', ')}`);
  const [yours = null] = await playSeatedEpisode(env, custom, task, limits, policy, chat, plays, observer);
  return yours;
}

/**
 * Who plays each seat of a seated env in play: `setup.policy` (you, a script, the model) the first
 * seat the config gives the policy, or the seat --seat names (whose configured player then takes
 * the policy's seat: `seats: {X: minimax}` with --seat X puts minimax in O); the config's other
 * policy seats, its past seats (a training run's pool, which play has not) and its agent seats, the opponent (a
 * loaded model) or the env's random player; the env's own players theirs. Only your seat is shown
 * and saved.
 */
function seatsOfPlay(custom: CustomEnvConfig, spec: SeatSpec, setup: PlaySetup): SeatPlay[] {
  const players = configuredPlayers(custom, spec);
  const first = players.indexOf(POLICY_PLAYER);
  const yours = setup.seat ? spec.names.indexOf(setup.seat) : first;
  if (yours === -1) throw new UsageError(`--seat ${setup.seat}: env ${custom.env_type} has seats ${spec.names.join(', ')}`);
  [players[first], players[yours]] = [players[yours]!, players[first]!];
  return players.map((player, seat) => {
    if (seat === yours) return { seat, player: POLICY_PLAYER, recorded: true, policy: setup.policy };
    if (![POLICY_PLAYER, PAST_PLAYER, AGENT_PLAYER].includes(player)) return { seat, player, recorded: false };
    return setup.opponent ? { seat, player: 'model', recorded: false, policy: setup.opponent } : { seat, player: 'random', recorded: false };
  });
}

function logProbSource(setup: PlaySetup): string {
  if (setup.logProbs === 'sampled') return 'as the model sampled them (temperature 1 when greedy)';
  if (setup.logProbs === 'scored') return 'of the loaded model for this response';
  return 'n/a (no model loaded: name one with pretrain=... or --checkpoint to score responses)';
}

export async function playSession(setup: PlaySetup): Promise<PlayOutcome> {
  const { config, tag, chat, print } = setup;
  const configured = config.custom_envs[tag]!;
  const custom = setup.untimed ? { ...configured, episode_timeout_s: Number.POSITIVE_INFINITY } : configured;
  const plugin = await setup.host.resolveEnv(custom.env_type);
  // the guard's limits on one call stay the configured budget's: a plugin that hangs is still cut
  const env = entryEnv(plugin, configured, setup.host.envContext(), `env ${tag}`);
  const task: EpisodeTask = { mode: 'val', tag, envId: 0, groupId: 0, episodeId: 0, seed: config.seed };
  const limits = episodeLimits(config, 'val');

  const decode = (ids: readonly number[]) => chat.tokenizer.decode(ids, { skipSpecialTokens: false });
  const pieces = new Map<number, string>();
  const piece = (id: number) => pieces.get(id) ?? pieces.set(id, decode([id])).get(id)!;
  const played: PlayedTurn[] = [];
  let current: TurnStart | null = null;
  let instruction = '';

  const observer: EpisodeObserver = {
    beforeTurn(start: TurnStart) {
      current = start;
      if (start.step === 0) {
        instruction = start.instruction;
        const where = decode(start.contextIds).includes(start.instruction.trim()) ? 'it is part of the prompt' : "this config's prompt leaves it out";
        print([section(`instruction (the env's; ${where})`), start.instruction].join('\n'));
      }
      print(
        turnStartText(start, {
          kind: custom.env_manager_cls,
          maxSteps: custom.max_steps,
          maxTokensPerStep: custom.max_tokens_per_step,
          decode,
          sequenceLength: config.sequence_length,
        }),
      );
      if (start.room > 0) {
        const budget = Math.min(custom.max_tokens_per_step, limits.maxNewTokens, start.room);
        print(`the response may take ${budget} tokens (a response given here is cut there, as a model's would be)`);
      }
    },
    afterTurn(turn: Turn, step: GuardedStep) {
      const toolCalls = Array.isArray(step.info.tool_calls) ? (step.info.tool_calls as unknown[]) : null;
      played.push({ turn, toolCalls });
      const think = config.think_credit ? null : thinkTokenMask(Int32Array.from(turn.responseIds), new Uint8Array(turn.responseIds.length).fill(1), piece);
      print(stepText(turn, step));
      print(tokenTable({ ids: turn.responseIds, logProbs: setup.logProbs ? turn.logProbs : null, logProbSource: logProbSource(setup), think, piece }));
      setup.afterTurn?.(played.length);
    },
  };

  let episode: Episode | null = null;
  let stoppedAt: number | null = null;
  try {
    episode = await playWatched({ env, custom, task, limits, policy: setup.policy, chat }, setup, observer);
  } catch (error) {
    if (!(error instanceof InputEnded)) throw error;
    stoppedAt = played.length + 1;
  } finally {
    await setup.policy.close();
    await setup.opponent?.close();
    await env.close();
  }

  if (episode) print(episodeEndText(episode));
  const start = current as TurnStart | null;
  const record = playRecord({
    tag,
    seed: config.seed,
    instruction: episode?.instruction ?? instruction,
    turns: played,
    finalObservation: episode?.finalObservation ?? start?.observation ?? '',
    endReason: episode?.endReason ?? null,
    failure: episode?.failure ?? null,
    metrics: episode?.metrics ?? null,
    policy: setup.policyLabel,
    logProbs: setup.logProbs,
    stopped: stoppedAt === null ? null : `the responses ran out at turn ${stoppedAt}`,
    ...(episode?.seat ? { seat: episode.seat } : {}),
  });
  return { record, episode, stoppedAt };
}
