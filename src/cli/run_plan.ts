/**
 * What a training run decides before its first step, made once and frozen: the checks a run
 * makes before it starts (W&B answers, the Python sandbox, the output folders), the step it starts
 * at (a checkpoint to resume, or 0), the number of steps (max_epochs as steps), the engine, and the
 * models every role loads (the checkpoint's, or the warm start's base as pretrain). Nothing after
 * this rewrites the config: the trainer, the trackers and the checkpoints read `plan.config`.
 */
import { resolve } from 'node:path';
import { changedSettings } from '../checkpoint/changes';
import { listCheckpoints } from '../checkpoint/folders';
import { checkpointHistory, checkpointToResume, resumedRolesConfig, savedConfigFile, type Checkpoint } from '../checkpoint/load';
import type { LoadedConfig } from '../config/load';
import { checkOutputFolders } from '../config/output_folders';
import { isHttpProxy, type AgenticConfig } from '../config/schema';
import { runBackend } from '../config/validate';
import { describeBackend, startBackend } from '../engine/backend';
import { availableCores } from '../engine/cores';
import { ConfigError } from '../errors';
import type { PluginHost } from '../host/plugin_host';
import { applyMaxEpochs } from '../rollout/max_epochs';
import { refuseWandb, type ReachProbe } from '../tracking/wandb';
import { warmStart } from '../train/warm_start/train_base';
import type { StepReport } from '../train/types';
import { displayPath } from '../util/paths';
import { checkPythonSandbox } from './sandbox_check';

export interface PlanOptions {
  info: (line: string) => void;
  warn: (line: string) => void;
  /** How `track_with: wandb` checks that W&B answers (tests replace the network call). */
  wandbProbe?: ReachProbe;
  /** Where WANDB_API_KEY and WANDB_BASE_URL are read (process.env by default). */
  env?: Record<string, string | undefined>;
}

/** A training run's settings, resolved at its start; frozen (the configs and the history deeply). */
export interface RunPlan {
  /** The config every part of the run reads: max_steps from max_epochs, pretrain the warm start's base, or each role's model from the checkpoint. */
  readonly config: AgenticConfig;
  /** The config as loaded, which the run's record and its checkpoints save. */
  readonly loaded: LoadedConfig;
  readonly checkpointRoot: string;
  /** The checkpoint the run continues, or null for a run from step 0. */
  readonly resumed: Checkpoint | null;
  /** The step the run starts at: the checkpoint's, or 0. */
  readonly startStep: number;
  /** The steps the checkpoint's run logged, which the trackers start from. */
  readonly history: readonly StepReport[];
}

/** Freezes a tree of plain objects and arrays (parsed config, logged metrics), so nothing can rewrite a decided setting. */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}

/** The run writes weights for inference servers (a manager it plays asks them), or for distributed workers with a local copy of the actor. */
function sendsWeights(c: AgenticConfig): boolean {
  const validates = c.eval_steps > 0 && c.val_env_manager.tags.length > 0;
  const sent = (type: AgenticConfig['train_env_manager']['llm_proxy']['proxy_type']) =>
    isHttpProxy(type) || (c.distributed.redis_url !== null && type === 'policy');
  return sent(c.train_env_manager.llm_proxy.proxy_type) || (validates && sent(c.val_env_manager.llm_proxy.proxy_type));
}

/**
 * A run that starts afresh where an earlier run left checkpoints would delete them: refused unless
 * the user says so (overwrite_output_dir), before anything is loaded or written.
 */
function refuseOverwrite(c: AgenticConfig, root: string): void {
  const earlier = listCheckpoints(root);
  if (earlier.length === 0 || c.overwrite_output_dir) return;
  const newest = `checkpoint-${earlier[0]!.step}`;
  throw new ConfigError(
    `checkpoint_config.output_dir: ${displayPath(root)} holds an earlier run (${earlier.length === 1 ? newest : `${earlier.length} checkpoints, the newest ${newest}`}); continue it with \`agentic resume\` or resume_from_checkpoint=auto, replace it with overwrite_output_dir=true, or choose another exp_name`,
  );
}

