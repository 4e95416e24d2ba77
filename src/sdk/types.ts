/**
 * The plugin contracts: environments, reward functions and tools. A plugin module's default
 * export is one definition made with `defineEnv`, `defineReward` or `defineTool` (or a list of
 * them). These types are the documentation; keep them exact.
 */
import type { z } from 'zod';
import type { PythonSandboxMode } from '../sandbox/modes';
import type { RgbFrame } from '../util/png';
import type { OpenAiTool } from './function_calls';
import type { McpServerConfig } from './mcp/servers';

// ---------------------------------------------------------------------------------------------
// Environments (Gymnasium-like, text in and text out)

/** How a per-step metric is reduced over an episode. */
export type MetricAgg = 'sum' | 'mean' | 'min' | 'max' | 'last' | 'first';

export type MetricValue = number | boolean;

export interface ResetInfo {
  /** The task, as the first prompt shows it before the first observation ('' for none). */
  instruction: string;
  /** Function calling: the tools the chat template lists in the system message (OpenAI function definitions). */
  tools?: readonly OpenAiTool[];
  /** Text that follows the observation in a turn's prompt (`{suffix}` in templates), as GEM's envs give it: "Enter your next guess." */
  suffix?: string;
  /**
   * What the episode is, as an evaluation suite lists it (the map, the room, the question): an
   * env that can replay episodes gives it, and reset(seed, draw, {episode}) with it plays the
   * same episode again.
   */
  episode?: SuiteEpisode;
  [key: string]: unknown;
}

/** One episode of an evaluation suite (suites/<env>/<version>.jsonl): plain JSON, in its env's own form. */
export type SuiteEpisode = Readonly<Record<string, unknown>>;

/** reset()'s options, as Gymnasium's `reset(seed, options)`. */
export interface ResetOptions {
  /**
   * Play this episode (a suite entry, in the form ResetInfo.episode gives) instead of drawing
   * one by the seed, which then seeds only the episode's randomness (slips, random actions). An
   * env that cannot replay episodes, or cannot read this one, throws a one-line error.
   */
  episode?: SuiteEpisode;
}

export interface ResetResult {
  observation: string;
  info: ResetInfo;
}

export interface StepInfo {
  /**
   * Per-step metrics, e.g. success, action_is_valid, action_is_effective, format_penalty.
   * Names are snake_case: they become `env/<tag>/<name>` in the logs.
   */
  metrics: Record<string, MetricValue>;
  /** How each metric aggregates over the episode; metrics not listed use `mean`. */
  metricsAgg?: Record<string, MetricAgg>;
  /** A sentence about what the action did, for logs and step-wise prompts. */
  actionDesc?: string;
  /** The action the env parsed from the response, or null if it could not parse one. */
  action?: string | null;
  /** Function calling: the outputs of the tools the response called, shown to the policy as tool messages. */
  tool_results?: readonly string[];
  /** Text that follows the next observation in the next prompt (`{suffix}`), as ResetInfo.suffix. */
  suffix?: string;
  /**
   * The reward function could not score this step (it threw, returned no number, or its judge was
   * down), in one line naming it; the step's reward is then the env's fallback (0). The rollout
   * counts the episode as failed (reward_error) and shows this line in the step's report.
   */
  reward_error?: string;
  [key: string]: unknown;
}

export interface StepResult {
  observation: string;
  reward: number;
  /** The episode reached a terminal state (goal, failure). */
  terminated: boolean;
  /** The episode was cut short (a step limit) before a terminal state. */
  truncated: boolean;
  info: StepInfo;
}

export type RenderMode = 'text' | 'rgb';

/** An RGB picture: `data` holds width*height*3 bytes, row by row from the top left. */
export type { RgbFrame };

/**
 * An episode's place in its env manager's stream of episodes of one tag (reset's second
 * argument): draws 0, 1, 2, ... run on across groups, steps and resumes; validation restarts at 0.
 * An env that reads rows of a dataset reads them in epochs with it (readRowAt): every row once
 * per epoch, each epoch in its own order seeded by `streamSeed`.
 */
export interface EpisodeDraw {
  draw: number;
  streamSeed: number;
}

/**
 * An environment. The host never calls it out of order: reset() comes before step(), render()
 * and sampleRandomAction(), and no step() follows the step that ended the episode (terminated or
 * truncated) until the next reset(). The guard every caller goes through (GuardedEnv in
 * src/sdk/guarded_env.ts, like Gymnasium's OrderEnforcing wrapper) enforces that order, so an
 * env need not check it.
 */
