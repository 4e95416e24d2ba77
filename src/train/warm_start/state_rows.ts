/**
 * The warm start's state rows: episodes played straight on each env of train_env_manager, with
 * rows taught from every state they pass through: the env's state questions with its answers,
 * and with warm_start.think the action row (the env's notes in <think> tags, then the move). Each
 * row's prompt is, token for token, all the rollout gives the policy at that state (TurnPrompts:
 * traj's whole chat so far, the env's tools, the step history), since the episode is walked as the
 * rollout's RandomPolicy or SolutionPolicy plays it; every env call goes through the guard.
 * The moves are the env's random ones, or its worked solution (worked examples with notes). A
 * seated env's game is walked seat by seat, as the rollout's games are (seated_episode.ts).
 */
import { AGENT_PLAYER, type AgenticConfig, type CustomEnvConfig, PAST_PLAYER, POLICY_PLAYER } from '../../config/schema';
import { hashSeed, Rng } from '../../engine/rng';
import { ConfigError } from '../../errors';
import type { PluginHost } from '../../host/plugin_host';
import type { GuardedEnv, GuardedReset } from '../../sdk/guarded_env';
import type { EnvPlugin, SeatedResetResult, SeatedStepResult } from '../../sdk/types';
import { hasWarmStartHook } from '../../sdk/warm_start_hooks';
import type { ChatFormat } from '../../rollout/chat';
import { entryEnv } from '../../rollout/entry_env';
import { episodeLimits } from '../../rollout/env_manager';
import { type EpisodeLimits, playedTurn } from '../../rollout/episode_record';
import { envActionTokens } from '../../rollout/policy';
import { rotatedPlayers } from '../../rollout/seat_players';
import { advanceTurnState, TurnPrompts, type TurnState } from '../../rollout/turn_prompt';
import type { Turn } from '../../rollout/types';

/** Which episodes stateRows plays, and what their rows teach. */
export interface StateRowsOptions {
  /** Names the seed stream of the episodes: the warm start's own, or a rehearsal step's. */
  stream: ReadonlyArray<string | number>;
  episodes: number;
  /** Learn only the reading: an action row's loss covers its <think> notes, not the random move. */
  readingOnly: boolean;
  /** A random episode's action rows show the env's solution move from each state instead (warm_start.solution_labels). */
  solutionLabels: boolean;
  /**
   * Whose actions are played: the env's random ones, or its worked solution (worked examples with
   * notes, kept only when the episode ends solved). Where the run has worked examples, a random
   * episode that happens to solve its task is left out: the base sees no solutions but theirs.
   */
  actions: 'random' | 'solution';
}

/** What stateRows gives: the rows, and how many state questions, episodes and worked examples they hold. */
export interface StateRowsResult {
  ids: Int32Array[];
  masks: Uint8Array[];
  questions: number;
  played: number;
  worked: number;
}

/**
 * The rows of the episodes stateRows plays, as they are played: an episode's rows wait until it
 * ends, since whether it solved its task decides whether they are kept.
 */
class EpisodeRows implements StateRowsResult {
  readonly ids: Int32Array[] = [];
  readonly masks: Uint8Array[] = [];
  questions = 0;
  played = 0;
  worked = 0;
  private waitingIds: Int32Array[] = [];
  private waitingMasks: Uint8Array[] = [];

  /** `solving`: worked-solution episodes, kept only when solved; `dropSolved`: random episodes that solve their task are left out. */
  constructor(
    private readonly chat: ChatFormat,
    private readonly solving: boolean,
    private readonly dropSolved: boolean,
  ) {}

  /** A row: the prompt, then the response and the end-of-turn token, learned whole or only its <think> notes. */
  push(prompt: readonly number[], response: string, learned: 'all' | 'notes' = 'all'): void {
    const { chat } = this;
    const responseIds = chat.tokenizer.encode(response, { addSpecialTokens: false });
    const row = Int32Array.from([...prompt, ...responseIds, chat.stopTokenIds[0]!]);
    const mask = new Uint8Array(row.length);
    const notes = learned === 'notes' ? tokensCovering(responseIds, response.indexOf('</think>') + '</think>'.length, chat, response) : null;
    if (learned === 'notes' && notes === null) return;
    mask.fill(1, prompt.length, notes === null ? row.length : prompt.length + notes);
    this.waitingIds.push(row);
    this.waitingMasks.push(mask);
  }

  endEpisode(solved: boolean): void {
    this.played += 1;
    if (this.solving ? solved : !(this.dropSolved && solved)) {
      this.ids.push(...this.waitingIds);
      this.masks.push(...this.waitingMasks);
      if (this.solving) this.worked += 1;
    }
    this.waitingIds = [];
    this.waitingMasks = [];
  }
}

