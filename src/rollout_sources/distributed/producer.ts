/**
 * The trainer's side of the queues, BullMQ's producer (docs/distributed.md): it adds the jobs of
 * distributed rollouts (src/remote/jobs.ts), follows them and takes each one's result once.
 * `agentic worker` processes, BullMQ's workers, are the other side (src/worker/).
 *
 * BullMQ gives a job to one worker at a time under a lock: a worker that dies or whose event loop
 * stops loses the lock, the job stalls and another worker plays it from the same seed; the late
 * result of the first is refused by BullMQ (its lock is gone). Each job carries the history whose
 * weights it asks for (src/remote/lineage.ts). A resume from an earlier checkpoint asks for job ids
 * an abandoned history may have finished with other weights: a finished job is taken only when its
 * weights are this lineage's own, and is otherwise deleted and played again (counted). Every
 * result is checked before it is taken (src/remote/results.ts); one that is malformed, of another
 * history than its job's, or played by a version above its job's fails its job with one line
 * naming the worker. A worker that played with weights too old for the step (it could not load
 * them in time) has its rows dropped, counted and played again under the same job id.
 *
 * Jobs are followed by polling their state (QueueEvents only wakes the poll early): state in Redis
 * survives a restart where events may not, and a job that a restart lost is enqueued again.
 */
import { type Job, Queue, QueueEvents } from 'bullmq';
import type IORedis from 'ioredis';
import type { AgenticConfig } from '../../config/schema';
import { AgenticError, firstLine } from '../../errors';
import { type GroupJobData, type GroupJobResult, queueName } from '../../remote/jobs';
import type { Lineage } from '../../remote/lineage';
import { RedisClock, redisConnection } from '../../remote/redis';
import { resultProblem, workerOf } from '../../remote/results';
import { episodeSamples } from '../../rollout/samples';
import type { RolloutMode } from '../../rollout/types';
import type { LedgerEntry } from '../../train/rollout_source';
import { stalenessBound } from '../async';
import { UnservedQueues } from './unserved';

/** Errors of a Redis that is away for a moment: the next round asks again. */
const CONNECTION_ERROR =
  /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTCONN|EHOSTUNREACH|Connection is closed|Stream isn't writeable|MaxRetriesPerRequest|connect/i;

/** How often every job waited on is looked at, whatever the events say. */
const SWEEP_MS = 1_000;

/** How long closing waits for BullMQ when Redis is not answering. */
const CLOSE_WAIT_MS = 2_000;

interface Waiting {
  id: string;
  data: GroupJobData;
  /** In the queue as far as this side knows; false until added (and again after a stale result). */
  added: boolean;
  /** The workers whose results of this job were dropped as stale, one entry per drop. */
  stale: string[];
  resolve: (accepted: Accepted) => void;
  reject: (error: Error) => void;
}

/** A job's result, taken, and the ledger entry that counts it. */
export interface Accepted {
  result: GroupJobResult;
  entry: LedgerEntry;
}

