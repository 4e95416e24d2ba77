/**
 * One episode of one environment: reset with the group's seed, then ask the policy and step the
 * env turn by turn until the env ends it, the action budget (max_steps) is spent, the next prompt
 * no longer fits in sequence_length, or the episode's time budget runs out.
 *
 * Trajectory-wise (traj) the context grows: each turn's new ids are appended after the previous
 * response exactly as sampled (see chat.ts). Step-wise (step) every turn is a fresh prompt built
 * from the instruction, the last `history_length` steps and the current observation.
 *
 * Function calling: an env whose reset info gives `tools` (OpenAI function definitions) has them
 * listed by the chat template in every first turn, and a step whose info gives `tool_results`
 * has them shown as tool messages in the next trajectory turn (agent_template does not apply).
 *
 * The time budget (episode_timeout_s) is the straggler guard: whatever is in flight when it runs
 * out (a generation, an env call) is abandoned, the episode ends as `timeout`, and the envs and
 * sequences of the other episodes never wait for it.
 */
import type { CustomEnvConfig } from '../config/schema';
import { DEFAULT_SYSTEM_TEMPLATE, defaultTemplate, fillTemplate } from '../config/templates';
import { Rng } from '../engine/rng';
import type { GuardedEnv, GuardedStep } from '../sdk/guarded_env';
import { playAgentEpisode } from './agent_episode';
import type { ChatFormat } from './chat';
import { type EpisodeLimits, type EpisodeTask, recordEpisode, stateHash } from './episode_record';
import type { Policy } from './policy';
import type { EndReason, Episode, Turn } from './types';

/** A turn as the policy is about to see it. */
export interface TurnStart {
  /** 0-based. */
  step: number;
  instruction: string;
  observation: string;
  /** This turn's new ids (traj: appended to the chat so far; step: the whole prompt). */
  promptIds: readonly number[];
  /** Everything the policy's response continues: exactly the ids it is given. */
  contextIds: readonly number[];
  /** Ids the response may still take before sequence_length; 0 or less ends the episode (context_full). */
  room: number;
}

/**
 * Watches an episode turn by turn, for `agentic play`; rollouts pass none. Its calls are awaited
 * outside the race against the episode's time budget, but the budget's clock runs on meanwhile,
 * so play lifts the budget (episode_timeout_s: Infinity) while a person is in the loop.
 */
export interface EpisodeObserver {
  /** The prompt is built; the policy is asked next, unless the prompt leaves no room. */
  beforeTurn?(turn: TurnStart): void | Promise<void>;
  /** The env has taken the response: the turn as recorded, and the env's whole step result (its info too). */
  afterTurn?(turn: Turn, step: GuardedStep): void | Promise<void>;
}

const EXPIRED = Symbol('expired');

/** The episode's time budget as a promise that settles when it runs out (never, for Infinity). */
class Deadline {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly expired: Promise<typeof EXPIRED>;

  constructor(ms: number) {
    this.expired = new Promise((resolve) => {
      if (Number.isFinite(ms)) this.timer = setTimeout(() => resolve(EXPIRED), ms);
    });
  }

