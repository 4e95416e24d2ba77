/**
 * A policy whose responses come from inference servers over HTTP: `sglang` speaks SGLang's native
 * POST /generate, `openai` POST /v1/completions with a token-id prompt (the fields vLLM and SGLang
 * take). Token-exact: the prompt goes as the ids the chat format built (TurnQuery.promptIds), and
 * the output ids and their log-probs enter the rows as the server sent them; nothing is decoded
 * and encoded again, so the trainer scores the very tokens that were sampled.
 *
 * Each request carries a seed drawn from the turn's Rng (sampling_seed, seed), so a run against a
 * server that honours seeds repeats, retries included. A request that gets no usable answer is
 * asked again (max_retries, on the next server of the list, after a doubling backoff); after the
 * last try the episode ends as infer_failure. A refusal (a 4xx) is not asked again, but it is no
 * usable answer either: when no server has given one for unavailable_timeout_s the respond() that
 * notices throws, and the run stops (./servers.ts).
 *
 * A server that restarted answers with the version it started with, or does not know the adapter a
 * LoRA run names: whoever sends the weights told the servers how to put them back
 * (InferenceServers.restoreWeights), and the turn is asked again at once once they are back.
 */
import { randomBytes } from 'node:crypto';
import type { GeneratingConfig, HttpProxyType } from '../config/schema';
import { firstLine } from '../errors';
import type { FinishReason } from '../model/generate';
import type { SchedulerStats } from './scheduler';
import type { InferFailure, Policy, TurnQuery, TurnReply } from './policy';
import { backoffMs, CallFailure, pause, type InferenceServers } from './servers';

/** What a server is asked to sample with: generating_args in SGLang's names. */
export interface ServerSampling {
  temperature: number;
  top_p: number;
  /** -1: off (SGLang's and vLLM's value). */
  top_k: number;
  stop: string[];
  stop_token_ids: number[];
}

/** generating_args as a server takes them: greedy is temperature 0, top_k 0 is -1. */
export function serverSampling(gen: GeneratingConfig, stopTokenIds: readonly number[]): ServerSampling {
  return {
    temperature: gen.do_sample ? gen.temperature : 0,
    top_p: gen.top_p,
    top_k: gen.top_k === 0 ? -1 : gen.top_k,
    stop: [...(gen.stop_strings ?? [])],
    stop_token_ids: [...stopTokenIds],
  };
}

export interface ServerTurn {
  promptIds: readonly number[];
  maxNewTokens: number;
  seed: number;
  /** Stop strings of this turn besides the rollout's. */
  stop?: readonly string[];
}

/** The body of SGLang's POST /generate for one turn; `adapter` names the LoRA adapter to generate with (its `lora_path`). */
export function generateRequest(turn: ServerTurn, sampling: ServerSampling, rid: string, adapter: string | null = null): Record<string, unknown> {
  return {
    input_ids: [...turn.promptIds],
    sampling_params: { ...sampling, max_new_tokens: turn.maxNewTokens, sampling_seed: turn.seed },
    return_logprob: true,
    rid,
    ...(adapter === null ? {} : { lora_path: adapter }),
  };
}

/** The body of POST /v1/completions for one turn: the prompt as token ids, the output as ids with their log-probs. */
export function completionsRequest(turn: ServerTurn, sampling: ServerSampling, model: string): Record<string, unknown> {
  return {
    model,
    prompt: [...turn.promptIds],
    max_tokens: turn.maxNewTokens,
    temperature: sampling.temperature,
    top_p: sampling.top_p,
    top_k: sampling.top_k,
    seed: turn.seed,
    stop: sampling.stop,
    stop_token_ids: sampling.stop_token_ids,
    logprobs: 0,
    return_token_ids: true,
    return_tokens_as_token_ids: true,
  };
}

