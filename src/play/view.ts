/**
 * What `agentic play` prints, as plain text: each turn's observation and the exact prompt the
 * policy gets (the chat template applied, special tokens shown), then what the env made of the
 * response (action, validity, reward, metrics, tool calls) and the response's tokens, and at the
 * end the episode's score and why it ended.
 */
import { isStepWise, type EnvManagerKind } from '../config/schema';
import type { GuardedStep } from '../sdk/guarded_env';
import type { MetricValue } from '../sdk/types';
import type { TurnStart } from '../rollout/episode';
import type { EndReason, Episode, Turn } from '../rollout/types';

const number = (value: number) => String(+value.toFixed(4));

function metricValue(value: MetricValue | number): string {
  return typeof value === 'number' ? number(value) : String(value);
}

/** `name=value` pairs on one line; the guard's env_failure flag is left out unless it is set. */
export function metricsLine(metrics: Readonly<Record<string, MetricValue | number>>): string {
  const shown = Object.entries(metrics).filter(([name, value]) => !(name === 'env_failure' && !value));
  return shown.length === 0 ? '(none)' : shown.map(([name, value]) => `${name}=${metricValue(value)}`).join(' ');
}

export function section(title: string): string {
  return `--- ${title}`;
}

/** The observation and the prompt of a turn about to be answered. */
export function turnStartText(
  start: TurnStart,
  options: { kind: EnvManagerKind; maxSteps: number; maxTokensPerStep: number; decode: (ids: readonly number[]) => string; sequenceLength: number },
): string {
  const { step, promptIds, contextIds, room } = start;
  const prompt = isStepWise(options.kind)
    ? `prompt (step-wise: the whole prompt, ${promptIds.length} ids, chat template applied)`
    : step === 0
      ? `prompt (${promptIds.length} ids, chat template applied)`
      : `prompt (trajectory-wise: ${promptIds.length} new ids after the ${contextIds.length - promptIds.length} of the chat so far, which holds every earlier response as given)`;
  const lines = [
    '',
    `=== turn ${step + 1} of at most ${options.maxSteps}`,
    section('observation'),
    start.observation,
    section(prompt),
    options.decode(promptIds),
    section('end of prompt'),
  ];
  if (room <= 0) {
    const enough = Math.max(1024, 2 ** Math.ceil(Math.log2(contextIds.length + options.maxTokensPerStep)));
    lines.push(
      `the prompt fills sequence_length (${contextIds.length} of ${options.sequenceLength} ids): no room for a response (to play on, raise it: sequence_length=${enough})`,
    );
  }
  return lines.join('\n');
}

/** The action line: the parsed action and whether it was valid. */
function actionLine(turn: Turn): string {
  const valid = turn.metrics.action_is_valid;
  const validity = valid === undefined ? '' : valid === false ? ' (not valid)' : ' (valid)';
  if (typeof turn.action === 'string') return `action: ${turn.action}${validity}`;
  if (turn.action === null) return `action: none found in the response${validity}`;
  return `action: (the env does not say)${validity}`;
}

interface ToolCallShown {
  name?: unknown;
  ok?: unknown;
  output?: unknown;
}

/** Tool calls an env reports in `info.tool_calls` (tool_use does), as `name: ok|failed` and the output. */
function toolCallLines(info: Record<string, unknown>): string[] {
  const calls = info.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return [];
  const lines = [section(`tool calls (${calls.length})`)];
  calls.forEach((call: ToolCallShown, i) => {
    const name = typeof call.name === 'string' ? call.name : '(unreadable call)';
    lines.push(`[${i + 1}] ${name}: ${call.ok === false ? 'failed' : 'ok'}`, String(call.output ?? ''));
  });
  return lines;
}

/** What the env made of the response. */
export function stepText(turn: Turn, step: GuardedStep): string {
  const lines = [section('step'), actionLine(turn), `reward: ${number(turn.reward)}`, `metrics: ${metricsLine(turn.metrics)}`];
  if (turn.actionDesc) lines.push(`env says: ${turn.actionDesc}`);
  if (step.failure) lines.push(`env failure: ${step.failure.reason}`);
  lines.push(...toolCallLines(step.info as Record<string, unknown>));
  return lines.join('\n');
}

export interface TokenView {
  ids: readonly number[];
  /** Per id; null when there is no model to say (log-probs n/a). */
  logProbs: readonly number[] | null;
  /** Where the log-probs come from, for the heading. */
  logProbSource: string;
  /** 1 for ids inside <think> that get no advantage (think_credit: false); null when not marked. */
  think: Uint8Array | null;
  piece: (id: number) => string;
}

/** The response's tokens: every one is trained on (the response mask); think tokens get the KL term only. */
export function tokenTable(view: TokenView): string {
  const { ids, logProbs, think } = view;
  const thinking = think ? think.reduce((n, flag) => n + flag, 0) : 0;
  const mask =
    thinking > 0
      ? `all in the response mask; ${thinking} inside <think> get no advantage (think_credit: false), only the KL term`
      : 'all trained on (the response mask is 1 on each)';
  const lines = [section(`response tokens: ${ids.length}, ${mask}; log-probs ${view.logProbSource}`)];
  if (ids.length === 0) return [...lines, '(no tokens)'].join('\n');
  const idWidth = Math.max(2, ...ids.map((id) => String(id).length));
  lines.push(`${'#'.padStart(4)}  ${'id'.padStart(idWidth)}  ${'log-prob'.padStart(9)}  trained  token`);
  ids.forEach((id, i) => {
    const logProb = logProbs ? logProbs[i]!.toFixed(4) : 'n/a';
    const trained = think?.[i] ? 'KL only' : 'yes';
    lines.push(
      `${String(i + 1).padStart(4)}  ${String(id).padStart(idWidth)}  ${logProb.padStart(9)}  ${trained.padEnd(7)}  ${JSON.stringify(view.piece(id))}`,
    );
  });
  if (logProbs) {
    const total = logProbs.reduce((a, b) => a + b, 0);
    lines.push(`sum of log-probs ${total.toFixed(4)} (mean ${(total / ids.length).toFixed(4)} per token)`);
  }
  return lines.join('\n');
}

const END_REASONS: Record<EndReason, string> = {
  terminated: 'the env ended it (a terminal state)',
  truncated: 'the env cut it short (truncated)',
  max_actions: "the action budget ran out (custom_envs' max_steps)",
  context_full: 'the next prompt did not fit in sequence_length (context_full)',
  timeout: 'the episode ran out of its time budget (episode_timeout_s)',
  env_failure: 'the env failed',
  infer_failure: 'the inference server gave no response (infer_failure)',
};

/** The end of an episode: how it ended, the score, the final observation and the episode metrics. */
export function episodeEndText(episode: Episode): string {
  const success = episode.metrics.success;
  const verdict = success === undefined ? '' : success >= 1 ? ' (success)' : ' (no success)';
  const turns = `${episode.turns.length} turn${episode.turns.length === 1 ? '' : 's'}`;
  return [
    '',
    `=== episode over after ${turns}: ${episode.endReason}, ${END_REASONS[episode.endReason]}${episode.failure ? `: ${episode.failure}` : ''}`,
    section('final observation'),
    episode.finalObservation,
    section('episode'),
    `score: ${number(episode.score)}${verdict}`,
    `metrics: ${metricsLine(episode.metrics)}`,
    `response tokens: ${episode.responseTokens}`,
  ].join('\n');
}
