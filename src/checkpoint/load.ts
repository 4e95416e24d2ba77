/**
 * Reading a checkpoint back: which one to resume from, the config that builds the roles from its
 * model folders, and the rest of the state (optimizer moments, the lagging actor_infer, the loop).
 *
 * A checkpoint named explicitly must be complete and intact, or it is a one-line error; `auto`
 * takes the newest that is, and says which newer ones it skipped and why.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AgenticConfig } from '../config/schema';
import { CheckpointError, ConfigError, firstLine } from '../errors';
import { tf } from '../engine/tf';
import { copyWeights } from '../model/copy_weights';
import { loadHfFolder } from '../model/hf_folder';
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, adapterVariables, readAdapterFolder } from '../model/lora';
import { adaptersFrom } from '../model/lora_adapters';
import type { AdamW } from '../model/optim';
import { Qwen2Model } from '../model/qwen2';
import { readSafetensors, type Weights } from '../model/safetensors';
import { readMetricsJsonl } from '../tracking/jsonl';
import { roleNeeds } from '../train/roles';
import type { Trainer } from '../train/trainer';
import type { StepReport } from '../train/types';
import { displayPath } from '../util/paths';
import { listCheckpoints } from './folders';
import { readInFlight } from './in_flight';
import { readLedger } from './ledger';
import { MANIFEST_FILE, verifyCheckpoint } from './manifest';
import { CONFIG_FILE, HISTORY_FILE, momentName, OPTIMIZER_FILE } from './save';
import { loopStateOf, TRAINER_STATE_FILE, TrainerStateFile, type SavedRole } from './state';

export interface Checkpoint {
  /** Absolute path of the checkpoint-N folder. */
  path: string;
  /** Steps done: the resumed run starts at this global_step. */
  step: number;
  state: TrainerStateFile;
}

/** A verified checkpoint; a CheckpointError naming the folder when it is missing, partial or corrupt. */
export function openCheckpoint(path: string): Checkpoint {
  const folder = resolve(path);
  const inside = existsSync(join(folder, MANIFEST_FILE)) ? [] : listCheckpoints(folder);
  if (inside.length)
    throw new CheckpointError(`${displayPath(folder)}: a folder of checkpoints, not one; name one of them (checkpoint-${inside[0]!.step}) or resume with auto`);
  const manifest = verifyCheckpoint(folder);
  const statePath = join(folder, TRAINER_STATE_FILE);
  if (!(TRAINER_STATE_FILE in manifest.files)) throw new CheckpointError(`${displayPath(folder)}: no ${TRAINER_STATE_FILE} (not an agentic checkpoint)`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(statePath, 'utf8'));
  } catch (error) {
    throw new CheckpointError(`${displayPath(statePath)}: ${firstLine(error)}`);
  }
  const parsed = TrainerStateFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CheckpointError(`${displayPath(statePath)}: ${issue.path.join('.') || 'state'}: ${issue.message}`);
  }
  const state = parsed.data;
  if (state.global_step !== manifest.step)
    throw new CheckpointError(`${displayPath(folder)}: ${TRAINER_STATE_FILE} is at step ${state.global_step}, the manifest at ${manifest.step}`);
  // a model folder, or a LoRA run's adapter folder
  const roleFiles = ['actor', ...state.roles].flatMap((role) =>
    `${role}/${ADAPTER_CONFIG_FILE}` in manifest.files
      ? [`${role}/${ADAPTER_CONFIG_FILE}`, `${role}/${ADAPTER_WEIGHTS_FILE}`]
      : [`${role}/config.json`, `${role}/model.safetensors`],
  );
  const inFlightFiles = state.in_flight ? [state.in_flight.file] : [];
  const ledgerFiles = state.ledger ? [state.ledger.file] : [];
  for (const file of [CONFIG_FILE, HISTORY_FILE, OPTIMIZER_FILE, ...roleFiles, ...inFlightFiles, ...ledgerFiles]) {
    if (!(file in manifest.files)) throw new CheckpointError(`${displayPath(folder)}: ${file} is not in the manifest`);
  }
  return { path: folder, step: state.global_step, state };
}

/** The newest intact checkpoint under `root`, or null; each newer one that fails is skipped with a warning. */
export function newestCheckpoint(root: string, warn: (line: string) => void): Checkpoint | null {
  for (const { path } of listCheckpoints(root)) {
    try {
      return openCheckpoint(path);
    } catch (error) {
      if (!(error instanceof CheckpointError)) throw error;
      warn(`skipping ${firstLine(error)}`);
    }
  }
  return null;
}

/** The checkpoint `resume_from_checkpoint` names: null for false, and for auto when there is none. */
export function checkpointToResume(config: AgenticConfig, warn: (line: string) => void): Checkpoint | null {
  const setting = config.resume_from_checkpoint;
  if (setting === false) return null;
  if (setting === true || setting === 'auto') return newestCheckpoint(resolve(config.checkpoint_config.output_dir), warn);
  try {
    return openCheckpoint(setting);
  } catch (error) {
    if (error instanceof CheckpointError) throw new CheckpointError(`resume_from_checkpoint: ${error.message}`);
    throw error;
  }
}

/** The saved config of a checkpoint, as a file the config loader reads. */
export function savedConfigFile(checkpoint: Checkpoint): string {
  return join(checkpoint.path, CONFIG_FILE);
}

