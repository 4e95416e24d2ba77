/**
 * The env checker behind `agentic plugins check ENV`: plays random episodes of an environment
 * plugin through the guard and reports, check by check, where it breaks the Env contract. It
 * runs everything through GuardedEnv, so a broken env fails checks instead of crashing the
 * checker (a synchronous infinite loop is the exception; see guarded_env.ts). The CLI validates
 * the env_config first (src/cli/plugins_check.ts's checkEnv), with the config's messages.
 */
import { aggregateMetric, badMetricNames } from './env_contract';
import { ENV_FAILURE_METRIC, GuardedEnv, type EnvFailure, type EnvMethod, type GuardOptions } from './guarded_env';
import type { EnvContext, EnvPlugin, MetricAgg, MetricValue, RgbFrame, SeatedResetResult, SeatedStepResult, SeatOutcome, SeatSpec } from './types';

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface EnvCheck {
  name: CheckName;
  status: CheckStatus;
  /** One line: what was checked, or the first thing that was wrong. */
  message: string;
}

/** The checks, in the order they are reported, with what each one verifies. */
export const ENV_CHECKS = {
  config: 'env_config validates against the plugin schema (its defaults fill what is left out)',
  construct: 'the environment class constructs with that config',
  reset: 'reset(seed) returns a string observation and a non-empty info.instruction',
  step: 'step() returns a string observation, a finite reward, boolean terminated/truncated, metrics of numbers and booleans',
  metric_names: 'metric names are snake_case',
  random_actions: 'sampleRandomAction() gives strings the env accepts (action_is_valid true, when reported)',
  invalid_action: "an unparseable response leaves the state unchanged (or ends the episode, as in GEM's games) and is reported as action_is_valid false",
  determinism: 'the same seed and responses give the same observations, rewards, metrics and random actions',
  isolation: 'two instances stepped in turn do not share state',
  render: "render('text') is a string; render('rgb') is null or width*height*3 bytes",
  close: 'close() finishes',
} as const;

/** The checks a seated env (defineSeatedEnv) gets besides those above, reported after them. */
export const SEATED_ENV_CHECKS = {
  turn_order: 'every seat gets to move, and the seats move in the same order when a game is replayed',
  seat_rewards: 'one reward per seat each move; with zeroSum every finished game returns 0 in all; outcomes agree with the returns',
  bad_answer: 'an unreadable response costs only the seat that gave it: its turn, or the game (outcome loss); no other seat is charged',
  opponents: "each of the env's own opponents (SeatSpec.opponents) plays whole games with valid actions",
} as const;
export type CheckName = keyof typeof ENV_CHECKS | keyof typeof SEATED_ENV_CHECKS;

export interface EnvCheckStats {
  episodes: number;
  steps: number;
  /** Episodes that the env ended itself (terminated or truncated) before the step cap. */
  endedByEnv: number;
  /** Episodes cut short by a failure of the env. */
  failed: number;
  /** Mean over the finished episodes of the summed reward; null when none finished. */
  meanReturn: number | null;
  /** Mean over the finished episodes of the `success` metric aggregated as the env says; null when not reported. */
  successRate: number | null;
}

export interface EnvCheckReport {
  env: string;
  /** The validated env_config the checks ran with. */
  config: unknown;
  checks: EnvCheck[];
  stats: EnvCheckStats;
  /** No check failed. */
  passed: boolean;
}

export interface EnvCheckOptions {
  /** What the env's constructor receives besides its config (tools and rewards by name). */
  context: EnvContext;
  /** Random episodes to play (default 8), with seeds seed, seed+1, ... */
  episodes?: number;
  seed?: number;
  /** Steps after which a random episode is cut (default 20). */
  maxSteps?: number;
  /** Time limit of one reset(), step() or close(), in ms (default 10 000). */
  timeoutMs?: number;
}

/** A response that no env can parse as an action. */
export const GIBBERISH_RESPONSE = 'gibberish with no answer tag';

