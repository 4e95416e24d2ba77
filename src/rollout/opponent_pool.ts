/**
 * The opponent pool of fictitious self-play (opponent_pool, docs/multi_agent.md#a-pool-of-past-selves):
 * a seat that a training tag gives to `past` is played by a snapshot of an earlier policy, drawn
 * for each group's game from the latest `size` snapshots, so the policy learns against what it
 * was as well as what it is (a policy that only meets itself can chase its own tail).
 *
 * A snapshot is actor_train's weights at every `snapshot_every`-th policy version (0, the start,
 * included), written to <output_dir>/opponent_pool/version-N and read back from there: the pool of
 * version v is a function of v and those folders, so a run resumed from a checkpoint of version v
 * plays the same opponents as the run that wrote it. The folders stay after the run (a resumed
 * run may go back to any checkpoint); each is a Hugging Face folder `agentic play` and `eval` can
 * load as a policy.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type AgenticConfig, PAST_PLAYER } from '../config/schema';
import { Rng } from '../engine/rng';
import { ConfigError } from '../errors';
import { loadModel, saveModel } from '../model/load';
import type { Qwen2Model } from '../model/qwen2';
import type { Tokenizer } from '../model/tokenizer';
import { displayPath } from '../util/paths';
import type { ChatFormat } from './chat';
import { generatingArgs, modelPolicy } from './env_manager';
import type { Policy } from './policy';
import type { PastOpponents, PastOpponentSource } from './seat_players';

/** Whether a training tag gives a seat to past, so the run keeps an opponent pool. */
export function usesOpponentPool(config: AgenticConfig): boolean {
  return config.train_env_manager.tags.some((tag) => Object.values(config.custom_envs[tag]?.seats ?? {}).includes(PAST_PLAYER));
}

/** The policy versions whose snapshots make the pool of `version`: the latest `size` multiples of `every` up to it, oldest first. */
export function poolVersions(version: number, every: number, size: number): number[] {
  const versions: number[] = [];
  for (let v = version - (version % every); v >= 0 && versions.length < size; v -= every) versions.unshift(v);
  return versions;
}

/** The folder of the snapshot of policy `version`. */
export function snapshotFolder(config: AgenticConfig, version: number): string {
  return join(config.output_dir, 'opponent_pool', `version-${version}`);
}

export class OpponentPool implements PastOpponentSource {
  private readonly snapshots = new Map<number, Qwen2Model>();
  private version = -1;
  private draws: number[] = [];

  constructor(
    private readonly config: AgenticConfig,
    private readonly tokenizer: Tokenizer,
  ) {}

  /**
   * The pool of policy `version`, `actor` holding that version's weights: its snapshot is taken
   * when the version is due one, the older ones are read back from their folders where this
   * process has not got them (a resumed run), and those the pool no longer holds are freed.
   */
  async update(version: number, actor: Qwen2Model): Promise<void> {
    if (version === this.version) return;
    const { snapshot_every: every, size } = this.config.opponent_pool;
    const wanted = poolVersions(version, every, size);
    if (version % every === 0 && !this.snapshots.has(version)) {
      await saveModel(snapshotFolder(this.config, version), actor, this.tokenizer, { merged: true });
    }
    for (const v of wanted) if (!this.snapshots.has(v)) this.snapshots.set(v, await this.load(v));
    for (const [v, model] of this.snapshots) {
      if (wanted.includes(v)) continue;
      model.dispose();
      this.snapshots.delete(v);
    }
    this.version = version;
  }

  private async load(version: number): Promise<Qwen2Model> {
    const folder = snapshotFolder(this.config, version);
    if (!existsSync(join(folder, 'config.json'))) {
      throw new ConfigError(
        `opponent_pool: the snapshot of policy version ${version} is not in ${displayPath(folder)}; a resumed run needs the pool its run wrote there`,
      );
    }
    return (await loadModel(folder, { seed: this.config.seed, trainable: false })).model;
  }

  /**
   * The pool's policies for one rollout: a group's game `episodeId` draws one snapshot (by the run's
   * seed, the version and the game, so every env of the group meets the same one), whose policy
   * samples as the rollout's does; they are closed with close(), their keys and values with them.
   */
  open(chat: ChatFormat): PastOpponents & { close(): Promise<void> } {
    const versions = [...this.snapshots.keys()].sort((a, b) => a - b);
    if (versions.length === 0) throw new ConfigError('opponent_pool: a rollout asked for a past self before the pool took its first snapshot');
    const policies = new Map<number, Policy>();
    const drawnBy = new Map<string, number>();
    return {
      policyFor: ({ groupId, episodeId }) => {
        const key = `${groupId}:${episodeId}`;
        let drawn = drawnBy.get(key);
        if (drawn === undefined) {
          drawn = versions[Rng.fromSeed(this.config.seed, 'opponent_pool', this.version, groupId, episodeId).int(versions.length)]!;
          drawnBy.set(key, drawn);
          this.draws.push(drawn);
        }
        let policy = policies.get(drawn);
        if (!policy) {
          policy = modelPolicy(this.config, generatingArgs(this.config, 'train'), this.snapshots.get(drawn)!, chat);
          policies.set(drawn, policy);
        }
        return policy;
      },
      close: async () => {
        for (const policy of policies.values()) await policy.close();
      },
    };
  }

  /**
   * The step's metrics since the last call: the snapshots held, and how many versions behind the
   * policy the past selves drawn for its games were (0: the current policy's own snapshot).
   */
  takeMetrics(): Record<string, number> {
    const ages = this.draws.map((drawn) => this.version - drawn);
    this.draws = [];
    const metrics: Record<string, number> = { 'opponent_pool/snapshots': this.snapshots.size };
    if (ages.length > 0) metrics['opponent_pool/opponent_age'] = ages.reduce((a, b) => a + b, 0) / ages.length;
    return metrics;
  }

  dispose(): void {
    for (const model of this.snapshots.values()) model.dispose();
    this.snapshots.clear();
    this.version = -1;
  }
}
