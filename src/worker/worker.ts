/**
 * `agentic worker`'s engine: takes BullMQ jobs of distributed rollouts (src/remote/jobs.ts)
 * from the run's queues, plays each group episode with the config's environments and policy
 * (./policies.ts), and returns the episodes as the job's result.
 *
 * BullMQ does the rest: a job is this worker's while it holds the job's lock, renewed every half
 * lockDuration; if this process dies or its event loop stalls past the lock, another worker's
 * stalled check puts the job back and someone plays it again from the same seed, and this worker's
 * late result is refused (its lock is gone). Each manager's queue gets a BullMQ Worker whose
 * concurrency is its max_env_num_per_worker over its group size.
 *
 * The worker stops on SIGTERM once its jobs in hand are done; with one line when Redis has been
 * gone for distributed.redis_timeout_s, when a job comes from a trainer whose rollout settings
 * differ from this config (it would play other episodes than the trainer asked for), or when a
 * job's weights folder (the trainer's, by its absolute path) is not readable on this machine. A
 * worker with no job for distributed.idle_warning_s says which queues it watches (./idle.ts).
 * How one job is played: ./play_job.ts.
 */
import { hostname } from 'node:os';
import { UnrecoverableError, Worker } from 'bullmq';
import { isHttpProxy, type AgenticConfig } from '../config/schema';
import { runBackend } from '../config/validate';
import { startBackend } from '../engine/backend';
import { AgenticError, ConfigError, firstLine } from '../errors';
import { loadTokenizer } from '../model/load';
import type { PluginHost } from '../host/plugin_host';
import { ChatFormat } from '../rollout/chat';
import { EnvManager, makePolicy, managerOf, proxyServers } from '../rollout/env_manager';
import type { RolloutMode } from '../rollout/types';
import { type GroupJobData, type GroupJobResult, queueName, workerConcurrency } from '../remote/jobs';
import { checkRedis, RedisClock, redisConnection, shownUrl } from '../remote/redis';
import { EnvPool } from './env_pool';
import { IdleWatch } from './idle';
import { jobPlayer, type PlayJob } from './play_job';
import { LocalWeights, SharedPolicy, type WorkerPolicy } from './policies';

/** How long a worker that must stop at once waits for BullMQ to close. */
const CLOSE_WAIT_MS = 2_000;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface WorkerOptions {
  /** BullMQ's worker name, recorded on every job it plays; default `<hostname>-<pid>`. */
  name?: string;
  info: (line: string) => void;
  warn: (line: string) => void;
  /** Resolves when the worker should finish its jobs in hand and stop (SIGTERM). */
  stop: Promise<void>;
}

export interface WorkerSummary {
  name: string;
  /** Jobs whose results Redis took. */
  completed: number;
}

/** The jobs this worker has in hand now, and those whose results Redis took. */
interface Tally {
  inHand: number;
  completed: number;
}

/** The modes whose jobs this config plays: train, and val where the run validates. */
function modesOf(config: AgenticConfig): RolloutMode[] {
  return config.eval_steps > 0 && config.val_env_manager.tags.length > 0 ? ['train', 'val'] : ['train'];
}

/** The policy of each mode's jobs; a local copy of the actor is one model both share. */
async function workerPolicies(config: AgenticConfig, chat: ChatFormat, modes: readonly RolloutMode[], info: (line: string) => void) {
  const policies = new Map<RolloutMode, WorkerPolicy>();
  const described: string[] = [];
  let local: LocalWeights | null = null;
  for (const mode of modes) {
    const proxy = managerOf(config, mode).llm_proxy.proxy_type;
    if (proxy === 'policy') {
      if (!local) await startBackend(runBackend(config), { blas: config.blas });
      local ??= new LocalWeights(config, chat, info);
      policies.set(mode, local);
      described.push(`${mode}: actor_infer's weights from the trainer's model_update_dir (each job names it)`);
    } else if (isHttpProxy(proxy)) {
      const servers = proxyServers(config, mode)!;
      await servers.connect(chat.tokenizer);
      policies.set(mode, new SharedPolicy(makePolicy(config, mode, null, chat, { servers }), servers));
      described.push(`${mode}: ${proxy} servers ${servers.urls.join(', ')}`);
    } else {
      policies.set(mode, new SharedPolicy(makePolicy(config, mode, null, chat), null));
      described.push(`${mode}: random actions`);
    }
  }
  return { policies, described: described.join('; ') };
}

/** An error that stops the worker at once: `failed` rejects with the first one given to `fatal`. */
function fatalErrors(): { failed: Promise<never>; fatal: (error: Error) => void } {
  let fatal: (error: Error) => void = () => {};
  const failed = new Promise<never>((_resolve, reject) => {
    fatal = reject;
  });
  failed.catch(() => {});
  return { failed, fatal };
}

