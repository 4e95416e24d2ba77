/**
 * Who answers an `agentic worker`'s environments, per manager, by its llm_proxy.proxy_type:
 *
 *   random          each env's random action; the job's version is recorded as asked
 *   sglang, openai  the inference servers of the config, whose weights the trainer keeps at the
 *                   job's version (docs/inference.md): a reply of another version is refused
 *   policy          a local copy of actor_infer, loaded from weights-N in the folder the job
 *                   names, the trainer's model_update_dir as an absolute path, where the trainer
 *                   writes it (src/train/rollouts/weight_sync.ts)
 *
 * A local copy loads newer weights only between episodes: a job that asks for a newer version
 * waits until no episode plays the weights held, then loads them, waiting up to
 * distributed.weights_timeout_s for the folder to appear. If it does not, the worker plays with
 * the newest weights it finds (or holds) and says which: the trainer drops what is too stale.
 * A job that asks for an older version than held plays with the held one, which is fresher.
 *
 * A LoRA run's servers hold each version as an adapter: the job names it, and the requests do too.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import type { AgenticConfig } from '../config/schema';
import { loadModel } from '../model/load';
import type { Qwen2Model } from '../model/qwen2';
import type { ChatFormat } from '../rollout/chat';
import { makePolicy } from '../rollout/env_manager';
import type { Policy } from '../rollout/policy';
import type { InferenceServers } from '../rollout/servers';
import type { RolloutMode } from '../rollout/types';
import type { GroupJobData } from '../train/rollouts/jobs';
import { weightsFolder, weightVersions } from '../train/rollouts/weight_sync';

/** A policy lent to one job, and the version it plays with. */
export interface Lease {
  policy: Policy;
  version: number;
  release(): void;
}

export interface WorkerPolicy {
  /** A policy for a job, with the weights it asks for. */
  acquire(mode: RolloutMode, job: GroupJobData): Promise<Lease>;
  close(): Promise<void>;
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How often a worker looks for weights that have not appeared yet. */
const WEIGHTS_POLL_MS = 100;

/** A policy that needs no weights (random) or whose weights someone else keeps (servers). */
export class SharedPolicy implements WorkerPolicy {
  constructor(
    private readonly policy: Policy,
    private readonly servers: InferenceServers | null,
  ) {}

  async acquire(_mode: RolloutMode, { version, adapter }: GroupJobData): Promise<Lease> {
    if (this.servers) {
      // a LoRA run's adapters are versioned by their names, and the servers' own weights stay the base
      this.servers.adapter = adapter;
      this.servers.weightVersion = adapter === null ? String(version) : null;
    }
    return { policy: this.policy, version, release: () => {} };
  }

  close(): Promise<void> {
    return this.policy.close();
  }
}

/** Why this machine cannot read the weights folder a job names, or null when it can. */
export function unreadableWeights(dir: string | null): string | null {
  if (dir === null) return 'the job names no weights folder';
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a folder here`;
    accessSync(dir, constants.R_OK | constants.X_OK);
    return null;
  } catch (error) {
    return `this worker cannot read ${dir} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`;
  }
}

/** A local copy of actor_infer that follows the versions the trainer writes (header). */
export class LocalWeights implements WorkerPolicy {
  private model: Qwen2Model | null = null;
  private held = -1;
  /** The newest version a load was tried for: a lagging worker does not wait for it again. */
  private tried = -1;
  private users = 0;
  private idle: Array<() => void> = [];
  private loading: Promise<void> | null = null;
  private readonly policies = new Map<RolloutMode, Policy>();
  /** The trainer's folder the weights held came from (the jobs name it). */
  private dir = '';

  constructor(
    private readonly config: AgenticConfig,
    private readonly chat: ChatFormat,
    private readonly log: (line: string) => void,
  ) {}

  /** The job's folder must be readable here (the worker checks unreadableWeights first). */
  async acquire(mode: RolloutMode, job: GroupJobData): Promise<Lease> {
    const { version } = job;
    const dir = job.weightsDir!;
    for (;;) {
      if (this.loading) {
        await this.loading;
        continue;
      }
      const sameDir = dir === this.dir;
      if (sameDir && (this.held >= version || (this.held >= 0 && this.tried >= version))) break;
      if (this.users > 0) {
        await new Promise<void>((r) => this.idle.push(r));
        continue;
      }
      if (!sameDir) {
        // another trainer's folder: nothing held is of its versions
        await this.dropModel();
        this.dir = dir;
        this.held = -1;
        this.tried = -1;
      }
      this.loading = this.load(version).finally(() => {
        this.loading = null;
      });
      await this.loading;
    }
    this.users++;
    let policy = this.policies.get(mode);
    if (!policy) {
      policy = makePolicy(this.config, mode, this.model, this.chat);
      this.policies.set(mode, policy);
    }
    let released = false;
    return {
      policy,
      version: this.held,
      release: () => {
        if (released) return;
        released = true;
        this.users--;
        if (this.users === 0) for (const wake of this.idle.splice(0)) wake();
      },
    };
  }

  /** Loads `wanted` (or the newest there is, if it does not appear in time); nothing plays meanwhile. */
  private async load(wanted: number): Promise<void> {
    const deadline = performance.now() + this.config.distributed.weights_timeout_s * 1000;
    while (!existsSync(weightsFolder(this.dir, wanted)) && performance.now() < deadline) await pause(WEIGHTS_POLL_MS);
    this.tried = Math.max(this.tried, wanted);
    const found = existsSync(weightsFolder(this.dir, wanted)) ? wanted : (weightVersions(this.dir)[0] ?? -1);
    if (found <= this.held) {
      if (this.held < 0) throw new Error(`no weights in ${this.dir}: weights-${wanted} did not appear within ${this.config.distributed.weights_timeout_s} s`);
      this.log(`weights-${wanted} did not appear within ${this.config.distributed.weights_timeout_s} s; playing with version ${this.held}`);
      return;
    }
    const { model } = await loadModel(weightsFolder(this.dir, found), { seed: this.config.seed, trainable: false });
    await this.dropModel();
    this.model = model;
    this.held = found;
  }

  private async dropModel(): Promise<void> {
    for (const policy of this.policies.values()) await policy.close();
    this.policies.clear();
    this.model?.dispose();
    this.model = null;
  }

  close(): Promise<void> {
    return this.dropModel();
  }
}
