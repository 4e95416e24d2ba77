/**
 * Runs an environment plugin for its caller (the rollout, the env checker) so that a broken
 * plugin costs one episode, never the run. Whatever the plugin does wrong in a call (throws,
 * never settles, returns a malformed value), the call comes back as a typed failure with a
 * one-line reason naming the env and the method; the episode is over, the instance is retired
 * (closed in the background, not awaited), and the next reset() builds a fresh instance, so no
 * half-updated state or late-settling promise of the broken one can leak into later episodes.
 *
 * Limits, honestly: a timeout is a race against a timer, so it catches a promise that never
 * settles (or settles late), but not a synchronous infinite loop: JavaScript cannot pre-empt a
 * running function in its own thread, and such a plugin blocks the process. Running envs in
 * workers would lift that, at the price of copying every observation across threads; the env
 * checker (`agentic plugins check`) is where authors find such bugs first. render(),
 * sampleRandomAction(), the warm-start hooks (stateQuestions(), stateNotes(), solutionAction()) and
 * optimalSuccess() are synchronous by contract, so they have no timeout.
 *
 * The guard also keeps the calls in order, like Gymnasium's OrderEnforcing, once for every env:
 * reset() before anything else, step() and the other calls of an episode only while it runs,
 * render() also after its end, nothing after close(). So an env need not check the order itself.
 * Misuse by the caller (step() before reset() or after the episode ended) is a bug in agentic,
 * not in the plugin, and throws an EnvStateError.
 */
import { firstLine } from '../errors';
import {
  agentOutputProblem,
  describeValue,
  renderResultProblem,
  resetResultProblem,
  seatedResetProblem,
  seatedStepProblem,
  stepResultProblem,
} from './env_contract';
import { mcpServersIn, type McpServerConfig } from './mcp/servers';
import type {
  AgentEpisodes,
  AgentOutput,
  AgentSession,
  Env,
  EnvContext,
  EvaluationHooks,
  EnvPlugin,
  OpponentHooks,
  EpisodeDraw,
  ResetOptions,
  MetricAgg,
  RenderMode,
  ResetResult,
  RgbFrame,
  SeatedResetResult,
  SeatedStepResult,
  SeatSpec,
  StateQuestion,
  StepInfo,
  StepResult,
  WarmStartHook,
} from './types';
import { hasWarmStartHook } from './warm_start_hooks';

export type EnvMethod =
  | 'constructor'
  | 'reset'
  | 'step'
  | 'render'
  | 'sampleRandomAction'
  | 'opponentAction'
  | 'runAgent'
  | WarmStartHook
  | 'optimalSuccess'
  | 'close';

export interface EnvFailure {
  /** The env method whose call failed. */
  method: EnvMethod;
  /** It threw (or rejected), did not settle within its time limit, or returned a malformed value. */
  kind: 'threw' | 'timeout' | 'malformed';
  /** One line naming the env and the method, e.g. "env 'bandit': step() threw: boom". */
  reason: string;
}

/**
 * The metric every guarded step carries: false on a normal step, true on the step that reports a
 * failure; it aggregates with `max`, so over episodes its mean is the share of failed episodes.
 * The name is reserved: a plugin's own metric of that name is overwritten.
 */
export const ENV_FAILURE_METRIC = 'env_failure';

export interface GuardOptions {
  /** How reasons name the env; default `env '<plugin name>'`. */
  label?: string;
  /** Time limit of one reset() that returns a promise, in ms (default 30 000). */
  resetTimeoutMs?: number;
  /** Time limit of one step() that returns a promise, in ms (default 30 000). */
  stepTimeoutMs?: number;
  /** Time limit of close(), in ms (default 10 000). */
  closeTimeoutMs?: number;
}

export const DEFAULT_RESET_TIMEOUT_MS = 30_000;
export const DEFAULT_STEP_TIMEOUT_MS = 30_000;
export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

export type GuardedReset = (ResetResult & { failure: null }) | { failure: EnvFailure };

/** A normal step; its metrics include `env_failure: false`. */
export interface GoodStep extends StepResult {
  failure: null;
}

