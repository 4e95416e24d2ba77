/**
 * Plays batches through the queues for AsyncRollouts' schedule (../async.ts), on the trainer's
 * side: the weights go out (written to model_update_dir for workers with a local copy of the
 * actor, or loaded by the inference servers), the steps they play become jobs (./producer.ts),
 * each carrying the version and the history of this start that asks for it, and each batch
 * resolves once every one of its jobs is in. The jobs' results go to the ledger (./ledger.ts)
 * once the step counts them.
 */
import { AgenticError } from '../../errors';
import type { AgenticConfig } from '../../config/schema';
import type { Qwen2Model } from '../../model/qwen2';
import type { Tokenizer } from '../../model/tokenizer';
import { type GroupJobData, jobId, rolloutFingerprint } from '../../remote/jobs';
import { Lineage } from '../../remote/lineage';
import type { WeightSync } from '../../remote/weight_sync';
import { type EnvManager, type GroupEpisode, type PlayedEpisode, rolloutBatch } from '../../rollout/env_manager';
import type { Episode, RolloutBatch, RolloutMode } from '../../rollout/types';
import type { RemoteRollout } from '../../train/rollout_source';
import type { RolloutPlayer } from '../async';
import { JobLedger } from './ledger';
import { type Accepted, JobProducer } from './producer';

export class DistributedPlayer implements RolloutPlayer {
  /** The jobs whose rows a checkpoint counts. */
  readonly ledger = new JobLedger();
  private readonly fingerprints: Record<RolloutMode, string>;
  private queuedVersion = -1;

  private constructor(
    private readonly config: AgenticConfig,
    private readonly jobs: JobProducer,
    /** The histories of this run: whose weights a finished job was played by, and whether they are this run's. */
    readonly lineage: Lineage,
    private readonly train: EnvManager,
    private readonly val: EnvManager | null,
    private readonly sync: WeightSync | null,
    private readonly tokenizer: Tokenizer,
  ) {
    this.fingerprints = { train: rolloutFingerprint(config, 'train'), val: rolloutFingerprint(config, 'val') };
  }

  /** Connects to distributed.redis_url (checked already) with the run's planners and weight sync; `warn` hears of queues no worker serves and of workers that lag. */
  static open(
    config: AgenticConfig,
    train: EnvManager,
    val: EnvManager | null,
    sync: WeightSync | null,
    tokenizer: Tokenizer,
    warn: (line: string) => void = () => {},
  ): DistributedPlayer {
    const lineage = new Lineage();
    return new DistributedPlayer(config, JobProducer.open(config, lineage, warn), lineage, train, val, sync, tokenizer);
  }

  get version(): number {
    return this.queuedVersion;
  }

  /**
   * Before the first step, a new history of the lineage begins at `from`. A run from step 0
   * empties its queues of whatever an earlier run of the same name left; a resumed run deletes
   * the jobs its checkpoint counts that are still there, and the jobs that failed for good (so
   * that the steps played again are played, not failed again).
   */
  async prepare(from: number): Promise<void> {
    this.lineage.start(from);
    const { queues } = this.jobs;
    if (from === 0 && this.ledger.empty) {
      await this.jobs.redis(Promise.all(Object.values(queues).map((q) => q.obliterate({ force: true }))));
      return;
    }
    const failed = await this.jobs.redis(Promise.all(Object.values(queues).map((q) => q.getJobs(['failed']))));
    await this.jobs.redis(Promise.all(failed.flat().map((job) => job.remove())));
    const counted = new Set(this.ledger.entries().map((e) => e.id));
    const present = await this.jobs.redis(queues.train.getJobs(['completed']));
    this.ledger.foundInRedis(present.map((job) => job.id).filter((id): id is string => id !== undefined && counted.has(id)));
    await this.removeCounted();
  }

  async pushWeights(version: number, model: Qwen2Model): Promise<void> {
    if (this.sync) await this.jobs.redis(this.sync.bring(this.lineage.current, version, model, this.tokenizer));
    this.queuedVersion = version;
    this.jobs.vocab = model.config.vocab_size;
  }