  race<T>(work: Promise<T>): Promise<T | typeof EXPIRED> {
    return Promise.race([work, this.expired]);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** A step's `tool_results` (function calling: its observation as tool messages), when it gives them. */
function toolResultsOf(value: unknown): string[] | null {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string') ? value : null;
}

/** Recent steps as a step-wise prompt shows them, oldest first. */
function historyText(turns: readonly Turn[], firstStep: number): string {
  if (turns.length === 0) return '(none yet)';
  return turns
    .map((turn, i) => {
      const invalid = turn.metrics.action_is_valid === false ? ' (not a valid action)' : '';
      return `[step ${firstStep + i + 1}] observation:\n${turn.observation}\nyour response: ${turn.responseText.trim()}${invalid}\nreward: ${turn.reward}`;
    })
    .join('\n');
}

/**
 * step_concat's {history}: the earlier observations, one per line, as ROLL's StepConcatEnvManager
 * takes them (`history[-history_length:-1]`: the last history_length - 1, and for 0 every one,
 * since Python reads -0 as 0).
 */
export function concatHistory(earlier: readonly string[], historyLength: number): string {
  const kept = historyLength === 0 ? earlier : earlier.slice(Math.max(0, earlier.length - (historyLength - 1)));
  return kept.join('\n');
}

export async function playEpisode(
  env: GuardedEnv,
  custom: CustomEnvConfig,
  task: EpisodeTask,
  limits: EpisodeLimits,
  policy: Policy,
  chat: ChatFormat,
  observer: EpisodeObserver = {},
): Promise<Episode> {
  if (env.playedByAgent) return playAgentEpisode(env, custom, task, limits, policy, chat);
  const kind = custom.env_manager_cls;
  const system = custom.agent_system_template ?? DEFAULT_SYSTEM_TEMPLATE;
  const template = custom.agent_template ?? defaultTemplate(kind);
  const started = performance.now();
  const deadline = new Deadline(custom.episode_timeout_s * 1000);
  const turns: Turn[] = [];
  const context: number[] = [];
  let instruction = '';
  let observation = '';
  /** GEM's text after the observation ({suffix}); step_concat's prompt shows it with the current observation. */
  let suffix = '';
  /** Every observation so far, for step_concat's history (ROLL's StepConcatEnvManager shows the earlier ones). */
  const observations: string[] = [];
  /** Function calling: the tools the env gives the chat template, and the last step's tool results. */
  let tools: readonly unknown[] | undefined;
  let toolResults: readonly string[] | null = null;
  let endReason: EndReason = 'max_actions';
  let failure: string | null = null;

  try {
    const reset = await deadline.race(env.reset(task.seed, task.draw, task.episode ? { episode: task.episode } : undefined));
    if (reset === EXPIRED) {
      env.abandon();
      endReason = 'timeout';
      failure = `reset() did not finish within the episode budget of ${custom.episode_timeout_s} s`;
    } else if (reset.failure) {
      endReason = 'env_failure';
      failure = reset.failure.reason;
    } else {
      instruction = reset.info.instruction;
      observation = reset.observation;
      suffix = reset.info.suffix ?? '';
      observations.push(observation);
      tools = Array.isArray(reset.info.tools) ? reset.info.tools : undefined;
      for (let step = 0; ; step++) {
        if (step >= custom.max_steps) {
          endReason = 'max_actions';
          break;
        }
        const actionsLeft = custom.max_steps - step;
        let promptIds: number[];
        if (kind === 'traj') {
          const user = fillTemplate(template, {
            turn_idx: step + 1,
            observation,
            actions_left: actionsLeft,
            max_response_length: custom.max_tokens_per_step,
            suffix,
          });
          const next = toolResults ? ({ role: 'tool', results: toolResults } as const) : user;
          promptIds =
            step === 0 ? chat.firstTurn(system, instruction ? `${instruction}\n${user}` : user, tools) : chat.nextTurn(turns[step - 1]!.responseIds, next);
        } else if (kind === 'step_concat') {
          const user = fillTemplate(template, {
            history: concatHistory(observations.slice(0, -1), custom.history_length),
            current_observation: `${observation}\n${suffix}`,
          });
          promptIds = chat.firstTurn(system, user, tools);
        } else {
          const memory = custom.history_length > 0 ? turns.slice(-custom.history_length) : [];
          const user = fillTemplate(template, {
            env_instruction: instruction,
            step_count: step,
            history_length: memory.length,
            history: historyText(memory, step - memory.length),
            current_step: step + 1,
            current_observation: observation,
            actions_left: actionsLeft,
            max_response_length: custom.max_tokens_per_step,
            suffix,
          });
          promptIds = chat.firstTurn(system, user, tools);
        }
        const contextIds = kind === 'traj' ? [...context, ...promptIds] : promptIds;
        const room = limits.sequenceLength - contextIds.length;
        await observer.beforeTurn?.({ step, instruction, observation, promptIds, contextIds, room });
        if (room <= 0) {
          endReason = 'context_full';
          break;
        }
        const id = `${task.mode}:${task.envId}:${task.episodeId}:${step}`;
        const reply = await deadline.race(
          policy.respond({
            id,
            promptIds: contextIds,
            maxNewTokens: Math.min(custom.max_tokens_per_step, limits.maxNewTokens, room),
            rng: Rng.fromSeed(limits.runSeed, 'rollout', task.mode, task.tag, task.envId, task.episodeId, step),
            env,
            session: `${task.mode}:${task.envId}`,
          }),
        );
        if (reply === EXPIRED) {
          policy.cancel(id);
          endReason = 'timeout';
          failure = `the policy's response did not come within the episode budget of ${custom.episode_timeout_s} s`;
          break;
        }
        if (reply.failure) {
          endReason = reply.failure.kind === 'infer' ? 'infer_failure' : 'env_failure';
          failure = reply.failure.reason;
          break;
        }
        const responseText = chat.responseText(reply.tokens);
        const result = await deadline.race(env.step(responseText));
        if (result === EXPIRED) {
          env.abandon();
          endReason = 'timeout';
          failure = `step() did not finish within the episode budget of ${custom.episode_timeout_s} s`;
          break;
        }
        const turn: Turn = {
          observation,
          promptIds,
          responseIds: reply.tokens,
          logProbs: reply.logProbs,
          responseText,
          reward: result.reward,
          action: result.info.action,
          actionDesc: result.info.actionDesc,
          metrics: result.info.metrics,
          metricsAgg: result.info.metricsAgg ?? {},
          stateHash: stateHash(observation),
        };
        turns.push(turn);
        await observer.afterTurn?.(turn, result);
        context.push(...promptIds, ...reply.tokens);
        observation = result.observation;
        suffix = result.info.suffix ?? '';
        observations.push(observation);
        toolResults = toolResultsOf(result.info.tool_results);
        if (result.failure) {
          endReason = 'env_failure';
          failure = result.failure.reason;
          break;
        }
        if (result.terminated) {
          endReason = 'terminated';
          break;
        }
        if (result.truncated) {
          endReason = 'truncated';
          break;
        }
      }
    }
  } finally {
    deadline.clear();
  }

  return recordEpisode(task, { kind, instruction, turns, finalObservation: observation, endReason, failure, remote: policy.remote, started });
}
