/**
 * One episode played by an outside agent (an env with runAgent, AgentEpisodes in sdk/types.ts):
 * reset, a gateway session for the agent, the agent's run (its model calls answered by the
 * rollout's policy and recorded), then step() with the agent's final output, which scores it.
 *
 * The recorded calls become the episode's turns (gateway/session_turns.ts): one trajectory row
 * while each call extends the last, a new row where the session splits; gateway.on_mismatch may
 * instead drop such an episode's group from the update (Episode.untrained) or refuse the call
 * that splits it (the episode ends as env_failure). The reward sits on the last turn. Sampling
 * follows the rollout's generating_args, as for env episodes: a call that asks for another
 * temperature or top_p, or a seed, is sampled with the run's and counted (gateway_sampling_overridden),
 * since the trainer's log-probs assume the run's sampling.
 *
 * What the agent gets wrong costs its episode (env_failure, with the gateway's line): no model
 * call at all, a call after the deadline, with another episode's key, over the size limit, more
 * calls than max_steps, a call that rewrites the session under on_mismatch: error, an agent that
 * throws or exits non-zero. An agent still running at the deadline ends it as timeout. A
 * conversation that outgrows sequence_length ends the episode as context_full, a call the
 * servers cannot answer as infer_failure.
 */
import { isStepWise, type CustomEnvConfig } from '../config/schema';
import { Rng } from '../engine/rng';
import type { GuardedEnv, GuardedStep } from '../sdk/guarded_env';
import type { ChatFormat } from './chat';
import { Deadline, EXPIRED } from './deadline';
import { type EpisodeEnding, type EpisodeLimits, type EpisodePlay, type EpisodeTask, recordEpisode, stateHash } from './episode_record';
import type { ChatTurn } from './gateway/chat_completions';
import { Gateway, type GatewaySession, type Generated } from './gateway/gateway';
import { continuesSession, type RecordedCall, sessionTurns } from './gateway/session_turns';
import type { Policy } from './policy';
import type { EndReason, Episode, Turn } from './types';

/** The name the gateway answers to in /v1/models and replies. */
export const GATEWAY_MODEL = 'agentic-policy';

let gateway: Gateway | null = null;

/** The process's gateway, started at the first agent episode (or outside agent in a seat). */
export function sharedGateway(): Gateway {
  gateway ??= Gateway.start();
  return gateway;
}

/** Stops the gateway (at the end of a rollout's life); the next agent episode starts it again. */
export async function stopGateway(): Promise<void> {
  const running = gateway;
  gateway = null;
  await running?.stop();
}

/** What the model calls met besides their recording: sampling asked otherwise, and why a call failed. */
export interface CallNotes {
  overridden: number;
  contextFull: boolean;
  inferFailed: boolean;
}

/** How a session the gateway stopped ends its episode: the context ran out, the servers failed, or the agent did wrong. */
export function stoppedSessionEnding(notes: CallNotes): EndReason {
  return notes.contextFull ? 'context_full' : notes.inferFailed ? 'infer_failure' : 'env_failure';
}

/** How the agent's run went: the ending, and what the env showed and took. */
interface AgentRun extends EpisodeEnding {
  /** reset()'s observation. */
  observation: string;
  finalObservation: string;
  /** The agent's final output, which step() scored. */
  answer: string | null;
  step: GuardedStep | null;
}