/** A server's response to one turn. */
export interface ServerReply {
  tokens: number[];
  logProbs: number[];
  finishReason: FinishReason;
  /** The weight version that generated it, where the server says (SGLang's meta_info.weight_version). */
  weightVersion: string | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isTokenId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** Nonsense in an answer: asking again will not help. */
const malformed = (what: string) => new CallFailure(`the answer ${what}`, false);

/** Output ids and log-probs that fit the turn: as many of each, within the token budget, finite. */
function checkOutput(tokens: unknown, logProbs: unknown[], maxNewTokens: number): { tokens: number[]; logProbs: number[] } {
  if (!Array.isArray(tokens) || !tokens.every(isTokenId)) throw malformed('has no list of output token ids');
  if (tokens.length > maxNewTokens) throw malformed(`has ${tokens.length} output ids, over the ${maxNewTokens} asked for`);
  if (logProbs.length !== tokens.length) throw malformed(`has ${logProbs.length} log-probs for ${tokens.length} output ids`);
  if (!logProbs.every((lp) => typeof lp === 'number' && Number.isFinite(lp))) throw malformed('has a log-prob that is not a finite number');
  return { tokens, logProbs: logProbs as number[] };
}

/** A stop that ended on one of our stop ids is a stop token; any other stop is a stop string. */
function stopKind(tokens: readonly number[], stopTokenIds: readonly number[]): FinishReason {
  return tokens.length > 0 && stopTokenIds.includes(tokens[tokens.length - 1]!) ? 'stop_token' : 'stop_string';
}

/**
 * SGLang's /generate answer: output_ids, and meta_info's finish_reason, output_token_logprobs
 * ([logprob, token id, text] per output id; the ids must be the output ids) and weight_version.
 * A request the server aborted is retryable (a drain, a weight update that aborts what runs).
 */
export function parseGenerate(answer: unknown, maxNewTokens: number, stopTokenIds: readonly number[]): ServerReply {
  if (!isRecord(answer) || !isRecord(answer.meta_info)) throw malformed('has no meta_info');
  const meta = answer.meta_info;
  const finish = meta.finish_reason;
  if (!isRecord(finish) || typeof finish.type !== 'string') throw malformed('has no meta_info.finish_reason');
  if (finish.type === 'abort') throw new CallFailure(`the server aborted the request: ${String(finish.message ?? 'no reason given')}`, true);
  const entries = meta.output_token_logprobs;
  if (!Array.isArray(entries)) throw malformed('has no meta_info.output_token_logprobs');
  const { tokens, logProbs } = checkOutput(
    answer.output_ids,
    entries.map((entry) => (Array.isArray(entry) ? entry[0] : undefined)),
    maxNewTokens,
  );
  entries.forEach((entry, i) => {
    if ((entry as unknown[])[1] !== tokens[i])
      throw malformed(`gives the log-prob of token ${String((entry as unknown[])[1])} for output id ${tokens[i]} (position ${i})`);
  });
  let finishReason: FinishReason;
  if (finish.type === 'length') finishReason = 'length';
  else if (finish.type === 'stop') finishReason = typeof finish.matched === 'string' ? 'stop_string' : stopKind(tokens, stopTokenIds);
  else throw malformed(`has finish_reason ${finish.type}`);
  const version = meta.weight_version;
  return { tokens, logProbs, finishReason, weightVersion: typeof version === 'string' ? version : null };
}

/**
 * An OpenAI completions answer: choices[0] with token_ids (vLLM's return_token_ids) and
 * logprobs.tokens ("token_id:N", return_tokens_as_token_ids) with logprobs.token_logprobs.
 */
export function parseCompletions(answer: unknown, maxNewTokens: number, stopTokenIds: readonly number[]): ServerReply {
  const choice = isRecord(answer) && Array.isArray(answer.choices) ? answer.choices[0] : undefined;
  if (!isRecord(choice)) throw malformed('has no choices[0]');
  if (choice.finish_reason === 'abort') throw new CallFailure('the server aborted the request', true);
  const logprobs = choice.logprobs;
  if (!isRecord(logprobs) || !Array.isArray(logprobs.token_logprobs)) throw malformed('has no choices[0].logprobs.token_logprobs');
  const named = Array.isArray(logprobs.tokens)
    ? logprobs.tokens.map((token) => {
        const match = typeof token === 'string' ? /^token_id:(\d+)$/.exec(token) : null;
        return match ? Number(match[1]) : null;
      })
    : null;
  const ids = choice.token_ids ?? named;
  const { tokens, logProbs } = checkOutput(ids, logprobs.token_logprobs, maxNewTokens);
  if (named && named.some((id, i) => id !== tokens[i])) throw malformed('has logprobs.tokens that are not its token_ids');
  let finishReason: FinishReason;
  if (choice.finish_reason === 'length') finishReason = 'length';
  else if (choice.finish_reason === 'stop') finishReason = stopKind(tokens, stopTokenIds);
  else throw malformed(`has finish_reason ${String(choice.finish_reason)}`);
  return { tokens, logProbs, finishReason, weightVersion: null };
}

export interface HttpPolicyOptions {
  sampling: ServerSampling;
}

/**
 * Request ids (rid) a server sees side by side from every client: a random part of the process's
 * own (two workers in containers share a process id, 1), and a count of its policies.
 */
const PROCESS_RID = randomBytes(8).toString('hex');
let policies = 0;

export class HttpPolicy implements Policy {
  readonly remote = true;
  private generated = 0;
  private readonly ridPrefix: string;
  private readonly inFlight = new Map<string, { controller: AbortController; server: number; rid: string }>();
  /** /abort_request calls on their way, awaited by close(). */
  private readonly aborting = new Set<Promise<void>>();

  constructor(
    private readonly servers: InferenceServers,
    private readonly options: HttpPolicyOptions,
  ) {
    if (!servers.ready) throw new Error(`${servers.label}: a policy of servers that connect() has not checked`);
    policies += 1;
    this.ridPrefix = `agentic-${PROCESS_RID}-${policies}`;
  }

  get name(): HttpProxyType {
    return this.servers.type;
  }

