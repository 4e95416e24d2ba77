/**
 * Continuous batching for rollouts. Every environment runs its own episode loop and asks for one
 * response at a time; the scheduler gathers whatever requests are waiting into one KV-cached
 * decode batch (DecodeBatch), so a sequence joins as soon as its env is ready and leaves as soon
 * as it finishes, and an env that is busy (a slow tool, a long step) holds nobody else up.
 *
 * One loop drives the batch: join what waits (up to max_running_requests rows), decode one
 * token for every row, hand finished responses back, yield to the event loop so their envs can
 * step and ask again, repeat. The loop sleeps while nothing is queued or running.
 *
 * Sessions (one per environment) keep the keys and values of their last sequence. A request of
 * the same session reuses them for the ids its prompt shares with that sequence, so a multi-turn
 * episode prefills only each turn's new ids instead of its whole history.
 */

function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

import { DecodeBatch, disposeKv, type CachedPrefix, type GenerationRequest, type GenerationResult } from '../model/generate';
import type { Qwen2Model } from '../model/qwen2';

export interface SchedulerOptions {
  /** Most rows decoded together; more requests wait in the queue. */
  maxRunning: number;
  /** Most positions a row may reach. */
  maxLength?: number;
  /** For stop strings. */
  decode?: (ids: readonly number[]) => string;
}

export interface SchedulerStats {
  /** Tokens sampled (all rows, finished or cut). */
  generatedTokens: number;
  /** Prompt tokens prefilled when rows joined. */
  prefillTokens: number;
  /** Prompt tokens whose keys and values came from the session's earlier turns instead. */
  reusedTokens: number;
  /** Decode steps (one token for every running row). */
  decodeSteps: number;
  /** Sum over decode steps of the rows decoded: decodeSteps times the mean batch size. */
  rowSteps: number;
  /** Most rows decoded at once. */
  peakRows: number;
  /** Seconds spent prefilling joining prompts, and decoding. */
  prefillSeconds: number;
  decodeSeconds: number;
}

interface Waiting {
  request: GenerationRequest;
  session: string | null;
  resolve: (result: GenerationResult) => void;
  reject: (error: unknown) => void;
}

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

export class GenerationScheduler {
  private readonly batch: DecodeBatch;
  private queue: Waiting[] = [];
  private readonly running = new Map<string | number, Waiting>();
  private loop: Promise<void> | null = null;
  private failure: unknown = null;
  /**
   * Whether a join or a step is awaiting its logits. Its rows are fixed until it returns, so a
   * cancel that arrives then (from a callback of a request that just finished, or an HTTP client
   * that left) is held in `leaving` and applied once it has.
   */
  private busy = false;
  private readonly leaving = new Set<string | number>();
  /** Each session's last sequence, for prefix reuse. */
  private readonly parked = new Map<string, CachedPrefix>();
  readonly stats: SchedulerStats = {
    generatedTokens: 0,
    prefillTokens: 0,
    reusedTokens: 0,
    decodeSteps: 0,
    rowSteps: 0,
    peakRows: 0,
    prefillSeconds: 0,
    decodeSeconds: 0,
  };

  constructor(
    model: Qwen2Model,
    private readonly options: SchedulerOptions,
  ) {
    this.batch = new DecodeBatch(model, { maxLength: options.maxLength, decode: options.decode });
  }