/**
 * `config` with every role loading from the checkpoint's folders, so neither `pretrain` nor a warm
 * start's base is read again. A role the config needs but the checkpoint lacks cannot be resumed.
 */
export function resumedRolesConfig(config: AgenticConfig, checkpoint: Checkpoint): AgenticConfig {
  const saved = new Set<SavedRole>(checkpoint.state.roles);
  const needs = roleNeeds(config);
  const shown = displayPath(checkpoint.path);
  if (needs.critic && !saved.has('critic')) {
    throw new ConfigError(
      `adv_estimator: ${config.adv_estimator} needs a critic, and ${shown} has none (its run did not train one); resume with the run's adv_estimator`,
    );
  }
  const lora = existsSync(join(checkpoint.path, 'actor', ADAPTER_CONFIG_FILE));
  // a LoRA run's reference is its base, which the actor's adapter folder names
  if (needs.reference && !saved.has('reference') && !lora) {
    throw new ConfigError(
      `use_kl_loss/add_token_level_kl: this config needs a reference model, and ${shown} has none (its run used no KL term); resume without one`,
    );
  }
  const from = (role: SavedRole) => join(checkpoint.path, role);
  const withModel = <K extends 'actor_train' | 'actor_infer' | 'reference' | 'critic'>(key: K, path: string | null): AgenticConfig[K] => ({
    ...config[key],
    model_args: { ...config[key].model_args, model_name_or_path: path },
  });
  const actorTrain = withModel('actor_train', from('actor'));
  return {
    ...config,
    pretrain: from('actor'),
    // the adapter the run started from is in the checkpoint's actor/ now, trained on
    actor_train: { ...actorTrain, model_args: { ...actorTrain.model_args, adapter_name_or_path: null } },
    actor_infer: withModel('actor_infer', null),
    reference: withModel('reference', saved.has('reference') ? from('reference') : null),
    critic: withModel('critic', saved.has('critic') ? from('critic') : null),
  };
}

function restoreMoments(optimizer: AdamW, moments: Weights, role: 'actor_train' | 'critic', recorded: { step: number; variables: number }, file: string): void {
  const list = Array.from({ length: recorded.variables }, (_, i) => {
    const m = moments.get(momentName(role, 'm', i));
    const v = moments.get(momentName(role, 'v', i));
    if (!m || !v) throw new CheckpointError(`${file}: ${role}'s moments of variable ${i} are missing`);
    return { m: m.data, v: v.data, shape: m.shape };
  });
  try {
    optimizer.loadState({ step: recorded.step, moments: list });
  } catch (error) {
    throw new CheckpointError(`${file}: ${role}: ${firstLine(error)}`);
  }
}

function assignWeights(target: Qwen2Model, folder: string): void {
  if (target.lora) {
    const read = readAdapterFolder(folder, target.config.num_hidden_layers, target);
    const modules = Object.values(read.modules).map((t) => tf.tensor(t.data, t.shape));
    const source = [...modules, ...adapterVariables(adaptersFrom(read))];
    const into = target.trainedVariables;
    try {
      if (source.length !== into.length) throw new CheckpointError(`${displayPath(folder)}: ${source.length} adapter tensors, the model has ${into.length}`);
      tf.tidy(() => source.forEach((v, i) => into[i]!.assign(v)));
    } finally {
      tf.dispose(source);
    }
    return;
  }
  const { weights, config } = loadHfFolder(folder);
  const source = Qwen2Model.fromWeights(config, weights, { trainable: false, source: folder });
  try {
    copyWeights(source, target);
  } finally {
    source.dispose();
  }
}

/**
 * Puts a checkpoint's state into a trainer built from `resumedRolesConfig`: the optimizer moments,
 * the lagging actor_infer's weights and the loop state. The trainer then continues at
 * `checkpoint.step`.
 */
export function restoreTrainer(trainer: Trainer, checkpoint: Checkpoint): void {
  const { roles } = trainer;
  const { state } = checkpoint;
  const file = displayPath(join(checkpoint.path, OPTIMIZER_FILE));
  const { tensors } = readSafetensors(join(checkpoint.path, OPTIMIZER_FILE));
  restoreMoments(roles.actorOptimizer, tensors, 'actor_train', state.optimizers.actor_train, file);
  if (roles.criticOptimizer && state.optimizers.critic) restoreMoments(roles.criticOptimizer, tensors, 'critic', state.optimizers.critic, file);
  if (roles.infer !== roles.actor && state.roles.includes('actor_infer')) assignWeights(roles.infer, join(checkpoint.path, 'actor_infer'));
  const inFlight = state.in_flight ? readInFlight(join(checkpoint.path, state.in_flight.file)) : null;
  const ledger = state.ledger ? readLedger(join(checkpoint.path, state.ledger.file)) : null;
  trainer.restoreLoopState({ ...loopStateOf(state), inFlight, ledger, lineage: state.history ?? null });
}

/** The reports a checkpoint's run had logged. */
export function checkpointHistory(checkpoint: Checkpoint): StepReport[] {
  const path = join(checkpoint.path, HISTORY_FILE);
  if (!existsSync(path)) return [];
  try {
    return readMetricsJsonl(path);
  } catch (error) {
    throw new CheckpointError(`${displayPath(path)}: ${firstLine(error)}`);
  }
}