  async respond(query: TurnQuery): Promise<TurnReply> {
    const { servers } = this;
    const seed = query.rng.nextUint32() >>> 1;
    const controller = new AbortController();
    const turn: ServerTurn = { promptIds: query.promptIds, maxNewTokens: query.maxNewTokens, seed, stop: query.stopStrings ?? [] };
    // the server whose weights a restart lost and this turn put back: asked again at once, once
    let restored: number | null = null;
    let restores = 0;
    try {
      for (let attempt = 0; ; attempt++) {
        const server: number = restored ?? servers.router.serverFor(query.session, attempt);
        restored = null;
        const rid = `${this.ridPrefix}-${query.id}-${attempt}`;
        this.inFlight.set(query.id, { controller, server, rid });
        try {
          const reply = await this.ask(server, turn, rid, controller.signal);
          servers.answered();
          servers.router.pin(query.session, server);
          this.generated += reply.tokens.length;
          return { tokens: reply.tokens, logProbs: reply.logProbs, finishReason: reply.finishReason, failure: null };
        } catch (error) {
          if (controller.signal.aborted) return this.failed('the request was cancelled');
          if (!(error instanceof CallFailure)) throw error;
          // a server still busy with a timed-out request would spend its batch on it
          if (this.servers.type === 'sglang' && error.timedOut) this.abortOn(server, rid);
          servers.noAnswer(error);
          if (error.lostWeights && restores === 0) {
            // a restarted server (its retries may have gone while it was down): the weights go
            // back, and the turn is asked again at once, beyond max_retries
            restores++;
            const back = await servers.restore(server).catch((restoreError: unknown) => {
              if (restoreError instanceof Error) return `putting the weights back failed: ${firstLine(restoreError)}`;
              throw restoreError;
            });
            if (back === true) {
              restored = server;
              continue;
            }
            if (typeof back === 'string') return this.failed(`${error.message}; ${back}`);
          }
          if (!error.retryable) return this.failed(error.message);
          if (attempt >= servers.config.max_retries) return this.failed(`${error.message} (${attempt + 1} tries)`);
          await pause(error.retryAfterMs ?? backoffMs(attempt, servers.config.retry_backoff_s * 1000), controller.signal);
          if (controller.signal.aborted) return this.failed('the request was cancelled');
        }
      }
    } finally {
      this.inFlight.delete(query.id);
    }
  }

  /** One request on `server`; a reply that breaks the turn's contract is a CallFailure. */
  private async ask(server: number, turn: ServerTurn, rid: string, signal: AbortSignal): Promise<ServerReply> {
    const { servers } = this;
    const sampling = turn.stop?.length ? { ...this.options.sampling, stop: [...this.options.sampling.stop, ...turn.stop] } : this.options.sampling;
    const sglang = servers.type === 'sglang';
    const body = sglang ? generateRequest(turn, sampling, rid, servers.adapter) : completionsRequest(turn, sampling, servers.modelOf(server));
    let answer: unknown;
    try {
      answer = await servers.call(server, sglang ? '/generate' : '/v1/completions', body, signal);
    } catch (error) {
      // a server that does not know the adapter the run names lost it, or is another server
      if (error instanceof CallFailure && servers.adapter !== null && (error.status === 400 || error.status === 404)) {
        throw new CallFailure(error.message, false, { status: error.status, lostWeights: true });
      }
      throw error;
    }
    const parse = sglang ? parseGenerate : parseCompletions;
    let reply: ServerReply;
    try {
      reply = parse(answer, turn.maxNewTokens, sampling.stop_token_ids);
    } catch (error) {
      if (error instanceof CallFailure) throw new CallFailure(`${servers.urls[server]}: ${error.message}`, error.retryable);
      throw error;
    }
    const expected = servers.weightVersion;
    if (expected !== null && reply.weightVersion !== null && reply.weightVersion !== expected) {
      // a server that restarted, or that someone else updated: its tokens are not of the weights trained
      throw new CallFailure(`${servers.urls[server]}: answered with weight version ${reply.weightVersion}, not ${expected}`, true, { lostWeights: true });
    }
    return reply;
  }

  private failed(reason: string): { failure: InferFailure } {
    return { failure: { kind: 'infer', reason: `${this.servers.label}: ${reason}` } };
  }

  private abortOn(server: number, rid: string): void {
    const call = this.servers.abort(server, rid).finally(() => this.aborting.delete(call));
    this.aborting.add(call);
  }

  /** Gives up on a turn: its request is aborted here and, on SGLang's API, on the server. */
  cancel(id: string): void {
    const request = this.inFlight.get(id);
    if (!request) return;
    this.inFlight.delete(id);
    request.controller.abort();
    if (this.servers.type === 'sglang') this.abortOn(request.server, request.rid);
  }

  stats(): Pick<SchedulerStats, 'generatedTokens'> {
    return { generatedTokens: this.generated };
  }

  /** Aborts what is in flight (a rollout that stopped early) and waits for the abort calls. */
  async close(): Promise<void> {
    for (const id of [...this.inFlight.keys()]) this.cancel(id);
    await Promise.all([...this.aborting]);
  }
}
