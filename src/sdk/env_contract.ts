/**
 * Checks of what an environment returns against the Env contract in types.ts. Each check gives
 * the first problem as a short phrase ("reward is NaN, expected a finite number"), or null when
 * the value is well formed; the callers add which env and which method it came from.
 */
import type { MetricAgg, RenderMode, SeatOutcome, SeatSpec } from './types';

export const METRIC_AGGS: readonly MetricAgg[] = ['sum', 'mean', 'min', 'max', 'last', 'first'];
const METRIC_NAME = /^[a-z][a-z0-9_]*$/;

/** A value as a message shows it: its kind, and short values themselves. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value === 'string') return value.length <= 40 ? `the string ${JSON.stringify(value)}` : 'a string';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Promise) return 'a Promise';
  return `a ${typeof value}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Promise);
}

function expectString(value: unknown, what: string): string | null {
  return typeof value === 'string' ? null : `${what} is ${describeValue(value)}, expected a string`;
}

function expectBoolean(value: unknown, what: string): string | null {
  return typeof value === 'boolean' ? null : `${what} is ${describeValue(value)}, expected true or false`;
}

function expectFinite(value: unknown, what: string): string | null {
  return typeof value === 'number' && Number.isFinite(value) ? null : `${what} is ${describeValue(value)}, expected a finite number`;
}

/** The first problem of a reset() result, or null. */
export function resetResultProblem(value: unknown): string | null {
  if (!isRecord(value)) return `returned ${describeValue(value)}, expected { observation, info }`;
  const observation = expectString(value.observation, 'observation');
  if (observation) return observation;
  if (!isRecord(value.info)) return `info is ${describeValue(value.info)}, expected { instruction, ... }`;
  const instruction = value.info.instruction;
  // '' is an env whose first observation says it all (function calling, an outside agent's task)
  if (typeof instruction !== 'string') return `info.instruction is ${describeValue(instruction)}, expected the task as a string ('' for none)`;
  return null;
}

/** The first problem of a step() result, or null. */
export function stepResultProblem(value: unknown): string | null {
  if (!isRecord(value)) return `returned ${describeValue(value)}, expected { observation, reward, terminated, truncated, info }`;
  const problem =
    expectString(value.observation, 'observation') ??
    expectFinite(value.reward, 'reward') ??
    expectBoolean(value.terminated, 'terminated') ??
    expectBoolean(value.truncated, 'truncated');
  if (problem) return problem;
  const info = value.info;
  if (!isRecord(info)) return `info is ${describeValue(info)}, expected { metrics, ... }`;
  if (!isRecord(info.metrics)) return `info.metrics is ${describeValue(info.metrics)}, expected a record of numbers and booleans`;
  for (const [name, metric] of Object.entries(info.metrics)) {
    if (typeof metric === 'boolean') continue;
    const bad = expectFinite(metric, `info.metrics.${name}`);
    if (bad) return `${bad} or a boolean`;
  }
  if (info.metricsAgg !== undefined) {
    if (!isRecord(info.metricsAgg)) return `info.metricsAgg is ${describeValue(info.metricsAgg)}, expected a record of aggregations`;
    for (const [name, agg] of Object.entries(info.metricsAgg)) {
      if (!METRIC_AGGS.includes(agg as MetricAgg)) {
        return `info.metricsAgg.${name} is ${describeValue(agg)}, expected one of ${METRIC_AGGS.join(', ')}`;
      }
    }
  }
  if (info.actionDesc !== undefined) {
    const bad = expectString(info.actionDesc, 'info.actionDesc');
    if (bad) return bad;
  }
  if (info.action !== undefined && info.action !== null && typeof info.action !== 'string') {
    return `info.action is ${describeValue(info.action)}, expected a string or null`;
  }
  if (info.reward_error !== undefined) {
    const bad = expectString(info.reward_error, 'info.reward_error');
    if (bad) return `${bad} (why the reward could not score the step)`;
  }
  return null;
}

const SEAT_OUTCOMES: readonly SeatOutcome[] = ['win', 'draw', 'loss'];

function seatProblem(value: unknown, seats: SeatSpec): string | null {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) < seats.names.length
    ? null
    : `seat is ${describeValue(value)}, expected a seat index 0-${seats.names.length - 1}`;
}