interface BullWorkerContext {
  url: string;
  clock: RedisClock;
  name: string;
  play: PlayJob;
  fatal: (error: Error) => void;
  tally: Tally;
  options: WorkerOptions;
}

/** BullMQ's worker of `mode`'s queue, as many jobs at once as its concurrency; a job that cannot be played here stops this worker. */
function bullWorker(config: AgenticConfig, mode: RolloutMode, o: BullWorkerContext): Worker<GroupJobData, GroupJobResult> {
  const d = config.distributed;
  const worker = new Worker<GroupJobData, GroupJobResult>(queueName(config, mode), (job) => o.play(mode, job), {
    connection: redisConnection(o.url, o.clock),
    name: o.name,
    concurrency: workerConcurrency(config, mode),
    lockDuration: d.lock_duration_s * 1000,
    stalledInterval: d.stalled_interval_s * 1000,
    maxStalledCount: d.max_stalled_count,
  });
  worker.on('completed', () => o.tally.completed++);
  worker.on('failed', (job, error) => {
    if (error instanceof UnrecoverableError) o.fatal(new ConfigError(error.message));
    else if (job) o.options.warn(`job ${job.id} failed: ${firstLine(error)}`);
  });
  worker.on('error', (error) => {
    // BullMQ refuses a result whose lock lapsed: another worker has the job (or has played it)
    if (/missing lock/i.test(error.message)) o.options.info(`a late result was refused: ${firstLine(error)} (its lock lapsed; the job went back to the queue)`);
    else if (o.clock.healthy) o.options.warn(`BullMQ: ${firstLine(error)}`);
  });
  return worker;
}

/**
 * Stops playing: finishes the jobs in hand, unless the worker stops for `error` (Redis is gone or
 * the jobs are not ours to play); a close that would talk to a Redis that is gone is not waited for.
 */
async function stopPlaying(
  workers: readonly Worker[],
  error: unknown,
  clock: RedisClock,
  policies: ReadonlyMap<RolloutMode, WorkerPolicy>,
  pool: EnvPool,
): Promise<void> {
  const closing = Promise.allSettled(workers.map((w) => w.close(error !== null)));
  await (error === null ? closing : Promise.race([closing, pause(CLOSE_WAIT_MS)]));
  clock.stop();
  await Promise.allSettled([...new Set(policies.values())].map((p) => p.close()));
  await pool.close();
}

/** Plays jobs until `options.stop` resolves, or until Redis is lost or a job cannot be played here. */
export async function runWorker(config: AgenticConfig, host: PluginHost, options: WorkerOptions): Promise<WorkerSummary> {
  const url = config.distributed.redis_url;
  if (url === null)
    throw new ConfigError(
      'distributed.redis_url: agentic worker takes its jobs from a Redis; give its URL (distributed.redis_url=redis://HOST:6379, or the environment variable AGENTIC_REDIS_URL)',
    );
  await checkRedis(url);
  const name = options.name ?? `${hostname()}-${process.pid}`;
  const modes = modesOf(config);
  const chat = new ChatFormat(await loadTokenizer(config.pretrain));
  // the managers check the tags and load the env plugins before any job is taken
  for (const mode of modes) await (await EnvManager.build(mode, config, host)).close();
  const { policies, described } = await workerPolicies(config, chat, modes, options.info);
  const pool = new EnvPool(config, host);
  const clock = new RedisClock(url, config.distributed.redis_timeout_s);
  const { failed, fatal } = fatalErrors();
  clock.lost.catch((error: Error) => fatal(error));
  const tally: Tally = { inHand: 0, completed: 0 };
  const idle = new IdleWatch({
    name,
    queues: modes.map((mode) => queueName(config, mode)),
    at: `Redis at ${shownUrl(url)}`,
    boundS: config.distributed.idle_warning_s,
    client: redisConnection(url, clock, { lazyConnect: true }),
    inHand: () => tally.inHand,
    info: options.info,
  });
  const playJob = jobPlayer(config, name, chat, policies, pool);
  const play: PlayJob = async (mode, job) => {
    tally.inHand++;
    idle.took();
    try {
      return await playJob(mode, job);
    } finally {
      tally.inHand--;
    }
  };
  const workers = modes.map((mode) => bullWorker(config, mode, { url, clock, name, play, fatal, tally, options }));
  const queues = modes.map((mode) => `${queueName(config, mode)} (${workerConcurrency(config, mode)} at once)`).join(', ');
  options.info(`worker ${name}: jobs of ${queues} from ${shownUrl(url)}; ${described}`);

  let error: unknown = null;
  try {
    await Promise.race([options.stop, failed]);
  } catch (caught) {
    error = caught;
  }
  idle.stop();
  await stopPlaying(workers, error, clock, policies, pool);
  if (error) throw error instanceof AgenticError ? error : new AgenticError(firstLine(error));
  return { name, completed: tally.completed };
}
