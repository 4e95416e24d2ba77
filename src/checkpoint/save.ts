/**
 * Writing checkpoint-N: the state after N steps, enough to continue the run exactly.
 *
 *   actor/                 the policy, a Hugging Face folder (config.json, model.safetensors, tokenizer);
 *                          with LoRA, PEFT's adapter folder naming the base (adapter_config.json,
 *                          adapter_model.safetensors): the base itself is read again from there
 *   critic/                the value model, same format (gae)
 *   reference/             the frozen reference (when a KL term uses one and it is not LoRA's base)
 *   actor_infer/           the lagging rollout copy (model_update_frequency > 1; with LoRA its adapters)
 *   optimizer.safetensors  AdamW's moments of actor_train and critic
 *   trainer_state.json     step, KL coefficient, episode counters, optimizer steps, LR schedules
 *   in_flight_rollouts.json  asynchronous runs: the rollouts played ahead with older weights
 *   distributed_ledger.json  distributed runs: the jobs whose rows this checkpoint counts
 *                          (trainer_state.json's `history`: the lineage of the weights that left the process)
 *   metrics.jsonl          every logged report so far
 *   config.yaml            the run's resolved config
 *   manifest.json          size and sha256 of every file above, written last
 *
 * Weights are saved as float32 whatever model_args.dtype says, because a resumed run must start
 * from the very numbers the interrupted one had. A LoRA run's base is not copied into each
 * checkpoint: it is the run's `pretrain` (a folder, a hub id, or a preset rebuilt from the seed). The folder is written under a hidden temporary
 * name, flushed, sealed with the manifest and renamed into place: a crash at any instant leaves the
 * old checkpoints and at most a hidden temporary folder, never a partial checkpoint-N.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AgenticConfig } from '../config/schema';
import { maskSecrets } from '../config/secrets';
import { stringifyYaml } from '../config/yaml';
import { saveModel } from '../model/load';
import type { AdamW } from '../model/optim';
import type { Qwen2Model } from '../model/qwen2';
import { writeSafetensors, type Weights } from '../model/safetensors';
import { jsonlLine } from '../tracking/jsonl';
import type { Trainer } from '../train/trainer';
import type { StepReport } from '../train/types';
import { writeFolderAtomic } from '../util/atomic';
import { checkpointPath, listCheckpoints, removeCheckpoint } from './folders';
import { IN_FLIGHT_FILE, inFlightJson } from './in_flight';
import { LEDGER_FILE, ledgerJson } from './ledger';
import { flush, seal } from './manifest';
import { scheduleOf, TRAINER_STATE_FILE, type SavedRole, type TrainerStateFile } from './state';

export const OPTIMIZER_FILE = 'optimizer.safetensors';
export const HISTORY_FILE = 'metrics.jsonl';
export const CONFIG_FILE = 'config.yaml';

export interface CheckpointContents {
  trainer: Trainer;
  /** The run's config as given (before a warm start put its base in `pretrain`). */
  config: AgenticConfig;
  /** The reports logged so far, in order. */
  history: readonly StepReport[];
  /** The checkpoint the run was resumed from, if any. */
  resumedFrom: string | null;
}

/** The optimizer tensor names: `<role>/<m|v>/<variable index>`. */
export function momentName(role: 'actor_train' | 'critic', moment: 'm' | 'v', index: number): string {
  return `${role}/${moment}/${index}`;
}

async function addMoments(into: Weights, role: 'actor_train' | 'critic', optimizer: AdamW): Promise<{ step: number; variables: number }> {
  const state = await optimizer.state();
  state.moments.forEach(({ m, v, shape }, i) => {
    into.set(momentName(role, 'm', i), { shape, data: m });
    into.set(momentName(role, 'v', i), { shape, data: v });
  });
  return { step: state.step, variables: state.moments.length };
}

/** Writes checkpoint-<steps done> under `root` and returns its path. */
export async function saveCheckpoint(root: string, contents: CheckpointContents): Promise<string> {
  const { trainer, config } = contents;
  const { roles } = trainer;
  const loop = await trainer.loopState();
  const path = checkpointPath(root, loop.step);
  await writeFolderAtomic(path, async (folder) => {
    const models: Array<[SavedRole, Qwen2Model | null]> = [
      ['actor', roles.actor],
      ['critic', roles.critic],
      // a LoRA run's reference is actor_train's own base, which the actor's adapter folder names
      ['reference', roles.reference?.sharesBaseWith(roles.actor) ? null : roles.reference],
      ['actor_infer', roles.infer === roles.actor ? null : roles.infer],
    ];
    const saved: SavedRole[] = [];
    for (const [role, model] of models) {
      if (!model) continue;
      await saveModel(join(folder, role), model, roles.tokenizer, { dtype: 'fp32', base: roles.base });
      saved.push(role);
    }
    const moments: Weights = new Map();
    const actorOptimizer = await addMoments(moments, 'actor_train', roles.actorOptimizer);
    const criticOptimizer = roles.criticOptimizer ? await addMoments(moments, 'critic', roles.criticOptimizer) : null;
    writeSafetensors(join(folder, OPTIMIZER_FILE), moments);

    const state: TrainerStateFile = {
      global_step: loop.step,
      max_steps: config.max_steps,
      exp_name: config.exp_name,
      rng: { seed: config.seed, train_next_episode: loop.trainEpisodes },
      kl_coef: loop.klCoef,
      policy_version: loop.policyVersion,
      skipped_updates: loop.skippedUpdates,
      failed_steps_in_a_row: loop.failedStepsInARow,
      skipped_updates_in_a_row: loop.skippedUpdatesInARow,
      ...(loop.roleBaselines && Object.keys(loop.roleBaselines).length > 0 ? { role_baselines: loop.roleBaselines } : {}),
      lr_schedule: { actor_train: scheduleOf(config, 'actor_train'), critic: roles.critic ? scheduleOf(config, 'critic') : null },
      optimizers: { actor_train: actorOptimizer, critic: criticOptimizer },
      roles: saved,
      resumed_from: contents.resumedFrom,
      ...(loop.inFlight ? { in_flight: { file: IN_FLIGHT_FILE, batches: loop.inFlight.batches.length } } : {}),
      ...(loop.ledger ? { ledger: { file: LEDGER_FILE, jobs: loop.ledger.jobs.length } } : {}),
      ...(loop.lineage ? { history: loop.lineage } : {}),
    };
    if (loop.inFlight) writeFileSync(join(folder, IN_FLIGHT_FILE), inFlightJson(loop.inFlight));
    if (loop.ledger) writeFileSync(join(folder, LEDGER_FILE), ledgerJson(loop.ledger));
    writeFileSync(join(folder, TRAINER_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
    writeFileSync(join(folder, HISTORY_FILE), contents.history.map(jsonlLine).join(''));
    // where this run came from is history; the config describes the run itself
    writeFileSync(join(folder, CONFIG_FILE), stringifyYaml(maskSecrets({ ...config, resume_from_checkpoint: false })));
    seal(folder, loop.step);
  });
  flush(dirname(path));
  return path;
}

/** Deletes all but the newest `keep` checkpoints (null or 0 keeps all); returns the deleted paths. */
export function pruneCheckpoints(root: string, keep: number | null): string[] {
  if (!keep) return [];
  const doomed = listCheckpoints(root).slice(keep);
  for (const { path } of doomed) removeCheckpoint(path);
  if (doomed.length) flush(root);
  return doomed.map((c) => c.path);
}
