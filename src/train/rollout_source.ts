/**
 * The rollout seam: where a step's batch comes from. The step asks for the batch of step s, trains
 * on it, then tells the source its updates are done; what happens around that (a model update,
 * validation, playing ahead in a thread) is the source's business. The implementations live a
 * layer above the loop, in src/rollout_sources/, and the run hands the trainer the one that opens
 * them (`OpenRollouts`):
 *
 *   LocalRollouts  (local.ts)    in this thread: model update, validation when due, rollout;
 *                                the responses from actor_infer's model here, or from inference
 *                                servers that load its weights (src/remote/weight_sync.ts)
 *   AsyncRollouts  (async.ts)    a rollout thread plays async_generation_ratio steps ahead
 *   DistributedRollouts (distributed/rollouts.ts)  `agentic worker` processes play BullMQ jobs
 *                                through Redis, on the asynchronous schedule (async_generation_ratio >= 0)
 *
 * A source owns the episode counters of the train env manager and what is in flight, which is
 * what a checkpoint needs of it to continue a run exactly.
 */
import type { AgenticConfig } from '../config/schema';
import type { PluginHost } from '../host/plugin_host';
import type { HistoryEntry } from '../remote/lineage';
import type { ChatFormat } from '../rollout/chat';
import type { RolloutBatch } from '../rollout/types';
import type { Roles } from './roles';
import type { StepLog } from './step_log';

export interface PlayedStep {
  batch: RolloutBatch;
  /** remax: the greedy episode score of each trajGroupId, with the weights that played. */
  baselines: ReadonlyMap<string, number> | null;
  /** The reference's log-probs of every sample, when the source scored them already. */
  refLogProbs: Float32Array[] | null;
}

/**
 * A training rollout played away from the trainer's thread, as its player returns it (the rollout
 * thread, src/rollout_sources/thread/, or `agentic worker` processes, src/rollout_sources/distributed/).
 */
export interface RemoteRollout {
  /** The policy version (training steps done) of the weights that played it. */
  version: number;
  batch: RolloutBatch;
  /** The train manager's next episode id of each group after this batch. */
  countersAfter: number[];
  /** remax: the greedy episode score of each trajGroupId, with the same weights. */
  baselines: Array<[string, number]> | null;
  /** The reference's log-probs of every sample (runs with a KL term), scored by the thread or worker that played it. */
  refLogProbs: Float32Array[] | null;
}

/** A requested batch and the step it is for. */
export interface StepRollout extends RemoteRollout {
  step: number;
}

/** What a checkpoint keeps of the pipeline of a source that plays ahead (src/rollout_sources/async.ts). */
export interface InFlight {
  /** The train manager's episode counters before the first carried batch. */
  countersBefore: number[];
  /** Batches played with weights the checkpoint does not hold, in step order. */
  batches: StepRollout[];
}

/** One job of the distributed ledger (src/rollout_sources/distributed/ledger.ts): a result that a checkpoint counts. */
export interface LedgerEntry {
  id: string;
  step: number;
  /** The worker whose result was taken. */
  worker: string;
  version: number;
  /** The history whose weights played it (absent in ledgers written before histories were named). */
  history?: string;
  /** BullMQ's attemptsStarted: above 1 when the job was played again (a worker died or stalled, or threw). */
  attempts_started: number;
  /** BullMQ's attemptsMade: the attempts that finished, the one that returned included (above 1: it failed before). */
  attempts_made: number;
  /** BullMQ's stalledCounter: how often its lock lapsed and the job went back to the queue. */
  stalled_counter: number;
  /** False while the rows are only carried by a checkpoint (played ahead, not yet trained on). */
  trained: boolean;
}

/** What a checkpoint keeps of the ledger. */
export interface LedgerState {
  /** The jobs that may still be in Redis, or whose rows are only carried (not yet trained on). */
  jobs: LedgerEntry[];
  /** Jobs of earlier checkpoints, deleted from Redis and trained on: only their number is kept. */
  finalJobs: number;
}

/** What a checkpoint keeps of a source. */
export interface SourceState {
  /** The next episode id of each training group. */
  trainEpisodes: number[];
  inFlight?: InFlight | null;
  /** Distributed runs: the jobs whose rows the checkpoint counts, each ingested once. */
  ledger?: LedgerState | null;
  /** Runs whose weights leave the process (workers, servers): the histories of the run, this start's last (src/remote/lineage.ts). */
  lineage?: HistoryEntry[] | null;
}

export interface RolloutSource {
  /**
   * True when the sampler's log-probs cannot stand in for actor_train's: batches played by weights
   * older than actor_train's (a thread or workers playing ahead) or by another engine (an inference server).
   * The old log-probs are then always recomputed, and the sampler's gap to them always reported.
   */
  readonly sampledElsewhere: boolean;
  /** Starts at step `from` (after restore(), for a resumed run). */
  begin(from: number): Promise<void>;
  /**
   * The batch of `step`; the source logs what it did for it (model update, validation, waiting).
   * `version`: actor_train's policy version, the steps that trained so far (a step that dropped
   * every group trained nothing). LocalRollouts plays and sends weights by it; the sources that
   * play ahead label their weights by the step.
   */
  next(step: number, log: StepLog, version: number): Promise<PlayedStep>;
  /** After the updates of `step`: the weights go out, and a validation played meanwhile is logged. */
  afterUpdate(step: number, log: StepLog): Promise<void>;
  /** The validation after the last step (actor_train at policy `version`), if the run validates. */
  finalValidation(step: number, version: number): Promise<RolloutBatch> | null;
  /** Waits for what a checkpoint must carry. */
  state(): Promise<SourceState>;
  restore(state: SourceState): void;
  /** A checkpoint holding state() is on disk: what only it needed may go (distributed runs delete the jobs it counts). */
  checkpointed(): Promise<void>;
  close(): Promise<void>;
}

/** How many validation episodes a report carries. */
const REPORTED_VAL_EPISODES = 3;

/** Logs a validation: its metrics, and the first episodes for trackers that show transcripts. */
export function logValidation(log: StepLog, val: RolloutBatch): void {
  log.add(val.metrics);
  log.valEpisodes = val.episodes.slice(0, REPORTED_VAL_EPISODES);
}

/**
 * Opens the run's rollout source once actor_train and its tokenizer are built; `warn` hears what
 * the source says mid-run. The run passes src/rollout_sources/open.ts's `openRollouts`.
 */
export type OpenRollouts = (config: AgenticConfig, host: PluginHost, roles: Roles, chat: ChatFormat, warn?: (line: string) => void) => Promise<RolloutSource>;