export async function playAgentEpisode(
  env: GuardedEnv,
  custom: CustomEnvConfig,
  task: EpisodeTask,
  limits: EpisodeLimits,
  policy: Policy,
  chat: ChatFormat,
): Promise<Episode> {
  const play: EpisodePlay = { env, custom, task, limits, policy, chat };
  const started = performance.now();
  const budgetMs = custom.episode_timeout_s * 1000;
  const controller = new AbortController();
  const deadline = new Deadline(budgetMs, () => controller.abort());
  const notes: CallNotes = { overridden: 0, contextFull: false, inferFailed: false };
  const session: GatewaySession = sharedGateway().open({
    model: GATEWAY_MODEL,
    tokenizer: chat.tokenizer,
    piece: chat.responsePiece,
    deadline: Date.now() + budgetMs,
    maxCalls: custom.max_steps,
    generate: (turn, index) => answerCall(play, session, notes, turn, index),
  });
  let run: AgentRun;
  try {
    run = await runAgent(play, session, deadline, controller.signal, notes);
  } finally {
    deadline.clear();
    controller.abort();
    sharedGateway().close(session);
  }
  const { turns, mismatches } = agentTurns(play, session.calls, run);
  const { endReason, failure, finalObservation } = run;
  const episode = recordEpisode(task, {
    kind: custom.env_manager_cls,
    instruction: '',
    turns,
    finalObservation,
    endReason,
    failure,
    remote: policy.remote,
    started,
  });
  return {
    ...episode,
    ...(mismatches > 0 && limits.onMismatch === 'drop' ? { untrained: `the agent's session split ${mismatches} time(s) (gateway.on_mismatch: drop)` } : {}),
    metrics: {
      ...episode.metrics,
      gateway_calls: session.calls.length,
      gateway_streamed: session.calls.filter((call) => call.streamed).length,
      gateway_refused: session.refused,
      prefix_mismatch: mismatches,
      gateway_sampling_overridden: notes.overridden,
    },
  };
}

/**
 * Answers the agent's model call `index` with the rollout's policy, or refuses it (the failure
 * costs the episode). An outside agent in a seat (./seat_agent.ts) passes its seat, which keeps its
 * query ids, KV session and sampling stream apart from the game's other seats.
 */
export async function answerCall(
  { env, custom, task, limits, policy, chat }: EpisodePlay,
  session: GatewaySession,
  notes: CallNotes,
  turn: ChatTurn,
  index: number,
  seat?: number,
): Promise<Generated> {
  const room = limits.sequenceLength - turn.promptIds.length;
  if (room <= 0) {
    notes.contextFull = true;
    return {
      failure: `the conversation is ${turn.promptIds.length} tokens, sequence_length ${limits.sequenceLength} leaves no room to reply`,
      status: 400,
    };
  }
  if (limits.onMismatch === 'error' && !continuesSession(turn.promptIds, session.calls)) {
    return {
      failure: `call ${index + 1} does not extend the conversation so far: the agent rewrote its history (gateway.on_mismatch: error)`,
      status: 400,
    };
  }
  const asksOtherwise =
    (turn.temperature !== null && turn.temperature !== limits.temperature) || (turn.topP !== null && turn.topP !== limits.topP) || turn.seed !== null;
  if (asksOtherwise) notes.overridden++;
  const caller = seat === undefined ? '' : `:a${seat}`;
  const stream = seat === undefined ? [index] : ['agent seat', seat, index];
  const reply = await policy.respond({
    id: `${task.mode}:${task.envId}:${task.episodeId}${caller}:${index}`,
    promptIds: turn.promptIds,
    maxNewTokens: Math.min(turn.maxTokens ?? Number.POSITIVE_INFINITY, custom.max_tokens_per_step, limits.maxNewTokens, room),
    rng: Rng.fromSeed(limits.runSeed, 'rollout', task.mode, task.tag, task.envId, task.episodeId, ...stream),
    env,
    session: `${task.mode}:${task.envId}${caller}`,
    stopStrings: turn.stop,
  });
  if (reply.failure) {
    notes.inferFailed = reply.failure.kind === 'infer';
    return { failure: reply.failure.reason, status: 502 };
  }
  const text = chat.responseText(reply.tokens);
  return {
    generation: {
      text,
      tokens: reply.tokens,
      logProbs: reply.logProbs,
      finish: reply.finishReason === 'length' ? 'length' : 'stop',
      promptTokens: turn.promptIds.length,
    },
  };
}