export interface Env {
  /**
   * Starts an episode. The same seed (and draw) gives the same initial state, on every machine.
   * `draw` is given when an env manager plays the episode; without it, pick by the seed alone.
   * `options.episode` replays a suite's episode instead (ResetOptions).
   */
  reset(seed: number, draw?: EpisodeDraw, options?: ResetOptions): ResetResult | Promise<ResetResult>;
  /**
   * Applies the policy's raw response text. An unparseable response is an invalid action: the
   * state stays (or the episode ends, as in GEM's games), the reward is the configured format
   * penalty, and the metrics say so.
   */
  step(response: string): StepResult | Promise<StepResult>;
  /** 'text' returns the state as text; 'rgb' a picture, or null if the env has none. */
  render(mode: RenderMode): string | RgbFrame | null;
  close(): void | Promise<void>;
  /** A well-formed response with a random valid action (for smoke tests and env checks). */
  sampleRandomAction(): string;
}

/**
 * Optional extras an env class may implement besides Env (`class Lake implements Env,
 * WarmStartHooks`), each on its own: they teach the warm start's base model, and RL never calls
 * them. They are methods of the class (the warm start looks them up there before it builds an
 * instance), synchronous, and called like the others only during an episode.
 */
export interface WarmStartHooks {
  /**
   * Questions about the current state with their correct responses ("Where is the goal?"), which
   * the warm start (warm_start.state_questions) uses to teach reading the state. They must never
   * say which action is good.
   */
  stateQuestions?(): readonly StateQuestion[];
  /**
   * The current state read out in a few words (`goal 2 below 1 east; holes Down`), which the warm
   * start (warm_start.think) teaches the policy to write inside <think> tags before each answer.
   * A reading of the state, never advice on the move.
   */
  stateNotes?(): string;
  /**
   * A correct response for the current state, from what the env knows of the solution (a dataset
   * row's worked solution), or null where it has none. The warm start (warm_start.worked_examples)
   * plays whole episodes with it to make worked examples; nothing else calls it.
   */
  solutionAction?(): string | null;
}

/**
 * An optional extra an env class may implement besides Env (`class Lake implements Env,
 * EvaluationHooks`): what the best policy could score, so an evaluation reads its success against
 * the episodes' optimum rather than against 1. `agentic eval` calls it right after reset(), once
 * per episode it scored (synchronous, like the warm-start hooks); training never calls it.
 */
export interface EvaluationHooks {
  /**
   * The probability that the best policy succeeds (its success metric ends at 1) from the current
   * state within `maxSteps` more actions (the custom_envs entry's max_steps) and whatever turn
   * limit the env sets itself: a number in [0, 1], exact, not estimated by play (FrozenLake's is
   * value iteration over its own dynamics, 0 or 1 on ice that does not slip).
   */
  optimalSuccess?(maxSteps: number): number;
}

// ---------------------------------------------------------------------------------------------
// Environments with seats (two or more players in one episode: self-play, opponents)

/** A seat's result when the game ends. */
export type SeatOutcome = 'win' | 'draw' | 'loss';

/** What a seated env's plugin declares (defineSeatedEnv): fixed per plugin, read before any instance is built. */
export interface SeatSpec {
  /** The seats in the env's own order (TextArena's player ids 0, 1, ...), as prompts and configs name them: ['X', 'O']. At least 2, unique. */
  readonly names: readonly string[];
  /** Every finished game's returns sum to 0 (`agentic plugins check` holds it to that). */
  readonly zeroSum: boolean;
  /** The env's own players, which its class plays through OpponentHooks.opponentAction(name); 'random' (sampleRandomAction) is always there and is not listed. */
  readonly opponents: readonly string[];
}

/** reset() of a seated env: `observation` is what the first mover sees. */
export interface SeatedResetResult extends ResetResult {
  /** The seat that moves first. */
  seat: number;
  /** Each seat's task as its first prompt shows it, by seat, naming the seat ("You are Player 1 (O) ..."); `info.instruction` is the rules as a person reads them. */
  instructions: readonly string[];
}

/** step() of a seated env: the mover's response applied. */
export interface SeatedStepResult extends StepResult {
  /** The seat to move next, and `observation` is its view; on the step that ends the game, the seat that moved. */
  seat: number;
  /** Every seat's reward for this move, by seat; `reward` repeats the mover's. */
  rewards: readonly number[];
  /** On the step that ends the game, each seat's result; absent, it is read from the returns (the highest wins, all equal is a draw). */
  outcome?: readonly SeatOutcome[];
}

/**
 * An env with seats (`class TicTacToe implements SeatedEnv, OpponentHooks`): step(response) applies
 * the response of the seat to move. A response it cannot read costs that seat its turn (its reward
 * the format penalty, no other seat's reward changed) or the game (it ends with that seat's outcome
 * 'loss'), as the env's rules say. sampleRandomAction() and solutionAction() answer for the seat to move.
 */
