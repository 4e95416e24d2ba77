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
import type { GuardedEnv } from '../sdk/guarded_env';
import type { ChatFormat } from './chat';
import { type EpisodeLimits, type EpisodeTask, recordEpisode, stateHash } from './episode_record';
import { Gateway, type Generated } from './gateway/gateway';
import { continuesSession, sessionTurns } from './gateway/session_turns';
import type { Policy } from './policy';
import type { EndReason, Episode, Turn } from './types';

/** The name the gateway answers to in /v1/models and replies. */
export const GATEWAY_MODEL = 'agentic-policy';

let gateway: Gateway | null = null;

/** The process's gateway, started at the first agent episode. */
function sharedGateway(): Gateway {
  gateway ??= Gateway.start();
  return gateway;
}

/** Stops the gateway (at the end of a rollout's life); the next agent episode starts it again. */
export async function stopGateway(): Promise<void> {
  const running = gateway;
  gateway = null;
  await running?.stop();
}

const EXPIRED = Symbol('expired');

export async function playAgentEpisode(
  env: GuardedEnv,
  custom: CustomEnvConfig,
  task: EpisodeTask,
  limits: EpisodeLimits,
  policy: Policy,
  chat: ChatFormat,
): Promise<Episode> {
  const started = performance.now();
  const budgetMs = custom.episode_timeout_s * 1000;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<typeof EXPIRED>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(EXPIRED);
    }, budgetMs);
  });
  const race = <T>(work: Promise<T>) => Promise.race([work, expired]);
  let endReason: EndReason = 'terminated';
  let failure: string | null = null;
  let observation = '';
  let finalObservation = '';
  let answer: string | null = null;
  let step: Awaited<ReturnType<GuardedEnv['step']>> | null = null;
  let overridden = 0;
  let contextFull = false;
  let inferFailed = false;
  const session = sharedGateway().open({
    model: GATEWAY_MODEL,
    tokenizer: chat.tokenizer,
    piece: chat.responsePiece,
    deadline: Date.now() + budgetMs,
    maxCalls: custom.max_steps,
    generate: async (turn, index): Promise<Generated> => {
      const room = limits.sequenceLength - turn.promptIds.length;
      if (room <= 0) {
        contextFull = true;
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
      if (asksOtherwise) overridden++;
      const id = `${task.mode}:${task.envId}:${task.episodeId}:${index}`;
      const reply = await policy.respond({
        id,
        promptIds: turn.promptIds,
        maxNewTokens: Math.min(turn.maxTokens ?? Number.POSITIVE_INFINITY, custom.max_tokens_per_step, limits.maxNewTokens, room),
        rng: Rng.fromSeed(limits.runSeed, 'rollout', task.mode, task.tag, task.envId, task.episodeId, index),
        env,
        session: `${task.mode}:${task.envId}`,
        stopStrings: turn.stop,
      });
      if (reply.failure) {
        inferFailed = reply.failure.kind === 'infer';
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
    },
  });

  try {
    const reset = await race(env.reset(task.seed, task.draw));
    if (reset === EXPIRED) {
      env.abandon();
      endReason = 'timeout';
      failure = `reset() did not finish within the episode budget of ${custom.episode_timeout_s} s`;
    } else if (reset.failure) {
      endReason = 'env_failure';
      failure = reset.failure.reason;
    } else if (policy.name === 'random' || policy.name === 'solution') {
      endReason = 'env_failure';
      failure = `an outside agent calls a model; the ${policy.name} proxy has none (use the policy or an inference server)`;
    } else {
      observation = reset.observation;
      const ran = await race(
        env.runAgent({ baseUrl: session.baseUrl, apiKey: session.key, model: GATEWAY_MODEL, deadline: session.options.deadline, signal: controller.signal }),
      );
      if (ran === EXPIRED) {
        env.abandon();
        endReason = 'timeout';
        failure = `the agent did not finish within the episode budget of ${custom.episode_timeout_s} s`;
      } else if (session.problem) {
        endReason = contextFull ? 'context_full' : inferFailed ? 'infer_failure' : 'env_failure';
        failure = `agent: ${session.problem}`;
        env.abandon();
      } else if (ran.failure) {
        endReason = 'env_failure';
        failure = ran.failure.reason;
      } else if (session.calls.length === 0) {
        endReason = 'env_failure';
        failure = 'agent: the agent never called the model';
        env.abandon();
      } else {
        answer = ran.value;
        const scored = await race(env.step(ran.value));
        if (scored === EXPIRED) {
          env.abandon();
          endReason = 'timeout';
          failure = `step() did not finish within the episode budget of ${custom.episode_timeout_s} s`;
        } else {
          step = scored;
          finalObservation = scored.observation;
          if (scored.failure) {
            endReason = 'env_failure';
            failure = scored.failure.reason;
          } else endReason = scored.terminated ? 'terminated' : 'truncated';
        }
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
    sharedGateway().close(session);
  }

  const { turns: called, mismatches } = sessionTurns(session.calls);
  const turns: Turn[] = called.map((call, i) => {
    const last = i === called.length - 1;
    const whole = isStepWise(custom.env_manager_cls) ? [...session.calls[i]!.promptIds] : call.promptIds;
    return {
      observation: i === 0 ? observation : '',
      promptIds: whole,
      responseIds: call.responseIds,
      logProbs: call.logProbs,
      responseText: chat.responseText(call.responseIds),
      reward: last && step ? step.reward : 0,
      ...(last && answer !== null ? { action: answer } : {}),
      ...(last && step?.info.actionDesc ? { actionDesc: step.info.actionDesc } : {}),
      metrics: last && step ? step.info.metrics : {},
      metricsAgg: last && step ? (step.info.metricsAgg ?? {}) : {},
      stateHash: stateHash(i === 0 ? observation : `${observation}\n#${i}`),
      ...(call.opensRow && i > 0 && custom.env_manager_cls === 'traj' ? { opensRow: true } : {}),
    };
  });
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
      gateway_sampling_overridden: overridden,
    },
  };
}
