/**
 * The trainer's side of the rollout thread: asynchronous training (async_generation_ratio > 0)
 * plays its rollouts in a Bun worker thread (./in_thread.ts runs in it) with its own tfjs engine,
 * its own copy of the policy and its own environments, while the trainer's thread trains.
 *
 * The thread answers requests strictly in the order they were sent, so a weight update queued
 * behind a rollout never reaches the model before that rollout is done. Weights travel as
 * transferred Float32Array buffers (one host copy, no JSON); rollouts come back by structured
 * clone with their typed arrays. If the thread throws at start, dies or is terminated, every
 * request in flight and every later one fails with one line naming it: nothing waits forever.
 * (Its messages still say "rollout worker", as they always have.)
 */
import { Worker } from 'node:worker_threads';
import type { AgenticConfig } from '../../config/schema';
import { shareBlasWithAnotherThread } from '../../engine/kernels/matmul';
import { AgenticError } from '../../errors';
import type { Qwen2Model } from '../../model/qwen2';
import type { RolloutBatch } from '../../rollout/types';
import type { RolloutPlayer } from '../async';
import type { RemoteRollout } from '../../train/rollout_source';
import type { ThreadReply, ThreadRequest } from './messages';

/**
 * The thread's entry file: ./in_thread.ts from source; in the compiled binary, where scripts/build.ts
 * embeds it as an entrypoint of its own, the bundled file named by its path below src/.
 */
function threadEntry(): string | URL {
  const compiled = import.meta.url.includes('$bunfs');
  return compiled ? '/$bunfs/root/rollout_sources/thread/in_thread.js' : new URL('./in_thread.ts', import.meta.url);
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class RolloutThread implements RolloutPlayer {
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | null = null;
  private closing = false;
  /** The thread calls this process's BLAS too, until it is closed or exits. */
  private readonly releaseBlas = shareBlasWithAnotherThread();
  /** The version of the weights the thread will hold once its queue reaches the end. */
  private queuedVersion = -1;

  private constructor(private readonly thread: Worker) {
    thread.on('message', (reply: ThreadReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.ok) waiting?.resolve(reply.value);
      else waiting?.reject(new AgenticError(`rollout worker: ${reply.message}`));
    });
    thread.on('error', (error: Error) => this.fail(`rollout worker (actor_infer) failed: ${error.message || 'unknown error'}`));
    thread.on('exit', (code: number) => {
      this.releaseBlas();
      this.fail(this.closing ? 'rollout worker was closed' : `rollout worker (actor_infer) stopped unexpectedly (exit code ${code})`);
    });
  }

  /**
   * Starts the thread: its backend with `threads` threads (wasm), the config's plugins loaded
   * from `cwd`, actor_infer's model built from `config.pretrain` (weights follow with `pushWeights`)
   * and the train and val environments.
   */
  static async start(config: AgenticConfig, options: { cwd?: string; threads: number }): Promise<RolloutThread> {
    // node:worker_threads, not the global Worker, which the threaded wasm glue replaces
    const thread = new RolloutThread(new Worker(threadEntry()));
    try {
      await thread.request({ type: 'init', config, cwd: options.cwd ?? process.cwd(), threads: options.threads });
    } catch (error) {
      await thread.close();
      throw error;
    }
    return thread;
  }

  /** The version the thread holds after everything sent so far; -1 before the first weights. */
  get version(): number {
    return this.queuedVersion;
  }

  /**
   * Queues `model`'s weights as policy `version`: read before this returns (the caller may then
   * train on), applied when the thread gets to them.
   */
  async pushWeights(version: number, model: Qwen2Model): Promise<void> {
    // copies: a backend may hand out its own storage, which a transfer would take from it; read
    // asynchronously, as webgpu under Bun has no synchronous read
    // the weights training changes: all of them, or a LoRA run's adapters (the thread holds the base)
    const weights = await Promise.all(model.trainedVariables.map(async (v) => ((await v.data()) as Float32Array).slice()));
    this.queuedVersion = version;
    // weights the thread cannot take leave it unusable: every later request hears why
    this.request(
      { type: 'weights', version, weights },
      weights.map((w) => w.buffer as ArrayBuffer),
    ).catch((error: Error) => this.fail(error.message));
  }

  /** A training batch of `batchSize` trajectories with the weights queued before it. */
  rollout(batchSize: number): Promise<RemoteRollout> {
    return this.request({ type: 'rollout', batchSize }) as Promise<RemoteRollout>;
  }

  /** A validation with the weights queued before it. */
  validate(): Promise<RolloutBatch> {
    return this.request({ type: 'validate' }) as Promise<RolloutBatch>;
  }

  /** Sets the train manager's episode counters (a resumed run). */
  restoreCounters(counters: readonly number[]): Promise<void> {
    return this.request({ type: 'counters', counters: [...counters] }) as Promise<void>;
  }

  /** actor_infer's logits for one row of ids, [length x vocab] row-major. */
  logits(ids: Int32Array): Promise<Float32Array> {
    return this.request({ type: 'logits', ids }) as Promise<Float32Array>;
  }

  /** Test seam: makes the thread exit as if it crashed. */
  crashForTest(code = 3): void {
    this.thread.postMessage({ id: this.nextId++, request: { type: 'exit', code } });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.thread.terminate();
    this.releaseBlas();
    this.fail('rollout worker was closed');
  }

  private fail(message: string): void {
    this.failure ??= new AgenticError(message);
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
  }

  private request(request: ThreadRequest, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.thread.postMessage({ id, request }, transfer);
    });
  }
}