export interface SeatedEnv extends Env {
  reset(seed: number, draw?: EpisodeDraw, options?: ResetOptions): SeatedResetResult | Promise<SeatedResetResult>;
  step(response: string): SeatedStepResult | Promise<SeatedStepResult>;
}

/** An optional extra of a seated env: its own players (a solver where the game has one). Synchronous, called only during a game. */
export interface OpponentHooks {
  /** A well-formed response of opponent `name` (one of SeatSpec.opponents) for the seat to move. */
  opponentAction(name: string): string;
}

/**
 * An env whose episodes an outside agent plays (the built-in `agent` env, docs/agents.md). After
 * reset() the host opens a gateway session and calls runAgent() with it; the agent calls the
 * policy through the session's OpenAI-compatible base URL, and every call is recorded as the
 * episode's turns. What runAgent() returns (the agent's final output) goes to step() as JSON text,
 * `{"answer": ..., "reward"?: ...}`, which scores it and ends the episode; anything else that
 * runAgent() returns fails the episode, with a line saying what it returned and what is taken.
 */
export interface AgentEpisodes {
  runAgent(session: AgentSession): Promise<AgentOutput>;
}

/** An outside agent's final output: its answer, or its answer with a reward of its own (a finite number). */
export type AgentOutput = string | { answer: string; reward?: number };

export interface AgentSession {
  /** What the agent uses as OPENAI_BASE_URL: the gateway's /v1 for this episode. */
  baseUrl: string;
  /** What the agent uses as OPENAI_API_KEY: it identifies the episode. */
  apiKey: string;
  /** The model name the gateway answers to. */
  model: string;
  /** Date.now() by which the agent must be done; later calls are refused. */
  deadline: number;
  /** Aborted when the episode's time is up: stop the agent. */
  signal: AbortSignal;
}

/** The name of one warm-start hook. */
export type WarmStartHook = keyof WarmStartHooks;

export interface StateQuestion {
  question: string;
  /** The whole correct response, in the env's answer form (e.g. `<answer>row 2, column 3</answer>`). */
  answer: string;
}

/**
 * What the host hands an environment besides its config: the other plugins it may use by name
 * (built-ins, and users' plugins loaded through the `plugins:` key), and where relative data
 * paths in its config are resolved from.
 */
export interface EnvContext {
  /** A tool plugin by registered name; throws a one-line PluginError naming unknown tools. */
  tool(name: string): ToolPlugin;
  /**
   * A reward by reference: its registered name, or `{name, ...settings}` for a reward that takes
   * settings (RewardReference). What comes back is bound to those settings (validated, defaults
   * filled): call its score(input) alone. Throws a one-line PluginError naming an unknown reward
   * or the bad setting.
   */
  reward(reference: string | { name: string; [setting: string]: unknown }): RewardPlugin;
  /** The folder that relative file paths in env_config are read from (the run's working folder). */
  readonly cwd: string;
  /** The run's MCP connections: the servers its env configs name, opened before an env is built. */
  readonly mcp: McpServers;
  /** How runPython contains model-written code in this run (the config's python_sandbox): pass it as runPython's `sandbox`. */
  readonly pythonSandbox: PythonSandboxMode;
}

/** A tool as an MCP server lists it. */
export interface ListedTool {
  name: string;
  description: string;
  /** The JSON schema of its arguments, as the server listed it. */
  inputSchema: { [key: string]: unknown };
}

/** One opened MCP server: the tools it lists, and calls to them. */
export interface McpServer {
  readonly tools: readonly ListedTool[];
  /** Calls a tool; a server that is gone throws ToolServerLost. */
  call(name: string, args: unknown, signal: AbortSignal): Promise<ToolOutput>;
}

/**
 * A run's MCP connections (McpPool): one per distinct server config, shared by the envs that name
 * it, owned by the run that opened them and closed when it ends.
 */
export interface McpServers {
  /** Opens each server that is not open, or whose connection died. */
  connect(servers: readonly McpServerConfig[]): Promise<void>;
  /** An opened server (alive or dead); throws when it was never opened. */
  connected(server: McpServerConfig): McpServer;
}

export interface EnvClass<C> {
  new (config: C, context: EnvContext): Env;
}

export interface EnvPlugin<S extends z.ZodType = z.ZodType> {
  readonly kind: 'env';
  /** Registry name, snake_case: what `env_type:` names. */
  readonly name: string;
  /** One line, shown by `agentic plugins`. */
  readonly description: string;
  /** Schema of `env_config`; its defaults fill what a config leaves out. */
  readonly config: S;
  /** The environment class; it receives the validated `env_config`. */
  readonly env: EnvClass<z.output<S>>;
  /** Optional, for envs that read a dataset in epochs: the rows of one epoch (what max_epochs counts). */
  readonly epochRows?: (config: z.output<S>, context: EnvContext) => number;
  /** The seats of an env with more than one player (defineSeatedEnv); absent for one agent facing an env. */
  readonly seats?: SeatSpec;
}