/** The rows of a result, as the trainer would build them. */
function rowsOf(result: GroupJobResult): number {
  return result.episodes.reduce((n, e) => n + episodeSamples(e).length, 0);
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class JobProducer {
  readonly queues: Record<RolloutMode, Queue>;
  /** Token ids of a result are below it: the vocabulary of the weights pushed. */
  vocab = 0;
  private readonly events: QueueEvents[];
  private readonly waiting = new Map<string, Waiting>();
  /** Rows dropped as stale while a step's jobs were waited on, by step. */
  private readonly dropped = new Map<number, number>();
  /** Workers whose results were dropped as stale (each is told once). */
  private readonly staleWorkers = new Set<string>();
  /** Finished jobs of weights not this lineage's own, deleted and played again, by step. */
  private readonly abandoned = new Map<number, number>();
  /** Jobs enqueued again because Redis had lost them, since the last report. */
  private readded = 0;
  private loop: Promise<void> | null = null;
  private readonly soon = new Set<string>();
  private nudge: () => void = () => {};
  private closed = false;
  private readonly unserved: UnservedQueues;

  /** `lineage`: the histories of this run, whose weights a finished job may have been played by. */
  private constructor(
    private readonly config: AgenticConfig,
    connections: IORedis[],
    private readonly clock: RedisClock,
    private readonly lineage: Lineage,
    private readonly warn: (line: string) => void,
  ) {
    const [queueConnection, ...eventConnections] = connections;
    this.queues = {
      train: new Queue(queueName(config, 'train'), { connection: queueConnection! }),
      val: new Queue(queueName(config, 'val'), { connection: queueConnection! }),
    };
    this.events = (['train', 'val'] as const).map((mode, i) => {
      // each listens with a blocking read, so each has a connection of its own
      const events = new QueueEvents(queueName(config, mode), { connection: eventConnections[i]! });
      events.on('completed', ({ jobId }: { jobId: string }) => this.wake(jobId));
      events.on('failed', ({ jobId }: { jobId: string }) => this.wake(jobId));
      events.on('error', () => {});
      return events;
    });
    // a Redis that went away is the clock's to judge; BullMQ's own reports would only repeat it
    for (const queue of Object.values(this.queues)) queue.on('error', () => {});
    this.unserved = new UnservedQueues(config, this.queues, () => new Set([...this.waiting.values()].map((w) => w.data.group.mode)), warn, queueConnection!);
  }

  /** Connects to distributed.redis_url (checked already); `warn` hears of queues no worker serves and of workers that lag. */
  static open(config: AgenticConfig, lineage: Lineage, warn: (line: string) => void): JobProducer {
    const url = config.distributed.redis_url!;
    const clock = new RedisClock(url, config.distributed.redis_timeout_s);
    const connections = [redisConnection(url, clock), redisConnection(url, clock), redisConnection(url, clock)];
    return new JobProducer(config, connections, clock, lineage, warn);
  }

  private get bound(): number {
    return stalenessBound(this.config.async_generation_ratio, this.config.actor_infer.model_update_frequency);
  }

  /** A Redis call that gives up, with the clock's one line, once Redis has been gone too long. */
  redis<T>(call: Promise<T>): Promise<T> {
    return Promise.race([call, this.clock.lost]);
  }

  /** Job `id`, added with `data`, played by whichever worker takes it; resolves with its result once taken. */
  play(id: string, data: GroupJobData): Promise<Accepted> {
    return new Promise<Accepted>((resolve, reject) => {
      this.waiting.set(id, { id, data, added: false, stale: [], resolve, reject });
      this.wake(id);
    });
  }

  /** Deletes the jobs `ids` of `mode`'s queue. */
  async remove(mode: RolloutMode, ids: readonly string[]): Promise<void> {
    await this.redis(Promise.all(ids.map((id) => this.queues[mode].remove(id))));
  }

  /** What the queues and workers did for the train batch of `step`. */
  async metrics(step: number, accepted: readonly Accepted[], seconds: number): Promise<Record<string, number>> {
    const queue = this.queues.train;
    const [counts, workers] = await this.redis(Promise.all([queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'), queue.getWorkersCount()]));
    const entries = accepted.map((a) => a.entry);
    const metrics: Record<string, number> = {
      'distributed/workers': workers,
      'distributed/queue_waiting': (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0),
      'distributed/queue_active': counts.active ?? 0,
      'distributed/replayed_jobs': entries.filter((e) => e.attempts_started > 1).length,
      'distributed/stalled_jobs': entries.filter((e) => e.stalled_counter > 0).length,
      'distributed/retried_jobs': entries.filter((e) => e.attempts_made > 1).length,
      'distributed/dropped_stale_samples': this.dropped.get(step) ?? 0,
      'distributed/abandoned_jobs': this.abandoned.get(step) ?? 0,
      'distributed/readded_jobs': this.readded,
    };
    this.dropped.delete(step);
    this.abandoned.delete(step);
    this.readded = 0;
    const episodes = new Map<string, number>();
    for (const { result } of accepted) episodes.set(result.worker, (episodes.get(result.worker) ?? 0) + result.episodes.length);
    metrics['distributed/workers_seen'] = episodes.size;
    for (const [worker, n] of [...episodes].sort(([a], [b]) => a.localeCompare(b))) {
      metrics[`distributed/worker/${worker}/episodes`] = n;
      metrics[`distributed/worker/${worker}/episodes_per_second`] = seconds > 0 ? n / seconds : 0;
    }
    return metrics;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unserved.stop();
    for (const w of this.waiting.values()) w.reject(new AgenticError('distributed rollouts were closed'));
    this.waiting.clear();
    this.nudge();
    const closing = Promise.allSettled([...Object.values(this.queues).map((q) => q.close()), ...this.events.map((e) => e.close())]);
    // closing talks to Redis: with Redis gone it is not waited for
    await (this.clock.healthy ? closing : Promise.race([closing, pause(CLOSE_WAIT_MS)]));
    this.clock.stop();
  }

  /** Looks at job `id` soon, and keeps the loop running while anything is waited on. */
  private wake(id: string): void {
    if (this.closed) return;
    this.soon.add(id);
    this.nudge();
    this.loop ??= this.follow().finally(() => {
      this.loop = null;
      if (this.waiting.size > 0) this.wake('');
    });
  }

  /**
   * Follows the jobs waited on until none is left: new ones are added in one call, the ones an
   * event named are looked at at once, all of them every SWEEP_MS. A Redis connection error is
   * retried on the next round; once the clock says Redis is gone, every batch waiting fails with
   * its line. Any other error fails the job it came from (or, outside one, every job) with its line.
   */
  private async follow(): Promise<void> {
    let swept = 0;
    while (this.waiting.size > 0 && !this.closed) {
      const woken = new Promise<void>((resolve) => {
        this.nudge = resolve;
      });
      try {
        await this.redis(this.addNew());
        const all = performance.now() - swept >= SWEEP_MS;
        if (all) swept = performance.now();
        const ids = all ? [...this.waiting.keys()] : [...this.soon].filter((id) => this.waiting.has(id));
        this.soon.clear();
        await this.redis(Promise.all(ids.map((id) => this.inspectOrFail(this.waiting.get(id)!))));
      } catch (error) {
        if (!this.passing(error)) {
          const line = error instanceof AgenticError ? error : new AgenticError(`distributed: ${firstLine(error)}`);
          for (const w of this.waiting.values()) w.reject(line);
          this.waiting.clear();
          return;
        }
        // a command that failed while Redis was away: the next round asks again
      }
      if (this.soon.size === 0) await Promise.race([woken, pause(SWEEP_MS)]);
    }
  }

  private async addNew(): Promise<void> {
    const fresh = [...this.waiting.values()].filter((w) => !w.added);
    for (const mode of ['train', 'val'] as const) {
      const jobs = fresh.filter((w) => w.data.group.mode === mode);
      if (jobs.length === 0) continue;
      const { attempts, backoff_s } = this.config.distributed;
      await this.queues[mode].addBulk(
        jobs.map((w) => ({ name: mode, data: w.data, opts: { jobId: w.id, attempts, backoff: { type: 'exponential', delay: backoff_s * 1000 } } })),
      );
      for (const w of jobs) {
        w.added = true;
        this.soon.add(w.id);
      }
    }
  }

  /** A Redis error that the next round may not meet: a connection that is away, not a refusal or a bug. */
  private passing(error: unknown): boolean {
    if (error instanceof AgenticError) return false;
    return !this.clock.healthy || CONNECTION_ERROR.test(firstLine(error));
  }

  /** inspect(), failing the job with its line on an error that is not Redis being away. */
  private async inspectOrFail(w: Waiting): Promise<void> {
    try {
      await this.inspect(w);
    } catch (error) {
      if (error instanceof AgenticError || this.passing(error)) throw error;
      this.fail(w, `distributed: job ${w.id}: ${firstLine(error)}`);
    }
  }

  private fail(w: Waiting, line: string): void {
    w.reject(new AgenticError(line));
    this.waiting.delete(w.id);
  }

  /**
   * A result of `w` played by `worker` with `version`, too old for its step, was dropped: the job is
   * played again, unless it has been dropped max_stale_replays times (a worker that never catches up
   * would keep winning it). A worker's first stale result is told.
   */
  private staleResult(w: Waiting, worker: string, version: number): void {
    const bound = this.config.distributed.max_stale_replays;
    if (!this.staleWorkers.has(worker)) {
      this.staleWorkers.add(worker);
      this.warn(
        `distributed: worker ${worker} played job ${w.id} with version ${version}, older than step ${w.data.step} may train on (${this.bound} behind at most): dropped and played again; it could not load weights-${w.data.version} within distributed.weights_timeout_s (a weights folder that lags on its machine?)`,
      );
    }
    w.stale.push(worker);
    if (w.stale.length >= bound) {
      const workers = [...new Set(w.stale)].join(', ');
      this.fail(
        w,
        `distributed: job ${w.id} was played ${w.stale.length} times with weights too old for step ${w.data.step} (distributed.max_stale_replays ${bound}), by ${workers}: those workers do not get the trainer's weights in time; check their weights folder, or stop them`,
      );
      return;
    }
    w.added = false;
  }

  /** Takes a finished job's result, or says why it cannot be taken. */
  private async inspect(w: Waiting): Promise<void> {
    if (!w.added || !this.waiting.has(w.id)) return;
    const job: Job<GroupJobData, GroupJobResult> | undefined = await this.queues[w.data.group.mode].getJob(w.id);
    if (!job) {
      // Redis lost it (a restart before its append-only file had it): the same job again
      w.added = false;
      this.readded++;
      return;
    }
    if (!(await this.askedByThisStart(w, job))) return;
    if (!job.finishedOn) return;
    const state = await job.getState();
    if (state === 'failed') {
      const where = job.processedBy ? `, last on ${job.processedBy}` : '';
      this.fail(w, `distributed: job ${w.id} failed (${job.attemptsMade} attempt(s)${where}): ${firstLine(job.failedReason)}`);
      return;
    }
    if (state === 'completed') await this.takeResult(w, job);
  }

  /**
   * Whether `job` is `w`'s as this start asked for it. A job left by another start of this run
   * counts only if the same ask was played by this lineage's own weights; otherwise, once it is
   * not active, it is deleted to be played again.
   */
  private async askedByThisStart(w: Waiting, job: Job<GroupJobData, GroupJobResult>): Promise<boolean> {
    const sameAsk = job.data.fingerprint === w.data.fingerprint && job.data.version === w.data.version;
    if (sameAsk && job.data.history === w.data.history) return true;
    const state = await job.getState();
    if (state === 'active') return false;
    const own = sameAsk && state === 'completed' && this.lineage.owns(job.data.history, job.returnvalue?.version);
    if (own) return true;
    await job.remove();
    w.added = false;
    if (state === 'completed') this.abandoned.set(w.data.step, (this.abandoned.get(w.data.step) ?? 0) + 1);
    return false;
  }

  /** The result of `w`'s completed `job`: checked, then taken, dropped as stale, or failing the job. */
  private async takeResult(w: Waiting, job: Job<GroupJobData, GroupJobResult>): Promise<void> {
    const result = job.returnvalue;
    const problem = resultProblem(result, job.data, { vocab: this.vocab, sequenceLength: this.config.sequence_length });
    if (problem) {
      // deleted, so that a resume plays it again rather than meeting the same result
      await job.remove();
      this.fail(w, `distributed: job ${w.id}: the result of worker ${workerOf(result, job.processedBy)} ${problem}`);
      return;
    }
    if (w.data.group.mode === 'train' && w.data.step - result.version > this.bound) {
      // played with weights too old for the step: counted, never trained on, and played again
      this.dropped.set(w.data.step, (this.dropped.get(w.data.step) ?? 0) + rowsOf(result));
      await job.remove();
      this.staleResult(w, workerOf(result, job.processedBy), result.version);
      return;
    }
    this.waiting.delete(w.id);
    w.resolve({
      result,
      entry: {
        id: w.id,
        step: w.data.step,
        worker: result.worker,
        version: result.version,
        history: result.history,
        attempts_started: job.attemptsStarted,
        attempts_made: job.attemptsMade,
        stalled_counter: job.stalledCounter,
        trained: false,
      },
    });
  }
}