interface Transition {
  /** The seat that moved (a seated env's; 0 for others). */
  seat: number;
  /** Every seat's reward for the move (a seated env's). */
  rewards?: readonly number[];
  outcome?: readonly SeatOutcome[];
  response: string;
  observation: string;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  metrics: Record<string, MetricValue>;
}

interface Episode {
  seed: number;
  observation: string;
  instruction: string;
  steps: Transition[];
  metricsAgg: Record<string, MetricAgg>;
  failure: EnvFailure | null;
}

interface PlayOptions {
  /** Responses to send instead of random ones (a replay); random actions are still drawn, to compare. */
  responses?: readonly string[];
  /** Render after the reset and every step (and check the picture once). */
  render?: boolean;
  /** Called before each step, to interleave another instance. */
  beforeStep?: () => Promise<void>;
}

function short(text: string, max = 60): string {
  const shown = JSON.stringify(text);
  return shown.length <= max ? shown : `${shown.slice(0, max - 2)}…"`;
}

class Checker {
  private readonly guards: GuardedEnv[] = [];
  private readonly episodes: number;
  private readonly seed: number;
  private readonly maxSteps: number;
  private readonly guardOptions: GuardOptions;
  private rgb: RgbFrame | null | undefined = undefined;
  private renders = 0;

  constructor(
    private readonly plugin: EnvPlugin,
    private readonly config: unknown,
    private readonly options: EnvCheckOptions,
  ) {
    this.episodes = options.episodes ?? 8;
    this.seed = options.seed ?? 0;
    this.maxSteps = options.maxSteps ?? 20;
    const timeout = options.timeoutMs ?? 10_000;
    this.guardOptions = { resetTimeoutMs: timeout, stepTimeoutMs: timeout, closeTimeoutMs: timeout };
  }

  newGuard(): GuardedEnv {
    const guard = new GuardedEnv(this.plugin, this.config, this.options.context, this.guardOptions);
    this.guards.push(guard);
    return guard;
  }

  /** One episode on `guard`; any failure of the env ends it and is recorded. */
  async play(guard: GuardedEnv, seed: number, options: PlayOptions = {}): Promise<Episode & { sampled: string[] }> {
    const episode: Episode & { sampled: string[] } = { seed, observation: '', instruction: '', steps: [], metricsAgg: {}, failure: null, sampled: [] };
    const reset = await guard.reset(seed);
    if (reset.failure) return { ...episode, failure: reset.failure };
    episode.observation = reset.observation;
    episode.instruction = reset.info.instruction;
    let mover = (reset as Partial<SeatedResetResult>).seat ?? 0;
    if (options.render && !(await this.renderBoth(guard, episode))) return episode;
    const length = options.responses?.length ?? this.maxSteps;
    for (let i = 0; i < length; i++) {
      await options.beforeStep?.();
      const sample = await guard.sampleRandomAction();
      if (sample.failure) return { ...episode, failure: sample.failure };
      episode.sampled.push(sample.response);
      const response = options.responses?.[i] ?? sample.response;
      const step = await guard.step(response);
      if (step.failure) return { ...episode, failure: step.failure };
      const { [ENV_FAILURE_METRIC]: _, ...metrics } = step.info.metrics;
      const { rewards, outcome, seat } = step as Partial<SeatedStepResult>;
      episode.steps.push({
        seat: mover,
        rewards,
        outcome,
        response,
        observation: step.observation,
        reward: step.reward,
        terminated: step.terminated,
        truncated: step.truncated,
        metrics,
      });
      mover = seat ?? 0;
      const { [ENV_FAILURE_METRIC]: __, ...metricsAgg } = step.info.metricsAgg ?? {};
      Object.assign(episode.metricsAgg, metricsAgg);
      if (options.render) {
        const text = await guard.render('text');
        if (text.failure) return { ...episode, failure: text.failure };
        this.renders++;
      }
      if (step.terminated || step.truncated) break;
    }
    return episode;
  }

