/**
 * The trainer's watch over its queues (docs/distributed.md, "When nothing happens"): a queue whose
 * jobs wait while no worker takes one for distributed.idle_warning_s is said in one line, with the
 * workers this Redis has and the queues they watch (a worker started without the run's exp_name
 * watches another queue), and the `agentic worker` command line that serves the run: the run's
 * resolved config, which the run records in <output_dir>/.agentic/config.yaml before its first
 * rollout. Workers of another config on the run's own queues refuse its jobs, and the run stops
 * with their reason (src/worker/play_job.ts); this watch is for the silence.
 *
 * A worker is taking jobs while any is active, or jobs finish, or fewer wait than at the last look.
 * The watch asks Redis once a second on a timer of its own; a failed look is skipped (RedisClock
 * judges a lost Redis).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Queue } from 'bullmq';
import type IORedis from 'ioredis';
import type { AgenticConfig } from '../../config/schema';
import { RUN_CONFIG_DIR } from '../../config/save';
import { REDIS_URL_VARIABLE } from '../../config/secrets';
import type { RolloutMode } from '../../rollout/types';
import { queueName } from '../../remote/jobs';
import { describeWorkers, presence } from '../../remote/presence';
import { shownUrl } from '../../remote/redis';
import { Silence } from '../../remote/silence';

const LOOK_MS = 1_000;

/**
 * The command line of a worker that serves this run's queues. The run's record holds a Redis
 * password masked, so the worker then takes the URL from AGENTIC_REDIS_URL (the user puts the
 * password where the line shows ***).
 */
export function workerCommand(config: AgenticConfig): string {
  const record = join(resolve(config.output_dir), RUN_CONFIG_DIR, 'config.yaml');
  const url = config.distributed.redis_url!;
  const secret = URL.canParse(url) && new URL(url).password !== '' ? `${REDIS_URL_VARIABLE}=${shownUrl(url)} ` : '';
  if (existsSync(record)) return `${secret}agentic worker -c ${record}`;
  return `agentic worker <this run's config> distributed.queue=${config.distributed.queue} distributed.redis_url=${shownUrl(config.distributed.redis_url!)}`;
}

interface Look {
  waiting: number;
  active: number;
  finished: number;
}

export class UnservedQueues {
  private readonly silences: Record<RolloutMode, Silence>;
  private readonly last: Partial<Record<RolloutMode, Look>> = {};
  private readonly timer: ReturnType<typeof setInterval>;
  private looking = false;

  constructor(
    private readonly config: AgenticConfig,
    private readonly queues: Record<RolloutMode, Queue>,
    /** The modes whose jobs the trainer waits for now. */
    private readonly waited: () => ReadonlySet<RolloutMode>,
    private readonly say: (line: string) => void,
    /** A connection to ask who is on Redis. */
    private readonly client: IORedis,
  ) {
    const bound = config.distributed.idle_warning_s;
    this.silences = { train: new Silence(bound), val: new Silence(bound) };
    this.timer = setInterval(() => void this.lookAll(), LOOK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async lookAll(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      const waited = this.waited();
      for (const mode of ['train', 'val'] as const) {
        if (waited.has(mode)) await this.look(mode);
        else {
          this.silences[mode].reset();
          delete this.last[mode];
        }
      }
    } catch {
      // Redis did not answer: the next look asks again, and the clock says when it is gone
    } finally {
      this.looking = false;
    }
  }

  private async look(mode: RolloutMode): Promise<void> {
    const counts = await this.queues[mode].getJobCounts('waiting', 'prioritized', 'active', 'completed', 'failed');
    const now: Look = {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      finished: (counts.completed ?? 0) + (counts.failed ?? 0),
    };
    const before = this.last[mode];
    this.last[mode] = now;
    const taking = now.active > 0 || (before !== undefined && (now.finished !== before.finished || now.waiting < before.waiting));
    if (now.waiting === 0 || taking) return this.silences[mode].reset();
    const seconds = this.silences[mode].due();
    if (seconds === null) return;
    const queue = queueName(this.config, mode);
    const on = await presence(this.client);
    this.say(
      `distributed: no worker has taken a job of ${queue} for ${Math.floor(seconds)} s (${now.waiting} waiting); ${this.who(queue, on.workers)}; start one with this run's config: ${workerCommand(this.config)}`,
    );
  }

  private who(queue: string, workers: ReadonlyMap<string, readonly string[]>): string {
    const at = `Redis at ${shownUrl(this.config.distributed.redis_url!)}`;
    const mine = workers.get(queue);
    if (mine) return `its workers (${mine.join(', ')}) take none`;
    if (workers.size === 0) return `no worker is connected to ${at}`;
    return `the workers on ${at} watch ${describeWorkers(workers)}, not ${queue} (another exp_name or distributed.queue)`;
  }
}