/** One tag's env and what its episodes are played with. */
interface StateEpisodes {
  config: AgenticConfig;
  options: StateRowsOptions;
  tag: string;
  custom: CustomEnvConfig;
  /** The tag's rank in train_env_manager.tags (it seeds the question draws). */
  rank: number;
  env: GuardedEnv;
  prompts: TurnPrompts;
  chat: ChatFormat;
  /** The rollout's limits (train): a move is cut to the tokens it allows, and a prompt must leave room. */
  limits: EpisodeLimits;
  /** The env has stateQuestions(). */
  asks: boolean;
  rows: EpisodeRows;
}

/**
 * Rows played straight on each env: per state, `state_questions` of the env's state questions
 * (the prompt with the question after it, the env's answer as the response), and with `think` the
 * action row itself, its response the env's notes on the state in <think> tags and then the move.
 * Each row's prompt is all the rollout's policy is given at that turn (TurnPrompts: traj's chat so
 * far, the tools, the step history). Envs without the methods give none. A plugin that throws costs its episode,
 * not the stage.
 */
export async function stateRows(config: AgenticConfig, host: PluginHost, chat: ChatFormat, options: StateRowsOptions): Promise<StateRowsResult> {
  const { think } = config.warm_start;
  const solving = options.actions === 'solution';
  const rows = new EpisodeRows(chat, solving, !solving && !options.readingOnly && config.warm_start.worked_examples > 0);
  if (config.warm_start.state_questions === 0 && !think) return rows;
  const manager = config.train_env_manager;
  const context = host.envContext();
  for (const [rank, tag] of manager.tags.entries()) {
    const custom = config.custom_envs[tag]!;
    const plugin = await host.resolveEnv(custom.env_type);
    if (think) requireNotes(custom, tag, plugin);
    // a misbehaving plugin loses the rest of its episode (the guard reports the failure); the others still teach
    const env = entryEnv(plugin, custom, context, `env ${tag}`);
    const asks = hasWarmStartHook(plugin.env.prototype, 'stateQuestions');
    const prompts = new TurnPrompts(custom, chat);
    const played: StateEpisodes = { config, options, tag, custom, rank, env, prompts, chat, limits: episodeLimits(config, 'train'), asks, rows };
    const episodes = Math.ceil(options.episodes / manager.tags.length);
    for (let episode = 0; episode < episodes; episode++) await playStateEpisode(played, episode);
    await env.close();
  }
  return rows;
}

/** warm_start.think teaches notes on the current state: the env must write them, and its prompts must hold that state alone. */
function requireNotes(custom: CustomEnvConfig, tag: string, plugin: EnvPlugin): void {
  if (custom.env_manager_cls !== 'step' || custom.history_length !== 0) {
    throw new ConfigError(
      `warm_start.think: custom_envs.${tag} must be step-wise with history_length 0 (the prompts the notes are taught on hold only the current state)`,
    );
  }
  if (!hasWarmStartHook(plugin.env.prototype, 'stateNotes')) {
    throw new ConfigError(`warm_start.think: env ${custom.env_type} (custom_envs.${tag}) has no stateNotes(), so there is nothing to teach in <think>`);
  }
}

/** A state-row episode so far, kept as the rollout's episode keeps it, so its prompts show the same history. */
type StateWalk = TurnState & { observations: string[]; turns: Turn[] };

/**
 * One seat of a state-row episode (one agent facing an env is one seat), kept as the rollout keeps
 * it (seated_episode.ts): its own instruction, view and turns. `opponent`: the env opponent that
 * answers for it without a prompt; otherwise it plays the warm start's actions from its prompts,
 * and `teaches` where its turns are the policy's in RL (policy and agent seats; a past self, whose
 * snapshots do not exist yet, moves unrecorded).
 */
interface WalkSeat {
  walk: StateWalk;
  opponent: string | null;
  teaches: boolean;
}

/** The episode's seats after its reset: the first to move holds the reset's observation. */
function walkSeats(played: StateEpisodes, reset: GuardedReset & { failure: null }, episode: number): { seats: WalkSeat[]; first: number } {
  const { custom, env } = played;
  const spec = env.seats;
  const seated = spec ? (reset as unknown as SeatedResetResult) : null;
  const players = spec ? rotatedPlayers(custom, spec, { groupId: 0, episodeId: episode }) : [POLICY_PLAYER];
  const seats = players.map(
    (player, seat): WalkSeat => ({
      walk: {
        step: 0,
        instruction: seated ? seated.instructions[seat]! : reset.info.instruction,
        observation: '',
        suffix: reset.info.suffix ?? '',
        observations: [],
        turns: [],
        toolResults: null,
        ...(Array.isArray(reset.info.tools) ? { tools: reset.info.tools } : {}),
      },
      opponent: player === POLICY_PLAYER || player === PAST_PLAYER || player === AGENT_PLAYER ? null : player,
      teaches: player === POLICY_PLAYER || player === AGENT_PLAYER,
    }),
  );
  const first = seated ? seated.seat : 0;
  seats[first]!.walk.observation = reset.observation;
  seats[first]!.walk.observations.push(reset.observation);
  return { seats, first };
}