/**
 * The step that reports a failure: the episode is cut short (truncated), reward 0, the last good
 * observation, and metrics `{ env_failure: true }`; `info.failure` repeats the reason for logs. A
 * seated env's failure ends the game for every seat and charges none: `rewards` all 0, `seat` the
 * seat that was to move.
 */
export interface FailedStep extends StepResult {
  terminated: false;
  truncated: true;
  reward: 0;
  info: StepInfo & { failure: string };
  failure: EnvFailure;
  seat?: number;
  rewards?: readonly number[];
}

export type GuardedStep = GoodStep | FailedStep;
/** What a call returned, or the failure that ended the episode. */
export type GuardedValue<T> = { value: T; failure: null } | { value: null; failure: EnvFailure };
export type GuardedRender = GuardedValue<string | RgbFrame | null>;
export type GuardedSample = { response: string; failure: null } | { response: null; failure: EnvFailure };

/** Where the guarded env is: no episode yet, in one, after its end, after a failure, or closed. */
export type EpisodePhase = 'idle' | 'running' | 'ended' | 'failed' | 'closed';

/** The caller used the guard out of order (a bug in the caller, not in the plugin). */
export class EnvStateError extends Error {
  override readonly name = 'EnvStateError';
}

const TIMED_OUT = Symbol('timed out');

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