/** The checkpoint to continue (none, or one at a step max_steps allows); a fresh start must not replace an earlier run. */
function resumePoint(c: AgenticConfig, checkpointRoot: string, warn: (line: string) => void): Checkpoint | null {
  const resumed = checkpointToResume(c, warn);
  const from = resumed?.step ?? 0;
  if (from > c.max_steps) {
    throw new ConfigError(`max_steps: ${c.max_steps} is below the step of ${displayPath(resumed!.path)} (${from}); raise it to continue that run`);
  }
  if (!resumed) refuseOverwrite(c, checkpointRoot);
  return resumed;
}

/** The lines that say where the run starts. */
function announce(
  loaded: LoadedConfig,
  c: AgenticConfig,
  resumed: Checkpoint | null,
  checkpointRoot: string,
  epochsLine: string | null,
  options: PlanOptions,
): void {
  options.info(`training ${c.exp_name} (seed ${c.seed}) from ${loaded.files.join(', ')}`);
  if (epochsLine) options.info(epochsLine);
  if (resumed) {
    options.info(`resuming from ${displayPath(resumed.path)}: step ${resumed.step} of ${c.max_steps}`);
    const changes = changedSettings(savedConfigFile(resumed), c);
    if (changes.length) options.warn(`resuming with settings that differ from the checkpoint's: ${changes.join(', ')}`);
  } else if (c.resume_from_checkpoint !== false) {
    options.info(`no complete checkpoint in ${displayPath(checkpointRoot)}; starting at step 0`);
  }
}

/** Starts the tfjs backend all roles share; an asynchronous run's rollout worker takes one core for its own engine. */
async function startEngine(c: AgenticConfig, info: (line: string) => void): Promise<void> {
  const cores = availableCores();
  const wasmThreads =
    c.async_generation_ratio > 0
      ? { threads: Math.max(1, cores.count - 1), why: `an asynchronous run's trainer leaves one of ${cores.count} available cores to its rollout worker` }
      : undefined;
  const backend = await startBackend(runBackend(c), { webgpuAdapter: c.webgpu_adapter, wasmThreads, blas: c.blas });
  info(`backend ${describeBackend(backend)}`);
}

/** With a warm start, the config whose pretrain is the warm start's base (built now, or found built from the same settings). */
async function warmStarted(c: AgenticConfig, host: PluginHost, info: (line: string) => void): Promise<AgenticConfig> {
  if (!c.warm_start.enabled) return c;
  const base = await warmStart(c, host, { info });
  info(base.built ? `warm start: base saved to ${base.folder}` : `warm start: reusing the base in ${base.folder} (built from the same settings)`);
  return { ...c, pretrain: base.folder };
}

/**
 * Resolves the run's plan. Everything it reads is loaded and checked first (the output folders,
 * the checkpoint to resume, every role's model); it writes nothing but a warm start's base.
 */
export async function planRun(loaded: LoadedConfig, host: PluginHost, options: PlanOptions): Promise<RunPlan> {
  const given = loaded.config;
  if (given.track_with.includes('wandb')) await refuseWandb(resolve(given.logging_dir), options.env, options.wandbProbe);
  await checkPythonSandbox(given, host, { warn: options.warn });
  const epochs = await applyMaxEpochs(given, host);
  const c = epochs.config;
  checkOutputFolders(c, [
    'output_dir',
    'checkpoint_config.output_dir',
    'logging_dir',
    ...(c.warm_start.enabled ? (['warm_start.output_dir'] as const) : []),
    ...(c.track_with.includes('tensorboard') ? (['tracker_kwargs.log_dir'] as const) : []),
    ...(sendsWeights(c) ? (['model_update_dir'] as const) : []),
  ]);
  const checkpointRoot = resolve(c.checkpoint_config.output_dir);
  const resumed = resumePoint(c, checkpointRoot, options.warn);
  // every role loads from the checkpoint, checked before anything starts: a warm start's base is neither rebuilt nor read
  const resumedRoles = resumed ? resumedRolesConfig(c, resumed) : null;
  const history = resumed ? checkpointHistory(resumed) : [];
  announce(loaded, c, resumed, checkpointRoot, epochs.line, options);
  await startEngine(c, options.info);
  const config = resumedRoles ?? (await warmStarted(c, host, options.info));
  return Object.freeze({
    config: deepFreeze(config),
    loaded: deepFreeze(loaded),
    checkpointRoot,
    resumed,
    startStep: resumed?.step ?? 0,
    history: deepFreeze(history),
  });
}