/** Reset, the agent's run through the session, then step() with its output; what ends the episode first ends it. */
async function runAgent(
  { env, custom, task, policy }: EpisodePlay,
  session: GatewaySession,
  deadline: Deadline,
  signal: AbortSignal,
  notes: CallNotes,
): Promise<AgentRun> {
  const budget = `within the episode budget of ${custom.episode_timeout_s} s`;
  const ended = (endReason: EndReason, failure: string | null, observation = ''): AgentRun => ({
    endReason,
    failure,
    observation,
    finalObservation: '',
    answer: null,
    step: null,
  });
  const reset = await deadline.race(env.reset(task.seed, task.draw));
  if (reset === EXPIRED) {
    env.abandon();
    return ended('timeout', `reset() did not finish ${budget}`);
  }
  if (reset.failure) return ended('env_failure', reset.failure.reason);
  if (policy.name === 'random' || policy.name === 'solution') {
    return ended('env_failure', `an outside agent calls a model; the ${policy.name} proxy has none (use the policy or an inference server)`);
  }
  const { observation } = reset;
  const ran = await deadline.race(
    env.runAgent({ baseUrl: session.baseUrl, apiKey: session.key, model: GATEWAY_MODEL, deadline: session.options.deadline, signal }),
  );
  if (ran === EXPIRED) {
    env.abandon();
    return ended('timeout', `the agent did not finish ${budget}`, observation);
  }
  if (session.problem) {
    env.abandon();
    return ended(stoppedSessionEnding(notes), `agent: ${session.problem}`, observation);
  }
  if (ran.failure) return ended('env_failure', ran.failure.reason, observation);
  if (session.calls.length === 0) {
    env.abandon();
    const why =
      session.firstRefusal === null
        ? 'the agent never called the model'
        : `the gateway refused every model call of the agent (${session.refused}), the first: ${session.firstRefusal}`;
    return ended('env_failure', `agent: ${why}`, observation);
  }
  const scored = await deadline.race(env.step(ran.value));
  if (scored === EXPIRED) {
    env.abandon();
    return { ...ended('timeout', `step() did not finish ${budget}`, observation), answer: ran.value };
  }
  const endReason = scored.failure ? 'env_failure' : scored.terminated ? 'terminated' : 'truncated';
  return { endReason, failure: scored.failure?.reason ?? null, observation, finalObservation: scored.observation, answer: ran.value, step: scored };
}

/** The recorded calls as the episode's turns (session_turns.ts), the reward on the last; and how often the session split. */
function agentTurns(play: EpisodePlay, calls: readonly RecordedCall[], run: AgentRun): { turns: Turn[]; mismatches: number } {
  const { observation, answer, step } = run;
  const { turns, mismatches } = recordedCallTurns(play, calls, observation);
  const at = turns.length - 1;
  if (at >= 0) {
    const { observation: shown, promptIds, responseIds, logProbs, responseText, stateHash: hash, opensRow } = turns[at]!;
    turns[at] = {
      observation: shown,
      promptIds,
      responseIds,
      logProbs,
      responseText,
      reward: step ? step.reward : 0,
      ...(answer !== null ? { action: answer } : {}),
      ...(step?.info.actionDesc ? { actionDesc: step.info.actionDesc } : {}),
      metrics: step ? step.info.metrics : {},
      metricsAgg: step ? (step.info.metricsAgg ?? {}) : {},
      ...(step?.info.reward_error !== undefined ? { rewardError: step.info.reward_error } : {}),
      stateHash: hash,
      ...(opensRow ? { opensRow } : {}),
    };
  }
  return { turns, mismatches };
}

/**
 * A gateway session's recorded calls as turns with no reward yet: one row while each call extends
 * the last, a new row where the session splits (step-wise managers: every call its own row, its
 * whole prompt); `observation` is the first turn's. Shared with outside agents in a seat.
 */
export function recordedCallTurns({ custom, chat }: Pick<EpisodePlay, 'custom' | 'chat'>, calls: readonly RecordedCall[], observation: string) {
  const { turns: called, mismatches } = sessionTurns(calls);
  const turns: Turn[] = called.map((call, i) => ({
    observation: i === 0 ? observation : '',
    promptIds: isStepWise(custom.env_manager_cls) ? [...calls[i]!.promptIds] : call.promptIds,
    responseIds: call.responseIds,
    logProbs: call.logProbs,
    responseText: chat.responseText(call.responseIds),
    reward: 0,
    metrics: {},
    metricsAgg: {},
    stateHash: stateHash(i === 0 ? observation : `${observation}\n#${i}`),
    ...(call.opensRow && i > 0 && custom.env_manager_cls === 'traj' ? { opensRow: true } : {}),
  }));
  return { turns, mismatches };
}