  /** Text and picture after a reset; false when render failed (the episode is over then). */
  private async renderBoth(guard: GuardedEnv, episode: Episode): Promise<boolean> {
    const text = await guard.render('text');
    if (text.failure) {
      episode.failure = text.failure;
      return false;
    }
    const rgb = await guard.render('rgb');
    if (rgb.failure) {
      episode.failure = rgb.failure;
      return false;
    }
    this.rgb ??= rgb.value as RgbFrame | null;
    this.renders += 2;
    return true;
  }

  async run(): Promise<EnvCheckReport> {
    const checks: EnvCheck[] = [];
    const add = (name: CheckName, status: CheckStatus, message: string) => checks.push({ name, status, message });
    add('config', 'pass', `env_config ${JSON.stringify(this.config) ?? 'undefined'}`);

    const main = this.newGuard();
    const played: Array<Episode & { sampled: string[] }> = [];
    for (let i = 0; i < this.episodes; i++) played.push(await this.play(main, this.seed + i, { render: true }));
    const failures = played.flatMap((e) => (e.failure ? [e.failure] : []));
    const firstFailure = (...methods: EnvMethod[]) => failures.find((f) => methods.includes(f.method));
    const failedCount = (...methods: EnvMethod[]) => failures.filter((f) => methods.includes(f.method)).length;

    const construct = firstFailure('constructor');
    if (construct) {
      add('construct', 'fail', construct.reason);
      for (const name of Object.keys(ENV_CHECKS).slice(2) as CheckName[]) add(name, 'skip', 'not run: the env could not be constructed');
      await this.closeAll();
      return this.report(checks, played);
    }
    const seeds = this.episodes === 1 ? `seed ${this.seed}` : `seeds ${this.seed} to ${this.seed + this.episodes - 1}`;
    add('construct', 'pass', `constructed; ${this.episodes} random episode${this.episodes === 1 ? '' : 's'} played, ${seeds}`);

    const resets = played.length - failedCount('reset');
    const reset = firstFailure('reset');
    add(
      'reset',
      reset ? 'fail' : 'pass',
      reset ? `${reset.reason} (${failedCount('reset')} of ${played.length} resets failed)` : `${resets} resets well formed`,
    );

    const steps = played.flatMap((e) => e.steps);
    const step = firstFailure('step');
    if (step) add('step', 'fail', `${step.reason} (${failedCount('step')} of ${played.length} episodes)`);
    else if (steps.length === 0) add('step', 'skip', 'no step was taken');
    else {
      const rewards = steps.map((s) => s.reward);
      add('step', 'pass', `${steps.length} steps well formed; rewards from ${Math.min(...rewards)} to ${Math.max(...rewards)}`);
    }

    const names = [...new Set(steps.flatMap((s) => Object.keys(s.metrics)))].sort();
    const bad = badMetricNames(Object.fromEntries(names.map((n) => [n, 0])));
    if (bad.length > 0) add('metric_names', 'fail', `not snake_case: ${bad.join(', ')} (metrics become env/<tag>/<name> in the logs)`);
    else add('metric_names', steps.length === 0 ? 'skip' : 'pass', names.length > 0 ? `metrics: ${names.join(', ')}` : 'the env reports no metrics');

    add(...this.randomActionsCheck(played, firstFailure('sampleRandomAction')));
    add(...(await this.invalidActionCheck()));
    const determinism = await this.determinismCheck(main, played);
    add('determinism', determinism[0], determinism[1]);
    const isolation = await this.isolationCheck(played);
    add('isolation', isolation[0], isolation[1]);

    const render = firstFailure('render');
    if (render) add('render', 'fail', render.reason);
    else if (this.renders === 0) add('render', 'skip', 'no episode got far enough to render');
    else {
      const picture = this.rgb ? `a ${this.rgb.width}x${this.rgb.height} picture` : 'null (no picture)';
      add('render', 'pass', `${this.renders} renders; render('rgb') gives ${picture}`);
    }

    const seats = this.plugin.seats;
    if (seats) {
      add(...this.turnOrderCheck(played, seats));
      add(...this.seatRewardsCheck(played, seats));
      add(...(await this.badAnswerCheck(seats)));
      add(...(await this.opponentsCheck(seats)));
    }

    const closing = await this.closeAll();
    add('close', closing.length > 0 ? 'fail' : 'pass', closing[0]?.reason ?? `close() finished on ${this.guards.length} instances`);
    return this.report(checks, played);
  }