  /**
   * Queues a request; resolves with its response when it finishes (or is cancelled: 'left').
   * With a session, the request reuses what it shares with the session's last sequence.
   */
  generate(request: GenerationRequest, session: string | null = null): Promise<GenerationResult> {
    if (this.failure) return Promise.reject(this.failure);
    let withPast = request;
    if (session !== null) {
      const parked = this.parked.get(session);
      this.parked.delete(session);
      if (parked) {
        const length = Math.min(sharedPrefix(parked.ids, request.promptIds), request.promptIds.length - 1, parked.kv[0]!.k.shape[2]);
        if (length > 0) withPast = { ...request, past: { length, kv: parked.kv } };
        else disposeKv(parked.kv);
      }
      withPast = { ...withPast, keepCache: true };
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ request: withPast, session, resolve, reject });
      this.loop ??= this.drive().finally(() => {
        this.loop = null;
      });
    });
  }

  /** Stops a request early (a straggler's deadline); its promise resolves with what it has so far. */
  cancel(id: string | number): void {
    if (this.busy) {
      this.leaving.add(id);
      return;
    }
    const queued = this.queue.findIndex((w) => w.request.id === id);
    if (queued >= 0) {
      const [waiting] = this.queue.splice(queued, 1);
      this.dropPast(waiting!.request);
      waiting!.resolve({ id, tokens: [], logProbs: [], finishReason: 'left' });
      return;
    }
    const waiting = this.running.get(id);
    if (!waiting) return;
    this.running.delete(id);
    const partial = this.batch.leave(id);
    this.stats.generatedTokens += partial?.tokens.length ?? 0;
    waiting.resolve(partial ?? { id, tokens: [], logProbs: [], finishReason: 'left' });
  }

  /** Waits for the loop to go idle and frees the KV cache and every session's. */
  async close(): Promise<void> {
    await this.loop;
    this.batch.dispose();
    for (const cache of this.parked.values()) disposeKv(cache.kv);
    this.parked.clear();
  }

  private dropPast(request: GenerationRequest): void {
    if (request.past) disposeKv(request.past.kv);
  }

  private async drive(): Promise<void> {
    try {
      while (this.queue.length > 0 || this.running.size > 0) {
        const room = this.options.maxRunning - this.running.size;
        if (room > 0 && this.queue.length > 0) {
          const joining = this.queue.splice(0, room);
          for (const w of joining) {
            this.running.set(w.request.id, w);
            const reused = w.request.past?.length ?? 0;
            this.stats.prefillTokens += w.request.promptIds.length - reused;
            this.stats.reusedTokens += reused;
          }
          const started = performance.now();
          let finished: GenerationResult[];
          this.busy = true;
          try {
            finished = await this.batch.join(joining.map((w) => w.request));
          } finally {
            this.busy = false;
            for (const w of joining) this.dropPast(w.request);
          }
          this.stats.prefillSeconds += (performance.now() - started) / 1000;
          this.finish(finished);
          this.applyCancels();
        }
        if (this.batch.size > 0) {
          this.stats.decodeSteps += 1;
          this.stats.rowSteps += this.batch.size;
          this.stats.peakRows = Math.max(this.stats.peakRows, this.batch.size);
          const started = performance.now();
          this.busy = true;
          let finished: GenerationResult[];
          try {
            finished = await this.batch.step();
          } finally {
            this.busy = false;
          }
          this.stats.decodeSeconds += (performance.now() - started) / 1000;
          this.finish(finished);
          this.applyCancels();
        }
        // let the envs whose responses just finished step and queue their next turn
        await nextTick();
      }
    } catch (error) {
      // a model failure is the run's failure: every waiting env hears it
      this.failure = error;
      for (const w of this.queue) this.dropPast(w.request);
      for (const w of [...this.queue, ...this.running.values()]) w.reject(error);
      this.queue = [];
      this.running.clear();
      this.leaving.clear();
      this.batch.dispose();
    }
  }

  /** The cancels held while a join or step ran; a request that finished meanwhile has nothing left to cancel. */
  private applyCancels(): void {
    const ids = [...this.leaving];
    this.leaving.clear();
    for (const id of ids) this.cancel(id);
  }

  private finish(results: readonly GenerationResult[]): void {
    for (const { cache, ...result } of results) {
      this.stats.generatedTokens += result.tokens.length;
      const waiting = this.running.get(result.id);
      this.running.delete(result.id);
      if (cache) {
        if (waiting?.session != null) {
          const old = this.parked.get(waiting.session);
          if (old) disposeKv(old.kv);
          this.parked.set(waiting.session, cache);
        } else {
          disposeKv(cache.kv);
        }
      }
      waiting?.resolve(result);
    }
  }
}
