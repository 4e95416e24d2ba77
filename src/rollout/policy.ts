/**
 * Who answers the environments during a rollout. `ModelPolicy` samples from a model through the
 * continuous-batching scheduler; `RandomPolicy` needs no model and answers with each env's
 * sampleRandomAction(), so envs and pipelines can be tried without one (ROLL's random proxy);
 * `SolutionPolicy` answers with each env's worked solution (the warm start's worked examples).
 * `HttpPolicy` (./http_policy.ts) asks inference servers. All return token ids, so the rest of
 * the rollout is the same code either way.
 */
import type { Rng } from '../engine/rng';
import type { FinishReason } from '../model/generate';
import type { Qwen2Model } from '../model/qwen2';
import type { SamplingParams } from '../model/sampling';
import type { EnvFailure, GuardedEnv, GuardedSample } from '../sdk/guarded_env';
import type { ChatFormat } from './chat';
import { GenerationScheduler, type SchedulerStats } from './scheduler';

export interface TurnQuery {
  /** Unique among the queries in flight. */
  id: string;
  /** The whole context the response continues. */
  promptIds: readonly number[];
  maxNewTokens: number;
  rng: Rng;
  /** The env being answered (the random policy asks it for an action). */
  env: GuardedEnv;
  /** One per environment: a model policy reuses the keys and values of the session's last turn. */
  session: string;
  /** Stop strings of this turn besides the rollout's (an outside agent's `stop`). */
  stopStrings?: readonly string[];
}

/**
 * An inference server gave no usable response to a turn (down, timing out, answering with an
 * error or nonsense) after its retries: the episode ends as `infer_failure`, as a broken env ends
 * its episode as `env_failure`.
 */
export interface InferFailure {
  kind: 'infer';
  /** One line naming the server and what went wrong. */
  reason: string;
}

/** `random`: the env's random action; `solution`: its worked solution; `given`: a response typed or scripted by a person (agentic play). */
export type TurnReply =
  | { tokens: number[]; logProbs: number[]; finishReason: FinishReason | 'random' | 'given' | 'solution'; failure: null }
  | { failure: EnvFailure | InferFailure };

export interface Policy {
  readonly name: string;
  /** It answers from another process (an inference server), so a turn can fail for want of an answer (InferFailure). */
  readonly remote: boolean;
  respond(query: TurnQuery): Promise<TurnReply>;
  /** Gives up on a query in flight (its episode ran out of time). */
  cancel(id: string): void;
  /** Tokens generated so far, and the batching counters where there is a batch. */
  stats(): Pick<SchedulerStats, 'generatedTokens'> & Partial<SchedulerStats>;
  close(): Promise<void>;
}

export interface ModelPolicyOptions {
  sampling: SamplingParams;
  stopStrings: readonly string[] | null;
  /** Most rows decoded together (max_running_requests). */
  maxRunning: number;
  /** Most positions a row may reach (sequence_length). */
  maxLength: number;
}

export class ModelPolicy implements Policy {
  readonly name = 'policy';
  readonly remote = false;
  private readonly scheduler: GenerationScheduler;

  constructor(
    model: Qwen2Model,
    private readonly chat: ChatFormat,
    private readonly options: ModelPolicyOptions,
  ) {
    const maxLength = Math.min(options.maxLength, model.config.max_position_embeddings);
    this.scheduler = new GenerationScheduler(model, { maxRunning: options.maxRunning, maxLength, decode: (ids) => chat.responseText(ids) });
  }

  async respond(query: TurnQuery): Promise<TurnReply> {
    const result = await this.scheduler.generate(
      {
        id: query.id,
        promptIds: query.promptIds,
        sampling: this.options.sampling,
        maxNewTokens: query.maxNewTokens,
        rng: query.rng,
        stopTokenIds: this.chat.stopTokenIds,
        stopStrings: query.stopStrings?.length ? [...(this.options.stopStrings ?? []), ...query.stopStrings] : (this.options.stopStrings ?? undefined),
      },
      query.session,
    );
    return { tokens: result.tokens, logProbs: result.logProbs, finishReason: result.finishReason, failure: null };
  }

  cancel(id: string): void {
    this.scheduler.cancel(id);
  }

  stats(): SchedulerStats {
    return { ...this.scheduler.stats };
  }

  close(): Promise<void> {
    return this.scheduler.close();
  }
}

/** An env's own action as the policy's response: its ids, cut to the `maxNewTokens` a model would have. */
export function envActionTokens(chat: ChatFormat, response: string, maxNewTokens: number): number[] {
  return chat.tokenizer.encode(response, { addSpecialTokens: false }).slice(0, maxNewTokens);
}

/**
 * Answers with an action the env gives itself, cut to the token budget a model has (the env then
 * sees the text of the ids kept): its random one, or its worked solution.
 */
abstract class EnvActionPolicy implements Policy {
  abstract readonly name: 'random' | 'solution';
  readonly remote = false;
  private generated = 0;

  constructor(private readonly chat: ChatFormat) {}

  protected abstract action(env: GuardedEnv): Promise<GuardedSample>;

  async respond(query: TurnQuery): Promise<TurnReply> {
    const sample = await this.action(query.env);
    if (sample.failure) return { failure: sample.failure };
    const tokens = envActionTokens(this.chat, sample.response, query.maxNewTokens);
    this.generated += tokens.length;
    return { tokens, logProbs: tokens.map(() => 0), finishReason: this.name, failure: null };
  }

  cancel(): void {}

  stats(): Pick<SchedulerStats, 'generatedTokens'> {
    return { generatedTokens: this.generated };
  }

  async close(): Promise<void> {}
}

/** Each env's random valid action (Env.sampleRandomAction): ROLL's random proxy, no model needed. */
export class RandomPolicy extends EnvActionPolicy {
  readonly name = 'random';
  protected action(env: GuardedEnv): Promise<GuardedSample> {
    return env.sampleRandomAction();
  }
}

/**
 * Each env's worked solution (WarmStartHooks.solutionAction): the warm start's worked examples
 * (warm_start.worked_examples) are episodes played with it, through the rollout's own prompts.
 */
export class SolutionPolicy extends EnvActionPolicy {
  readonly name = 'solution';
  protected action(env: GuardedEnv): Promise<GuardedSample> {
    return env.solutionAction();
  }
}