  private randomActionsCheck(played: ReadonlyArray<Episode & { sampled: string[] }>, failure: EnvFailure | undefined): [CheckName, CheckStatus, string] {
    if (failure) return ['random_actions', 'fail', failure.reason];
    const steps = played.flatMap((e) => e.steps.map((s, i) => ({ seed: e.seed, index: i + 1, ...s })));
    if (steps.length === 0) return ['random_actions', 'skip', 'no step was taken'];
    const reported = steps.filter((s) => 'action_is_valid' in s.metrics);
    const invalid = reported.filter((s) => s.metrics.action_is_valid !== true);
    if (invalid.length > 0) {
      const first = invalid[0]!;
      return [
        'random_actions',
        'fail',
        `${invalid.length} of ${reported.length} random actions reported action_is_valid false (first: seed ${first.seed}, step ${first.index}, response ${short(first.response)})`,
      ];
    }
    const note = reported.length === 0 ? '; the env does not report action_is_valid' : ', all reported valid';
    return ['random_actions', 'pass', `${steps.length} random actions${note}`];
  }

  private async invalidActionCheck(): Promise<[CheckName, CheckStatus, string]> {
    const guard = this.newGuard();
    const reset = await guard.reset(this.seed);
    if (reset.failure) return ['invalid_action', 'skip', `not run: ${reset.failure.reason}`];
    const before = await guard.render('text');
    if (before.failure) return ['invalid_action', 'skip', `not run: ${before.failure.reason}`];
    const step = await guard.step(GIBBERISH_RESPONSE);
    if (step.failure) return ['invalid_action', 'fail', step.failure.reason];
    const { metrics } = step.info;
    if (!('action_is_valid' in metrics)) return ['invalid_action', 'skip', 'the env does not report metrics.action_is_valid'];
    const asked = `step(${short(GIBBERISH_RESPONSE)})`;
    // Some envs (tool use, AgentFly style) take any text without a tool call as the final
    // answer: for them no response is unparseable, and the free text ends the episode.
    if (metrics.action_is_valid === true && step.terminated) {
      return ['invalid_action', 'skip', `${asked} was taken as a final answer (the env has no unparseable responses)`];
    }
    if (metrics.action_is_valid !== false) return ['invalid_action', 'fail', `${asked} reported action_is_valid ${metrics.action_is_valid}`];
    if (step.info.action !== undefined && step.info.action !== null) {
      return ['invalid_action', 'fail', `${asked} reported info.action ${short(step.info.action)}, expected null`];
    }
    // GEM's games end the episode on a format error (its reward is -0.1): nothing is left to compare.
    if (step.terminated) return ['invalid_action', 'pass', `${asked}: ended the episode (a format error), action_is_valid false, reward ${step.reward}`];
    // a seated env's bad answer may pass the turn on, which the state shows (bad_answer checks the rest)
    const seats = this.plugin.seats;
    const mover = (reset as unknown as Partial<SeatedResetResult>).seat;
    if (seats && (step as Partial<SeatedStepResult>).seat !== mover) {
      return [
        'invalid_action',
        'pass',
        `${asked}: the turn passed to seat ${seats.names[(step as unknown as SeatedStepResult).seat]}, action_is_valid false, reward ${step.reward}`,
      ];
    }
    const after = step.truncated ? { value: before.value, failure: null } : await guard.render('text');
    if (after.failure) return ['invalid_action', 'fail', after.failure.reason];
    if (after.value !== before.value) {
      return ['invalid_action', 'fail', `${asked} changed render('text') from ${short(String(before.value))} to ${short(String(after.value))}`];
    }
    return ['invalid_action', 'pass', `${asked}: state unchanged, action_is_valid false, reward ${step.reward}`];
  }