// ---------------------------------------------------------------------------------------------
// Reward functions

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface RewardInput {
  /** The policy's final response text. */
  response: string;
  /** The whole conversation, tool observations included. */
  trajectory: readonly ChatMessage[];
  /** The dataset row the episode was built from ({question, answer, ...}). */
  row: Readonly<Record<string, unknown>>;
}

/**
 * A score, or a score with extra metrics that are logged beside it. Strings are notes for the
 * logs; the note `reward_error` says the reward could not judge (a judge server that is down): the
 * env reports it as it reports a reward that throws, and keeps the metrics that came with it.
 */
export type RewardOutput = number | { reward: number; [metric: string]: MetricValue | string };

export interface RewardPlugin<S extends z.ZodType = z.ZodType> {
  readonly kind: 'reward';
  readonly name: string;
  readonly description: string;
  /**
   * Schema of the reward's settings, for an env config that names it as `{name, ...settings}`;
   * checked at start-up, its defaults fill what is left out. Without one the reward takes none.
   */
  readonly config?: S;
  /**
   * Runs model-written code through runPython. A run that uses it (an env's config names it)
   * checks the Python sandbox at start-up: bwrap must work, unless python_sandbox=unconfined.
   */
  readonly sandboxed?: boolean;
  /**
   * Scores one sample. `settings` are the validated settings; left out, the schema's defaults (a
   * reward from EnvContext.reward is already bound to its settings and takes no second argument).
   */
  score(input: RewardInput, settings?: z.output<S>, context?: RewardContext): RewardOutput | Promise<RewardOutput>;
}

/** What the run hands a reward besides its input: how runPython contains code (default bwrap). */
export interface RewardContext {
  readonly pythonSandbox: PythonSandboxMode;
}

// ---------------------------------------------------------------------------------------------
// Tools

/** What a caller gives a tool's call: the time limit, as a signal. */
export interface ToolCall {
  /** Aborted when the call runs out of time; long-running tools should stop. */
  signal: AbortSignal;
}

/** What a tool plugin's call receives: the caller's signal, and the run's settings a tool needs. */
export interface ToolContext extends ToolCall {
  /** How runPython contains model-written code in this run (the config's python_sandbox): pass it as runPython's `sandbox`; absent, bwrap. */
  pythonSandbox?: PythonSandboxMode;
}

/** What the policy sees as the tool's observation, optionally with extras for the logs. */
export type ToolOutput = string | { observation: string; info?: Record<string, unknown> };

export interface ToolPlugin<P extends z.ZodObject = z.ZodObject> {
  readonly kind: 'tool';
  readonly name: string;
  readonly description: string;
  /** The arguments; also rendered as the JSON schema shown to the policy. */
  readonly parameters: P;
  /** Whether a call ends the episode (like an `answer` tool). */
  readonly terminal?: boolean;
  /**
   * Runs model-written code through runPython. A run that uses it (an env's config names it)
   * checks the Python sandbox at start-up: bwrap must work, unless python_sandbox=unconfined.
   */
  readonly sandboxed?: boolean;
  call(args: z.output<P>, context: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/** What a check of a call's arguments found: the arguments to call with, or the problems (`path: message` each). */
export type ToolArgsCheck = { ok: true; args: unknown } | { ok: false; problems: string[] };

/**
 * A tool as an env offers it to the policy, whatever serves it: a tool plugin (pluginTool) or an
 * MCP server (the `{mcp: ...}` entries of `tools:`). toolsFromConfig makes them from an env's
 * `tools:` list; the env shows `schema` in its tool list and runs calls through check() and call().
 */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** The arguments as JSON schema: what the policy's tool list shows, as it is. */
  readonly schema: { [key: string]: unknown };
  /** The parameter a plain-text input goes to: the only required one, when it is a string. */
  readonly textParameter: string | null;
  /** Whether a call ends the episode (like an `answer` tool). */
  readonly terminal: boolean;
  check(args: unknown): ToolArgsCheck;
  /**
   * Runs the tool with checked arguments. A throw is the tool's error, for the policy to see;
   * a ToolServerLost (its MCP server died) is the env's, and costs the episode.
   */
  call(args: unknown, context: ToolCall): Promise<ToolOutput>;
}

export type PluginDefinition = EnvPlugin | RewardPlugin | ToolPlugin;
export type PluginKind = PluginDefinition['kind'];
export type PluginOfKind<K extends PluginKind> = { env: EnvPlugin; reward: RewardPlugin; tool: ToolPlugin }[K];