/** The first problem of a seated env's reset() result (SeatedResetResult), or null. */
export function seatedResetProblem(value: unknown, seats: SeatSpec): string | null {
  const problem = resetResultProblem(value);
  if (problem) return problem;
  const result = value as Record<string, unknown>;
  const seat = seatProblem(result.seat, seats);
  if (seat) return seat;
  const { instructions } = result;
  if (!Array.isArray(instructions) || instructions.length !== seats.names.length || instructions.some((text) => typeof text !== 'string')) {
    return `instructions is ${describeValue(instructions)}, expected one string per seat (${seats.names.length})`;
  }
  return null;
}

/** The first problem of a seated env's step() result (SeatedStepResult) after seat `mover` moved, or null. */
export function seatedStepProblem(value: unknown, seats: SeatSpec, mover: number): string | null {
  const problem = stepResultProblem(value);
  if (problem) return problem;
  const result = value as Record<string, unknown>;
  const seat = seatProblem(result.seat, seats);
  if (seat) return seat;
  const { rewards, outcome } = result;
  if (!Array.isArray(rewards) || rewards.length !== seats.names.length) {
    return `rewards is ${describeValue(rewards)}, expected one number per seat (${seats.names.length})`;
  }
  for (const [index, reward] of rewards.entries()) {
    const bad = expectFinite(reward, `rewards[${index}]`);
    if (bad) return bad;
  }
  if (rewards[mover] !== result.reward) return `reward is ${result.reward} but rewards[${mover}] (the mover's) is ${rewards[mover]}; they must be equal`;
  if (outcome === undefined) return null;
  if (!result.terminated && !result.truncated) return 'outcome is given on a step that does not end the game';
  if (!Array.isArray(outcome) || outcome.length !== seats.names.length || outcome.some((o) => !SEAT_OUTCOMES.includes(o))) {
    return `outcome is ${describeValue(outcome)}, expected one of ${SEAT_OUTCOMES.join(', ')} per seat (${seats.names.length})`;
  }
  return null;
}

/** The first problem of a render(mode) result, or null. */
export function renderResultProblem(value: unknown, mode: RenderMode): string | null {
  if (mode === 'text') return expectString(value, "render('text')");
  if (value === null) return null;
  if (!isRecord(value)) return `render('rgb') is ${describeValue(value)}, expected null or { width, height, data }`;
  const { width, height, data } = value;
  for (const [name, size] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (typeof size !== 'number' || !Number.isInteger(size) || size <= 0) {
      return `render('rgb').${name} is ${describeValue(size)}, expected a positive integer`;
    }
  }
  if (!(data instanceof Uint8Array)) return `render('rgb').data is ${describeValue(data)}, expected a Uint8Array`;
  const expected = (width as number) * (height as number) * 3;
  if (data.length !== expected) {
    return `render('rgb').data has ${data.length} bytes, expected width*height*3 = ${expected}`;
  }
  return null;
}

/** Metric names that are not snake_case (they become `env/<tag>/<name>` in the logs). */
export function badMetricNames(metrics: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(metrics).filter((name) => !METRIC_NAME.test(name));
}

/** An episode's values of one metric reduced as its metricsAgg says. */
export function aggregateMetric(values: readonly number[], agg: MetricAgg): number {
  switch (agg) {
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'mean':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'min':
      return Math.min(...values);
    case 'max':
      return Math.max(...values);
    case 'first':
      return values[0]!;
    case 'last':
      return values.at(-1)!;
  }
}

/** What an outside agent's final output may be, as its failure line says. */
const AGENT_OUTPUT_RULE = 'return a string (the answer) or {answer: string, reward?: number}';

/**
 * Why what runAgent() returned is not an AgentOutput, or null: `{"answer":5}; return a string (the
 * answer) or {answer: string, reward?: number}` (the value as JSON, cut short).
 */
export function agentOutputProblem(value: unknown): string | null {
  if (typeof value === 'string') return null;
  const shown = value === undefined ? 'nothing' : (JSON.stringify(value)?.slice(0, 200) ?? describeValue(value));
  if (!isRecord(value) || typeof value.answer !== 'string') return `${shown}; ${AGENT_OUTPUT_RULE}`;
  if (value.reward !== undefined) {
    const reward = expectFinite(value.reward, 'its reward');
    if (reward) return `${shown}: ${reward}`;
  }
  return null;
}