  /** The first difference between two runs of one seed, or null. */
  private difference(reference: Episode & { sampled: string[] }, again: Episode & { sampled: string[] }): string | null {
    const at = `seed ${reference.seed}`;
    if (again.failure) return `${at}: the second run failed: ${again.failure.reason}`;
    if (again.observation !== reference.observation) return `${at}: reset observations differ: ${short(reference.observation)} vs ${short(again.observation)}`;
    if (again.instruction !== reference.instruction) return `${at}: instructions differ: ${short(reference.instruction)} vs ${short(again.instruction)}`;
    for (let i = 0; i < reference.steps.length; i++) {
      const [a, b] = [reference.steps[i]!, again.steps[i]];
      const where = `${at}, step ${i + 1}`;
      if (!b) return `${where}: the second run ended after ${again.steps.length} steps, the first did not`;
      if (a.observation !== b.observation) return `${where}: observations differ: ${short(a.observation)} vs ${short(b.observation)}`;
      if (!Object.is(a.reward, b.reward)) return `${where}: rewards differ: ${a.reward} vs ${b.reward}`;
      if (a.seat !== b.seat) return `${where}: seat ${a.seat} moved in one run and seat ${b.seat} in the other`;
      if (JSON.stringify(a.rewards) !== JSON.stringify(b.rewards))
        return `${where}: seat rewards differ: ${JSON.stringify(a.rewards)} vs ${JSON.stringify(b.rewards)}`;
      if (a.terminated !== b.terminated || a.truncated !== b.truncated) return `${where}: the episode ended in one run and not in the other`;
      if (JSON.stringify(a.metrics) !== JSON.stringify(b.metrics))
        return `${where}: metrics differ: ${JSON.stringify(a.metrics)} vs ${JSON.stringify(b.metrics)}`;
      if (reference.sampled[i] !== again.sampled[i]) {
        return `${where}: sampleRandomAction() gave ${short(reference.sampled[i] ?? '')} then ${short(again.sampled[i] ?? '')}; seed its random actions in reset()`;
      }
    }
    return null;
  }

  /** Replays the first episodes: on the same instance (reset again) and on a fresh one. */
  private async determinismCheck(main: GuardedEnv, played: ReadonlyArray<Episode & { sampled: string[] }>): Promise<[CheckStatus, string]> {
    const references = played.filter((e) => !e.failure).slice(0, 2);
    if (references.length === 0) return ['skip', 'not run: no episode finished'];
    const fresh = this.newGuard();
    for (const reference of references) {
      const responses = reference.steps.map((s) => s.response);
      for (const [guard, how] of [
        [main, 'when the same instance resets again'],
        [fresh, 'on a fresh instance'],
      ] as const) {
        const again = await this.play(guard, reference.seed, { responses });
        const difference = this.difference(reference, again);
        if (difference) return ['fail', `${difference} (${how})`];
      }
    }
    return ['pass', `seeds ${references.map((e) => e.seed).join(', ')} replayed identically on the same and on a fresh instance`];
  }

