/**
 * Scoring one sample without letting a reward function take the run down: a reward that throws,
 * returns something that is not a finite number, or returns a malformed record gives reward 0 for
 * that sample, and the error comes back to be logged. A reward that returns a `reward_error` note
 * keeps its reward and metrics, and the note comes back as the error. Callers (the rollout) use this, never
 * `reward.score` directly.
 */
import { firstLine } from '../errors';
import type { MetricValue, RewardInput, RewardPlugin } from './types';

export interface SafeScore {
  reward: number;
  /** The reward's extra numeric or boolean metrics (strings it returned are left out). */
  metrics: Record<string, MetricValue>;
  /** Text the reward returned beside its metrics (e.g. a test log), for the logs. */
  notes: Record<string, string>;
  /** Why the sample scored 0 against the reward's will: one line naming the reward. */
  error?: string;
}

export async function scoreSafely(reward: RewardPlugin, input: RewardInput): Promise<SafeScore> {
  const failed = (why: string): SafeScore => ({ reward: 0, metrics: {}, notes: {}, error: `reward '${reward.name}': ${why}` });
  let output: unknown;
  try {
    output = await reward.score(input);
  } catch (error) {
    return failed(firstLine(error));
  }
  if (typeof output === 'number') {
    return Number.isFinite(output) ? { reward: output, metrics: {}, notes: {} } : failed(`returned ${output}, not a finite number`);
  }
  if (typeof output !== 'object' || output === null || typeof (output as { reward?: unknown }).reward !== 'number') {
    return failed(`returned ${describe(output)}; expected a number or { reward: number, ...metrics }`);
  }
  const { reward: value, ...rest } = output as Record<string, unknown> & { reward: number };
  if (!Number.isFinite(value)) return failed(`returned reward ${value}, not a finite number`);
  const metrics: Record<string, MetricValue> = {};
  const notes: Record<string, string> = {};
  for (const [name, metric] of Object.entries(rest)) {
    if (typeof metric === 'number' || typeof metric === 'boolean') metrics[name] = metric;
    else if (typeof metric === 'string') notes[name] = metric;
  }
  // a reward that could not judge (its judge server is down) says why and keeps its metrics
  const why = notes.reward_error;
  if (why === undefined) return { reward: value, metrics, notes };
  delete notes.reward_error;
  return { reward: value, metrics, notes, error: `reward '${reward.name}': ${firstLine(why)}` };
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return Array.isArray(value) ? 'a list' : `an object without a numeric 'reward'`;
  return `a ${typeof value}`;
}