function withTimeout<T>(promise: PromiseLike<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(TIMED_OUT), ms);
  });
  // race() subscribes to the plugin's promise, so a rejection after the timeout is handled (ignored)
  return Promise.race([Promise.resolve(promise), timeout]).finally(() => clearTimeout(timer));
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${+(ms / 1000).toFixed(3)} s`;
}

function thrownText(error: unknown): string {
  if (error instanceof Error) return firstLine(error) || error.name;
  return `${describeValue(error)} (not an Error)`;
}

/** An AgentOutput as step() takes it: JSON text, `{"answer": ..., "reward"?: ...}`. */
function agentOutputText(output: AgentOutput): string {
  if (typeof output === 'string') return JSON.stringify({ answer: output });
  return JSON.stringify(output.reward === undefined ? { answer: output.answer } : { answer: output.answer, reward: output.reward });
}

export class GuardedEnv {
  private instance: Env | null = null;
  private current: EpisodePhase = 'idle';
  private lastObservation = '';
  /** A seated env's seat to move (0 for others). */
  private seatToMove = 0;
  /** Bumped when an episode is abandoned, so a call that settles after it changes nothing. */
  private epoch = 0;
  private readonly label: string;
  private readonly timeouts: { reset: number; step: number; close: number };
  /** The MCP servers the config names (its tools' servers), opened before each episode. */
  private readonly mcpServers: readonly McpServerConfig[];

  /** `config` is the validated env_config (the plugin schema's output). */
  constructor(
    readonly plugin: EnvPlugin,
    private readonly config: unknown,
    private readonly context: EnvContext,
    options: GuardOptions = {},
  ) {
    this.label = options.label ?? `env '${plugin.name}'`;
    this.mcpServers = mcpServersIn(config);
    this.timeouts = {
      reset: options.resetTimeoutMs ?? DEFAULT_RESET_TIMEOUT_MS,
      step: options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
      close: options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS,
    };
  }

  get phase(): EpisodePhase {
    return this.current;
  }

  /** The seats of a seated env (EnvPlugin.seats); null for one agent facing an env. */
  get seats(): SeatSpec | null {
    return this.plugin.seats ?? null;
  }

  /** An outside agent plays this env's episodes (its class has runAgent, AgentEpisodes). */
  get playedByAgent(): boolean {
    return typeof (this.plugin.env.prototype as Partial<AgentEpisodes>).runAgent === 'function';
  }

  /**
   * Lets the outside agent play the episode (AgentEpisodes.runAgent) within the step time limit;
   * its final output comes back as the JSON text step() takes. A failure ends the episode; so does
   * an output that is not an AgentOutput, with a line saying what it was and what is taken.
   */
  async runAgent(session: AgentSession): Promise<GuardedValue<string>> {
    this.expectPhase('runAgent', ['running']);
    const env = this.instance as Env & Partial<AgentEpisodes>;
    const called = await this.call(
      'runAgent',
      () => (typeof env.runAgent === 'function' ? env.runAgent(session) : Promise.reject(new Error('the env has no runAgent()'))),
      this.timeouts.step,
      () => null,
    );
    if (called.failure) return called;
    // not "a malformed result": an agent's author reads what their agent returned, and what to return
    const problem = agentOutputProblem(called.value);
    if (problem) return { value: null, failure: this.fail('runAgent', 'malformed', `returned ${problem}`) };
    return { value: agentOutputText(called.value as AgentOutput), failure: null };
  }

  /**
   * Starts an episode, building a fresh instance first when there is none (or the last one
   * failed). The MCP servers the config names are opened first (a dead one reopened), within the
   * reset's time limit: a server that cannot start fails the episode like the constructor.
   */
  async reset(seed: number, draw?: EpisodeDraw, options?: ResetOptions): Promise<GuardedReset> {
    this.expectPhase('reset', ['idle', 'running', 'ended', 'failed']);
    if (this.mcpServers.length > 0) {
      const connected = await this.call(
        'constructor',
        () => this.context.mcp.connect(this.mcpServers),
        this.timeouts.reset,
        () => null,
      );
      if (connected.failure) return { failure: connected.failure };
    }
    if (!this.instance) {
      try {
        this.instance = new this.plugin.env(this.config, this.context);
      } catch (error) {
        return { failure: this.fail('constructor', 'threw', `threw: ${thrownText(error)}`) };
      }
    }
    const env = this.instance;
    const called = await this.call(
      'reset',
      () => (options !== undefined ? env.reset(seed, draw, options) : draw === undefined ? env.reset(seed) : env.reset(seed, draw)),
      this.timeouts.reset,
      (value) => (this.seats ? seatedResetProblem(value, this.seats) : resetResultProblem(value)),
    );
    if (called.failure) return { failure: called.failure };
    const result = called.value as ResetResult;
    this.current = 'running';
    this.lastObservation = result.observation;
    this.seatToMove = this.seats ? (result as SeatedResetResult).seat : 0;
    return { ...result, failure: null };
  }

  /** Applies a response. A failure comes back as the episode's last step (see FailedStep). */
  async step(response: string): Promise<GuardedStep> {
    this.expectPhase('step', ['running']);
    const env = this.instance!;
    const seats = this.seats;
    const mover = this.seatToMove;
    const called = await this.call(
      'step',
      () => env.step(response),
      this.timeouts.step,
      (value) => (seats ? seatedStepProblem(value, seats, mover) : stepResultProblem(value)),
    );
    if (called.failure) {
      return {
        observation: this.lastObservation,
        reward: 0,
        terminated: false,
        truncated: true,
        info: { metrics: { [ENV_FAILURE_METRIC]: true }, metricsAgg: { [ENV_FAILURE_METRIC]: 'max' }, failure: called.failure.reason },
        failure: called.failure,
        ...(seats ? { seat: mover, rewards: seats.names.map(() => 0) } : {}),
      };
    }
    const result = called.value as StepResult;
    if (result.terminated || result.truncated) this.current = 'ended';
    this.lastObservation = result.observation;
    if (seats) this.seatToMove = (result as SeatedStepResult).seat;
    const metricsAgg: Record<string, MetricAgg> = { ...result.info.metricsAgg, [ENV_FAILURE_METRIC]: 'max' };
    return { ...result, info: { ...result.info, metrics: { ...result.info.metrics, [ENV_FAILURE_METRIC]: false }, metricsAgg }, failure: null };
  }

  /** The state as text or a picture; during or right after an episode. A failure ends the episode. */
  async render(mode: RenderMode): Promise<GuardedRender> {
    this.expectPhase('render', ['running', 'ended']);
    const env = this.instance!;
    const called = await this.call(
      'render',
      () => env.render(mode),
      null,
      (value) => renderResultProblem(value, mode),
    );
    return called.failure ? called : { value: called.value as string | RgbFrame | null, failure: null };
  }

  /** A random well-formed response for the current state. A failure ends the episode. */
  async sampleRandomAction(): Promise<GuardedSample> {
    this.expectPhase('sampleRandomAction', ['running']);
    const env = this.instance!;
    const called = await this.call(
      'sampleRandomAction',
      () => env.sampleRandomAction(),
      null,
      (value) => (typeof value === 'string' ? null : `returned ${describeValue(value)}, expected a string`),
    );
    return called.failure ? { response: null, failure: called.failure } : { response: called.value as string, failure: null };
  }

  /**
   * Opponent `name`'s response for the seat to move (OpponentHooks.opponentAction; 'random' is
   * sampleRandomAction). A failure ends the game.
   */
  async opponentAction(name: string): Promise<GuardedSample> {
    if (name === 'random') return this.sampleRandomAction();
    this.expectPhase('opponentAction', ['running']);
    const env = this.instance as Env & Partial<OpponentHooks>;
    const called = await this.call(
      'opponentAction',
      () => (typeof env.opponentAction === 'function' ? env.opponentAction(name) : undefined),
      null,
      (value) =>
        typeof value === 'string' ? null : value === undefined ? 'nothing (the env has no opponentAction())' : `${describeValue(value)}, expected a string`,
    );
    return called.failure ? { response: null, failure: called.failure } : { response: called.value as string, failure: null };
  }

  /**
   * The env's worked solution for the current state (WarmStartHooks.solutionAction, for the warm
   * start's worked examples). An env without one, or null for this state, fails like a malformed
   * result: the episode ends there.
   */
  async solutionAction(): Promise<GuardedSample> {
    const called = await this.callHook('solutionAction', (value) =>
      typeof value === 'string' ? null : value === null ? 'null (no worked solution for this state)' : `${describeValue(value)}, expected a string`,
    );
    return called.failure ? { response: null, failure: called.failure } : { response: called.value as string, failure: null };
  }

  /**
   * The env's worked solution's move from the current state, or null where it has none (a state no
   * solution leaves): the labels of warm_start.solution_labels. A failure ends the episode.
   */
  async solutionLabel(): Promise<GuardedValue<string | null>> {
    const called = await this.callHook('solutionAction', (value) =>
      typeof value === 'string' || value === null ? null : `${describeValue(value)}, expected a string or null`,
    );
    return called as GuardedValue<string | null>;
  }

  /** The env's questions about the current state (WarmStartHooks.stateQuestions). A failure ends the episode. */
  async stateQuestions(): Promise<GuardedValue<readonly StateQuestion[]>> {
    const called = await this.callHook('stateQuestions', (value) =>
      !Array.isArray(value)
        ? `${describeValue(value)}, expected a list of { question, answer }`
        : value.every((q) => typeof q?.question === 'string' && typeof q.answer === 'string')
          ? null
          : 'a list with an item that is not { question, answer } strings',
    );
    return called as GuardedValue<readonly StateQuestion[]>;
  }

  /** The env's notes on the current state (WarmStartHooks.stateNotes). A failure ends the episode. */
  async stateNotes(): Promise<GuardedValue<string>> {
    const called = await this.callHook('stateNotes', (value) => (typeof value === 'string' ? null : `${describeValue(value)}, expected a string`));
    return called as GuardedValue<string>;
  }

  /** Whether the env's class computes its episodes' optimum (EvaluationHooks.optimalSuccess). */
  get hasOptimum(): boolean {
    return typeof (this.plugin.env.prototype as EvaluationHooks).optimalSuccess === 'function';
  }

  /**
   * The best policy's success probability from the current state within `maxSteps` more actions
   * (EvaluationHooks.optimalSuccess). An env without the hook, or a value outside [0, 1], fails
   * like a malformed result: the episode ends there.
   */
  async optimalSuccess(maxSteps: number): Promise<GuardedValue<number>> {
    this.expectPhase('optimalSuccess', ['running']);
    const env = this.instance as Env & EvaluationHooks;
    const called = await this.call(
      'optimalSuccess',
      () => env.optimalSuccess?.(maxSteps),
      null,
      (value) =>
        value === undefined
          ? 'nothing (the env has no optimalSuccess())'
          : typeof value === 'number' && value >= 0 && value <= 1
            ? null
            : `${describeValue(value)}, expected a probability in [0, 1]`,
    );
    return called as GuardedValue<number>;
  }

  /** Calls a warm-start hook during an episode; an env without it fails like a malformed result. */
  private callHook(name: WarmStartHook, problem: (value: unknown) => string | null): Promise<GuardedValue<unknown>> {
    this.expectPhase(name, ['running']);
    const env = this.instance!;
    return this.call(
      name,
      () => (hasWarmStartHook(env, name) ? (env[name] as () => unknown).call(env) : undefined),
      null,
      (value) => (value === undefined ? `nothing (the env has no ${name}())` : problem(value)),
    );
  }

  /**
   * Gives up on the episode from outside (the rollout's time budget ran out while a call was in
   * flight): the instance is retired like a failed one, whatever its pending call does later is
   * ignored, and the next reset() builds a fresh instance.
   */
  abandon(): void {
    if (this.current === 'closed') return;
    this.epoch += 1;
    this.retire();
    this.current = 'failed';
  }

  private abandoned(method: EnvMethod): EnvFailure {
    return { method, kind: 'timeout', reason: `${this.label}: ${method}() was abandoned (the episode ran out of time)` };
  }

  /** Closes the current instance (waiting at most the close timeout); the guard is done after it. */
  async close(): Promise<EnvFailure | null> {
    if (this.current === 'closed') return null;
    const env = this.instance;
    this.instance = null;
    this.current = 'closed';
    if (!env) return null;
    const called = await this.call(
      'close',
      () => env.close(),
      this.timeouts.close,
      () => null,
    );
    return called.failure;
  }

  private expectPhase(method: EnvMethod, allowed: readonly EpisodePhase[]): void {
    if (allowed.includes(this.current)) return;
    const why: Record<EpisodePhase, string> = {
      idle: 'before reset()',
      running: 'during an episode',
      ended: 'after the episode ended; call reset() first',
      failed: 'after the episode failed; call reset() first',
      closed: 'after close()',
    };
    throw new EnvStateError(`${this.label}: ${method}() called ${why[this.current]}`);
  }

  /** Calls into the plugin; any failure retires the instance and ends the episode. */
  private async call(
    method: EnvMethod,
    run: () => unknown,
    timeoutMs: number | null,
    problem: (value: unknown) => string | null,
  ): Promise<GuardedValue<unknown>> {
    let value: unknown;
    const epoch = this.epoch;
    try {
      value = run();
      if (isThenable(value)) {
        if (timeoutMs !== null) value = await withTimeout(value, timeoutMs);
        // a synchronous method that returned a promise is malformed; its rejection must not crash us
        else value.then(undefined, () => {});
      }
    } catch (error) {
      if (epoch !== this.epoch) return { value: null, failure: this.abandoned(method) };
      if (error === TIMED_OUT) return { value: null, failure: this.fail(method, 'timeout', `did not finish within ${formatDuration(timeoutMs!)}`) };
      return { value: null, failure: this.fail(method, 'threw', `threw: ${thrownText(error)}`) };
    }
    // abandoned while in flight: the caller has moved on, and this instance is already retired
    if (epoch !== this.epoch) return { value: null, failure: this.abandoned(method) };
    const bad = problem(value);
    if (bad) return { value: null, failure: this.fail(method, 'malformed', `returned a malformed result: ${bad}`) };
    return { value, failure: null };
  }

  private fail(method: EnvMethod, kind: EnvFailure['kind'], detail: string): EnvFailure {
    const where = method === 'constructor' ? 'the constructor' : `${method}()`;
    if (method !== 'close') {
      this.retire();
      this.current = 'failed';
    }
    return { method, kind, reason: `${this.label}: ${where} ${detail}` };
  }

  /** Drops the instance; its close() runs in the background, and whatever it does is ignored. */
  private retire(): void {
    const env = this.instance;
    this.instance = null;
    if (!env) return;
    try {
      const closing = env.close();
      if (isThenable(closing)) closing.then(undefined, () => {});
    } catch {
      // the instance is already broken; its close() has nothing left to tell us
    }
  }
}