  /** Replays the first episode while a second instance plays another seed in turn with it. */
  private async isolationCheck(played: ReadonlyArray<Episode & { sampled: string[] }>): Promise<[CheckStatus, string]> {
    const reference = played.find((e) => !e.failure);
    if (!reference) return ['skip', 'not run: no episode finished'];
    const [subject, other] = [this.newGuard(), this.newGuard()];
    const otherSeed = reference.seed + this.episodes;
    let otherRunning = false;
    const stepOther = async () => {
      if (!otherRunning) return;
      const sample = await other.sampleRandomAction();
      const step = sample.failure ? null : await other.step(sample.response);
      otherRunning = step !== null && !step.failure && !step.terminated && !step.truncated;
    };
    const replay = this.play(subject, reference.seed, {
      responses: reference.steps.map((s) => s.response),
      beforeStep: async () => {
        if (!otherRunning && other.phase === 'idle') otherRunning = !(await other.reset(otherSeed)).failure;
        await stepOther();
      },
    });
    const difference = this.difference(reference, await replay);
    if (difference) return ['fail', `${difference} while a second instance played seed ${otherSeed}: instances share state (module-level variables?)`];
    return ['pass', `seed ${reference.seed} replayed identically while a second instance played seed ${otherSeed}`];
  }

  private turnOrderCheck(played: ReadonlyArray<Episode>, seats: SeatSpec): [CheckName, CheckStatus, string] {
    const moves = played.flatMap((e) => e.steps);
    if (moves.length === 0) return ['turn_order', 'skip', 'no move was made'];
    const moved = new Set(moves.map((m) => m.seat));
    const idle = seats.names.filter((_, seat) => !moved.has(seat));
    if (idle.length > 0) return ['turn_order', 'fail', `seat ${idle.join(', ')} never moved in ${played.length} random games (${moves.length} moves)`];
    // the replays of the determinism check compare the seat of every move
    return ['turn_order', 'pass', `seats ${seats.names.join(', ')} each moved; ${moves.length} moves`];
  }

  private seatRewardsCheck(played: ReadonlyArray<Episode>, seats: SeatSpec): [CheckName, CheckStatus, string] {
    const finished = played.filter((e) => !e.failure && (e.steps.at(-1)?.terminated || e.steps.at(-1)?.truncated));
    if (finished.length === 0) return ['seat_rewards', 'skip', `no random game finished within ${this.maxSteps} moves`];
    for (const game of finished) {
      const returns = seats.names.map((_, seat) => game.steps.reduce((sum, step) => sum + step.rewards![seat]!, 0));
      const total = returns.reduce((a, b) => a + b, 0);
      const at = `seed ${game.seed}`;
      if (seats.zeroSum && Math.abs(total) > 1e-9)
        return ['seat_rewards', 'fail', `${at}: the returns ${returns.join(', ')} sum to ${total}, but the env says zeroSum`];
      const outcome = game.steps.at(-1)!.outcome;
      if (!outcome) continue;
      const lowestWin = Math.min(...returns.filter((_, seat) => outcome[seat] === 'win'));
      const highestLoss = Math.max(...returns.filter((_, seat) => outcome[seat] === 'loss'));
      if (highestLoss > lowestWin)
        return ['seat_rewards', 'fail', `${at}: outcome ${outcome.join(', ')} gives a losing seat a higher return than a winning one (${returns.join(', ')})`];
    }
    const zeroSum = seats.zeroSum ? ', each summing to 0' : '';
    return ['seat_rewards', 'pass', `${finished.length} finished games: one reward per seat each move${zeroSum}`];
  }