  async restoreCounters(counters: readonly number[]): Promise<void> {
    this.train.restoreEpisodeCounters(counters);
  }

  /** The batch of `step`: its group episodes as jobs, the rows of the version each was played with. */
  async rollout(batchSize: number, step: number): Promise<RemoteRollout> {
    const groups = this.train.plan(batchSize);
    const countersAfter = [...this.train.episodeCounters];
    const started = performance.now();
    const accepted = await Promise.all(groups.map((group) => this.play(step, group)));
    const seconds = (performance.now() - started) / 1000;
    const batch = this.batchOf('train', groups, accepted, seconds);
    Object.assign(batch.metrics, await this.jobs.metrics(step, accepted, seconds));
    this.ledger.receive(
      step,
      accepted.map((a) => a.entry),
    );
    const version = Math.min(...accepted.map((a) => a.result.version));
    return { version, batch, countersAfter, baselines: null, refLogProbs: null };
  }

  /** The validation of `step`; its jobs are deleted once read, as no checkpoint holds validations. */
  async validate(step: number): Promise<RolloutBatch> {
    if (!this.val) throw new AgenticError('distributed: a validation asked of a run without val_env_manager tags or eval_steps');
    const groups = this.val.plan(this.config.val_batch_size);
    const started = performance.now();
    const accepted = await Promise.all(groups.map((group) => this.play(step, group)));
    const batch = this.batchOf('val', groups, accepted, (performance.now() - started) / 1000);
    await this.jobs.remove(
      'val',
      accepted.map((a) => a.entry.id),
    );
    return batch;
  }

  /**
   * Deletes from Redis the jobs the ledger counted since the last call: a checkpoint holding them is
   * on disk. Then every step whose jobs are all trained on is final: only its number stays.
   */
  async removeCounted(): Promise<void> {
    const { ids, final } = this.ledger.removable();
    await this.jobs.remove('train', ids);
    this.ledger.finalise(final);
  }

  close(): Promise<void> {
    return this.jobs.close();
  }

  /** One group episode of `step`, played by whichever worker takes its job. */
  private play(step: number, group: GroupEpisode): Promise<Accepted> {
    const id = jobId(this.config, step, group);
    if (this.ledger.trained(step, id)) throw new AgenticError(`distributed: job ${id} is in the ledger already; its rows were trained on`);
    const data: GroupJobData = {
      step,
      version: this.queuedVersion,
      history: this.lineage.current,
      fingerprint: this.fingerprints[group.mode],
      group,
      ...this.weightsOf(group.mode),
    };
    return this.jobs.play(id, data);
  }

  /**
   * Where a job's worker finds the weights the trainer sent: the folder it writes (absolute, so a
   * worker started in another folder reads the same), and the LoRA adapter its servers hold now.
   */
  private weightsOf(mode: RolloutMode): Pick<GroupJobData, 'weightsDir' | 'adapter'> {
    const servers = mode === 'train' ? this.train.servers : (this.val?.servers ?? null);
    return { weightsDir: this.sync?.dir ?? null, adapter: servers?.adapter ?? null };
  }

  /** The rows of a batch's accepted jobs, in the batch's order, each with its version. */
  private batchOf(mode: RolloutMode, groups: readonly GroupEpisode[], accepted: readonly Accepted[], seconds: number): RolloutBatch {
    const versions = new Map<Episode, number>();
    const played: PlayedEpisode[] = accepted.flatMap(({ result }, i) =>
      result.episodes.map((episode) => {
        versions.set(episode, result.version);
        return { order: groups[i]!.order, episode };
      }),
    );
    const generatedTokens = played.reduce((n, p) => n + p.episode.responseTokens, 0);
    return rolloutBatch(mode, played, (e) => versions.get(e)!, { seconds, generatedTokens }, this.config);
  }
}