/**
 * Episode `episode` of the tag's env, played as the rollout plays it with RandomPolicy or
 * SolutionPolicy: each state's rows on the prompt the rollout gives there, then the move (cut to
 * the tokens the rollout allows, the env given their text) to the next state, until the env ends
 * the episode or a seat has played max_steps. A seated env's seats move in the env's turn order,
 * each from its own prompts, as in the rollout's games.
 */
async function playStateEpisode(played: StateEpisodes, episode: number): Promise<void> {
  const { config, options, tag, custom, env, prompts, chat, limits } = played;
  const rng = Rng.fromSeed(config.seed, ...options.stream, played.rank, episode);
  const reset = await env.reset(hashSeed(config.seed, ...options.stream, tag, episode));
  if (reset.failure) return;
  const { seats, first } = walkSeats(played, reset, episode);
  let solved = false;
  for (let mover = first; ; ) {
    const { walk: state, opponent, teaches } = seats[mover]!;
    if (state.step >= custom.max_steps) break;
    let responseText: string;
    let asked: { promptIds: number[]; tokens: number[] } | null = null;
    if (opponent !== null) {
      const answer = await env.opponentAction(opponent);
      if (answer.failure) break;
      responseText = answer.response;
    } else {
      const promptIds = prompts.turnIds(state);
      const contextIds = prompts.contextIds(state, promptIds);
      // a prompt that leaves no room ends the rollout's episode (context_full); the warm start still
      // teaches the state (an existing test holds rows of prompts longer than sequence_length), and
      // cuts the move only where the rollout would
      const room = limits.sequenceLength - contextIds.length;
      const move = teaches ? await rowsOfState(played, state, contextIds, rng) : await warmStartAction(played);
      if (move === null) break;
      const tokens = envActionTokens(chat, move, Math.min(custom.max_tokens_per_step, limits.maxNewTokens, room > 0 ? room : Infinity));
      responseText = chat.responseText(tokens);
      asked = { promptIds, tokens };
    }
    const result = await env.step(responseText);
    // a failed step comes back truncated, never solved
    if (result.terminated || result.truncated) {
      solved = result.terminated && Number(result.info.metrics.success) === 1;
      break;
    }
    if (asked) state.turns.push(playedTurn(state, asked.promptIds, { tokens: asked.tokens, logProbs: asked.tokens.map(() => 0) }, responseText, result));
    state.step += 1;
    if (env.seats) mover = (result as unknown as SeatedStepResult).seat;
    advanceTurnState(seats[mover]!.walk, result);
  }
  played.rows.endEpisode(solved);
}

/** The warm start's move from the current state: the env's worked solution or its random action; null when the env failed. */
async function warmStartAction({ options, env }: StateEpisodes): Promise<string | null> {
  const action = options.actions === 'solution' ? await env.solutionAction() : await env.sampleRandomAction();
  return action.failure ? null : action.response;
}

/**
 * One state's rows, on `contextIds` (all the rollout's policy is given at this turn): `state_questions`
 * of the env's questions (the question after the turn's user message, the env's answer as the
 * response), and with think the action row (the env's notes in <think> tags, then the move).
 * Returns the move to play on, or null when the env failed (the episode ends).
 */
async function rowsOfState(played: StateEpisodes, state: TurnState, contextIds: readonly number[], rng: Rng): Promise<string | null> {
  const { config, options, env, prompts, asks, rows } = played;
  if (asks) {
    const stated = await env.stateQuestions();
    if (stated.failure) return null;
    const asked = rng.shuffle([...stated.value]).slice(0, config.warm_start.state_questions);
    for (const { question, answer } of asked) rows.push(prompts.contextIds(state, prompts.turnIds(state, question)), answer);
    rows.questions += asked.length;
  }
  const action = await warmStartAction(played);
  if (action === null) return null;
  if (config.warm_start.think) {
    const notes = await env.stateNotes();
    if (notes.failure) return null;
    const label = options.solutionLabels ? await env.solutionLabel() : null;
    if (label?.failure) return null;
    // the episode goes on with the random move; a labelled row shows the solution's move from here
    if (label?.value) rows.push(contextIds, `<think>${notes.value}</think>${label.value}`);
    else rows.push(contextIds, `<think>${notes.value}</think>${action}`, options.readingOnly || label ? 'notes' : 'all');
  }
  return action;
}

/**
 * How many leading response tokens it takes to cover the first `chars` characters of the response:
 * where the notes end. The token holding `</think>`'s last character may run on into the answer's
 * tag (`><`), which is format, never the move. Null when the tokens do not spell the response.
 */
function tokensCovering(ids: readonly number[], chars: number, chat: ChatFormat, response: string): number | null {
  let text = '';
  for (let i = 0; i < ids.length; i++) {
    text += chat.tokenizer.decode([ids[i]!], { skipSpecialTokens: false });
    if (text.length >= chars) return response.startsWith(text) ? i + 1 : null;
  }
  return null;
}