  private async badAnswerCheck(seats: SeatSpec): Promise<[CheckName, CheckStatus, string]> {
    const guard = this.newGuard();
    const reset = await guard.reset(this.seed);
    if (reset.failure) return ['bad_answer', 'skip', `not run: ${reset.failure.reason}`];
    const mover = (reset as unknown as SeatedResetResult).seat;
    const step = await guard.step(GIBBERISH_RESPONSE);
    if (step.failure) return ['bad_answer', 'fail', step.failure.reason];
    const { rewards, outcome, seat } = step as unknown as SeatedStepResult;
    const asked = `step(${short(GIBBERISH_RESPONSE)}) from seat ${seats.names[mover]}`;
    if (step.info.metrics.action_is_valid !== false) return ['bad_answer', 'fail', `${asked} did not report action_is_valid false`];
    const charged = seats.names.filter((_, other) => other !== mover && rewards[other] !== 0);
    if (charged.length > 0) return ['bad_answer', 'fail', `${asked} changed the reward of seat ${charged.join(', ')}: ${JSON.stringify(rewards)}`];
    if (!step.terminated && !step.truncated) {
      return ['bad_answer', 'pass', `${asked} lost that seat its turn (reward ${step.reward}); seat ${seats.names[seat]} moves next`];
    }
    if (outcome && outcome[mover] !== 'loss')
      return ['bad_answer', 'fail', `${asked} ended the game with that seat's outcome ${outcome[mover]}, expected loss`];
    return ['bad_answer', 'pass', `${asked} lost that seat the game (reward ${step.reward})`];
  }

  private async opponentsCheck(seats: SeatSpec): Promise<[CheckName, CheckStatus, string]> {
    if (seats.opponents.length === 0) return ['opponents', 'skip', 'the env names no opponents of its own (random is sampleRandomAction)'];
    const guard = this.newGuard();
    let moves = 0;
    for (const name of seats.opponents) {
      for (let game = 0; game < 2; game++) {
        const reset = await guard.reset(this.seed + game);
        if (reset.failure) return ['opponents', 'skip', `not run: ${reset.failure.reason}`];
        for (let i = 0; i < this.maxSteps; i++) {
          const answer = await guard.opponentAction(name);
          if (answer.failure) return ['opponents', 'fail', answer.failure.reason];
          const step = await guard.step(answer.response);
          if (step.failure) return ['opponents', 'fail', step.failure.reason];
          moves++;
          if (step.info.metrics.action_is_valid === false) {
            return [
              'opponents',
              'fail',
              `opponent ${name}'s response ${short(answer.response)} (seed ${this.seed + game}, move ${i + 1}) reported action_is_valid false`,
            ];
          }
          if (step.terminated || step.truncated) break;
        }
      }
    }
    return ['opponents', 'pass', `${seats.opponents.join(', ')}: 2 games each in every seat, ${moves} valid moves`];
  }

  private async closeAll(): Promise<EnvFailure[]> {
    const failures: EnvFailure[] = [];
    for (const guard of this.guards) {
      const failure = await guard.close();
      if (failure) failures.push(failure);
    }
    return failures;
  }

  private report(checks: EnvCheck[], played: ReadonlyArray<Episode>): EnvCheckReport {
    const finished = played.filter((e) => !e.failure);
    const returns = finished.map((e) => e.steps.reduce((sum, s) => sum + s.reward, 0));
    const successes = finished.flatMap((e) => {
      const values = e.steps.flatMap((s) => (s.metrics.success === undefined ? [] : [Number(s.metrics.success)]));
      return values.length === 0 ? [] : [aggregateMetric(values, e.metricsAgg.success ?? 'mean')];
    });
    const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
    return {
      env: this.plugin.name,
      config: this.config,
      checks,
      stats: {
        episodes: played.length,
        steps: played.reduce((n, e) => n + e.steps.length, 0),
        endedByEnv: finished.filter((e) => e.steps.at(-1)?.terminated || e.steps.at(-1)?.truncated).length,
        failed: played.length - finished.length,
        meanReturn: mean(returns),
        successRate: mean(successes),
      },
      passed: checks.every((c) => c.status !== 'fail'),
    };
  }
}

/**
 * Checks an environment plugin with `config`, an env_config its schema has validated (the
 * defaults filled in: config/validate.ts's validateEnvConfig).
 */
export async function checkEnvContract(plugin: EnvPlugin, config: unknown, options: EnvCheckOptions): Promise<EnvCheckReport> {
  return new Checker(plugin, config, options).run();
}
