/**
 * A whole training run, as `agentic train` starts it: record the config, start the backend, build
 * the trainer (or resume it from a checkpoint), log every step to the trackers, save checkpoints,
 * and save the trained policy.
 */
import { join, resolve } from 'node:path';
import { changedSettings } from '../checkpoint/changes';
import { listCheckpoints, removeAbandonedTemporaries, removeCheckpoint } from '../checkpoint/folders';
import { checkpointHistory, checkpointToResume, restoreTrainer, resumedRolesConfig, savedConfigFile, type Checkpoint } from '../checkpoint/load';
import { pruneCheckpoints, saveCheckpoint } from '../checkpoint/save';
import type { LoadedConfig } from '../config/load';
import { checkOutputFolders, tensorboardFolder } from '../config/output_folders';
import { writeRunConfig } from '../config/save';
import { runBackend } from '../config/validate';
import { describeBackend, startBackend } from '../engine/backend';
import { availableCores } from '../engine/cores';
import { ConfigError, firstLine } from '../errors';
import { isHttpProxy, type AgenticConfig } from '../config/schema';
import { episodeAnimation, type Animation } from '../render/animation';
import { replayEpisode } from '../render/replay';
import type { Episode } from '../rollout/types';
import { saveModel } from '../model/load';
import { checkPythonSandbox } from '../config/sandbox_check';
import type { PluginHost } from '../host/plugin_host';
import { ConsoleTracker } from '../tracking/console';
import { CurvesTracker } from '../tracking/curves';
import { JsonlTracker, jsonlLine } from '../tracking/jsonl';
import { TensorboardTracker } from '../tracking/tensorboard';
import { episodeMarkdown } from '../tracking/transcript';
import { refuseWandb, type ReachProbe } from '../tracking/wandb';
import { writeFileAtomic } from '../util/atomic';
import { displayPath } from '../util/paths';
import { applyMaxEpochs } from '../rollout/max_epochs';
import { warmStart } from '../train/warm_start/train_base';
import { openRollouts } from '../rollout_sources/open';
import { Trainer, type TrainerHooks, type TrainSummary } from '../train/trainer';
import type { StepReport } from '../train/types';

export interface RunOptions {
  info: (line: string) => void;
  warn: (line: string) => void;
  /** Where console lines go (stderr by default). */
  write?: (text: string) => void;
  tty?: boolean;
  poison?: TrainerHooks['poison'];
  /** How `track_with: wandb` checks that W&B answers (tests replace the network call). */
  wandbProbe?: ReachProbe;
  /** Where WANDB_API_KEY and WANDB_BASE_URL are read (process.env by default). */
  env?: Record<string, string | undefined>;
  /** Called after each checkpoint is in place. */
  onCheckpoint?: (path: string) => void | Promise<void>;
}

export interface RunResult extends TrainSummary {
  /** The trained policy, a Hugging Face folder. */
  modelDir: string;
  metricsFile: string | null;
  curvesFile: string | null;
  /** The TensorBoard log folder, for `tensorboard --logdir`. */
  tensorboardDir: string | null;
  /** The checkpoint it continued from, or null for a run from step 0. */
  resumedFrom: string | null;
}

/** What the run cannot do, said before it starts rather than discovered after. */
async function checkAvailable(loaded: LoadedConfig, options: RunOptions): Promise<void> {
  const c = loaded.config;
  if (c.track_with.includes('wandb')) await refuseWandb(resolve(c.logging_dir), options.env, options.wandbProbe);
}

/** The run writes weights for inference servers (a manager it plays asks them), or for distributed workers with a local copy of the actor. */
function sendsWeights(c: AgenticConfig): boolean {
  const validates = c.eval_steps > 0 && c.val_env_manager.tags.length > 0;
  const sent = (type: AgenticConfig['train_env_manager']['llm_proxy']['proxy_type']) =>
    isHttpProxy(type) || (c.distributed.redis_url !== null && type === 'policy');
  return sent(c.train_env_manager.llm_proxy.proxy_type) || (validates && sent(c.val_env_manager.llm_proxy.proxy_type));
}

/** Validation episodes replayed into captioned GIFs; a replay that fails costs its picture, with one warning a run. */
function episodeAnimator(config: AgenticConfig, host: PluginHost, warn: (line: string) => void) {
  let warned = false;
  return async (episode: Episode): Promise<Animation | null> => {
    try {
      return episodeAnimation(await replayEpisode(config, host, episode));
    } catch (error) {
      if (!warned) warn(`tensorboard: no picture of a validation episode: ${firstLine(error)}`);
      warned = true;
      return null;
    }
  };
}

/** A checkpoint is due after the step that makes `done` steps. */
function checkpointDue(done: number, c: LoadedConfig['config']): boolean {
  return done === c.max_steps || (c.save_steps > 0 && done % c.save_steps === 0);
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

/**
 * Clears the checkpoint folder of what cannot belong to this run: folders a killed writer left
 * half-written, and checkpoints beyond the step the run starts at, which record another history
 * (an earlier run the user chose to overwrite, or steps after the checkpoint resumed from).
 */
function prepareCheckpointFolder(root: string, startStep: number, warn: (line: string) => void): void {
  removeAbandonedTemporaries(root);
  const later = listCheckpoints(root).filter((c) => c.step > startStep);
  if (later.length === 0) return;
  for (const { path } of later) removeCheckpoint(path);
  const names = later
    .map((c) => `checkpoint-${c.step}`)
    .reverse()
    .join(', ');
  warn(
    startStep === 0
      ? `overwrite_output_dir: removed the earlier run's ${names} from ${displayPath(root)}`
      : `removed ${names} from ${displayPath(root)}: beyond step ${startStep}, where this run continues, so of another history`,
  );
}

/**
 * Starts a run. Everything it reads is loaded and checked first (config, output folders, the
 * checkpoint to resume, plugins, every role's model); only then does it touch the output folder:
 * an earlier run's checkpoints, logs and config record survive any start that fails.
 */
export async function runTraining(loaded: LoadedConfig, host: PluginHost, options: RunOptions): Promise<RunResult> {
  let c = loaded.config;
  const started = performance.now();
  await checkAvailable(loaded, options);
  await checkPythonSandbox(c, host, { warn: options.warn });
  const epochs = await applyMaxEpochs(c, host);
  c = epochs.config;
  checkOutputFolders(c, [
    'output_dir',
    'checkpoint_config.output_dir',
    'logging_dir',
    ...(c.warm_start.enabled ? (['warm_start.output_dir'] as const) : []),
    ...(c.track_with.includes('tensorboard') ? (['tracker_kwargs.log_dir'] as const) : []),
    ...(sendsWeights(c) ? (['model_update_dir'] as const) : []),
  ]);
  const checkpointRoot = resolve(c.checkpoint_config.output_dir);
  const resumed: Checkpoint | null = checkpointToResume(c, options.warn);
  const from = resumed?.step ?? 0;
  if (from > c.max_steps) {
    throw new ConfigError(`max_steps: ${c.max_steps} is below the step of ${displayPath(resumed!.path)} (${from}); raise it to continue that run`);
  }
  if (!resumed) refuseOverwrite(c, checkpointRoot);
  // every role loads from the checkpoint: a warm start's base is neither rebuilt nor read
  const fromCheckpoint = resumed ? resumedRolesConfig(c, resumed) : null;
  const history: StepReport[] = resumed ? checkpointHistory(resumed) : [];
  options.info(`training ${c.exp_name} (seed ${c.seed}) from ${loaded.files.join(', ')}`);
  if (epochs.line) options.info(epochs.line);
  if (resumed) {
    options.info(`resuming from ${displayPath(resumed.path)}: step ${from} of ${c.max_steps}`);
    const changes = changedSettings(savedConfigFile(resumed), c);
    if (changes.length) options.warn(`resuming with settings that differ from the checkpoint's: ${changes.join(', ')}`);
  } else if (c.resume_from_checkpoint !== false) {
    options.info(`no complete checkpoint in ${displayPath(checkpointRoot)}; starting at step 0`);
  }
  // an asynchronous run's rollout worker takes one core for its own engine
  const cores = availableCores();
  const wasmThreads =
    c.async_generation_ratio > 0
      ? { threads: Math.max(1, cores.count - 1), why: `an asynchronous run's trainer leaves one of ${cores.count} available cores to its rollout worker` }
      : undefined;
  const backend = await startBackend(runBackend(c), { webgpuAdapter: c.webgpu_adapter, wasmThreads, blas: c.blas });
  options.info(`backend ${describeBackend(backend)}`);

  if (fromCheckpoint) {
    c = fromCheckpoint;
  } else if (c.warm_start.enabled) {
    const base = await warmStart(c, host, { info: options.info });
    options.info(base.built ? `warm start: base saved to ${base.folder}` : `warm start: reusing the base in ${base.folder} (built from the same settings)`);
    c = { ...c, pretrain: base.folder };
  }

  // wall time carries on from where the checkpoint's run left it
  const elapsedBefore = history.at(-1)?.metrics['time/elapsed'] ?? 0;
  const consoleTracker = new ConsoleTracker(c.max_steps, c.logging_steps, from, options.write, options.tty);
  // the trackers write files, so they are made once the trainer (every model) has loaded
  let jsonl: JsonlTracker | null = null;
  let curves: CurvesTracker | null = null;
  let tensorboard: TensorboardTracker | null = null;
  const animate = episodeAnimator(c, host, options.warn);
  const trainer: Trainer = await Trainer.create(c, host, openRollouts, {
    warn: (line) => {
      consoleTracker.clearBar();
      options.warn(line);
    },
    onStep: async (given: StepReport) => {
      const elapsed = elapsedBefore + (performance.now() - started) / 1000;
      const report = { step: given.step, metrics: { ...given.metrics, 'time/elapsed': elapsed } };
      jsonl?.log(report);
      curves?.log(report);
      tensorboard?.log(report);
      if (tensorboard && given.valEpisodes) {
        for (const [i, episode] of given.valEpisodes.entries()) {
          tensorboard.text(report.step, `val/episode_${i}`, episodeMarkdown(episode));
          const gif = await animate(episode);
          if (gif) tensorboard.animation(report.step, `val/episode_${i}`, gif);
        }
      }
      if (c.track_with.includes('console')) consoleTracker.log(report);
      if (report.step >= c.max_steps) return;
      history.push(report);
      if (!checkpointDue(report.step + 1, c)) return;
      const path = await saveCheckpoint(checkpointRoot, { trainer, config: loaded.config, history, resumedFrom: resumed?.path ?? null });
      await trainer.checkpointed();
      pruneCheckpoints(checkpointRoot, c.checkpoint_config.max_ckpt_to_keep);
      await options.onCheckpoint?.(path);
    },
    poison: options.poison,
  });
  try {
    if (resumed) restoreTrainer(trainer, resumed);

    // everything has loaded: from here on the run writes
    prepareCheckpointFolder(checkpointRoot, from, options.warn);
    const recordDir = writeRunConfig(loaded);
    if (c.track_with.includes('jsonl')) {
      // the log holds exactly the checkpoint's steps, whatever the interrupted run wrote after it
      if (resumed) writeFileAtomic(join(resolve(c.logging_dir), 'metrics.jsonl'), history.map(jsonlLine).join(''));
      jsonl = new JsonlTracker(resolve(c.logging_dir), { append: resumed !== null });
    }
    curves = c.track_with.includes('html') ? new CurvesTracker(resolve(c.logging_dir), c.exp_name, history) : null;
    // TensorBoard drops the events of steps a restarted run writes again (its purge of orphaned data)
    tensorboard = c.track_with.includes('tensorboard') ? new TensorboardTracker(resolve(tensorboardFolder(c)), { append: resumed !== null }) : null;
    options.info(`config recorded in ${recordDir}`);
    for (const [role, source] of Object.entries(trainer.roles.sources)) options.info(`${role}: ${source}`);
    options.info(
      `${c.max_steps} steps of ${c.rollout_batch_size} trajectories (${c.train_env_manager.tags.join(', ')}), adv_estimator ${c.adv_estimator}` +
        (c.eval_steps > 0 ? `, validating every ${c.eval_steps} steps on ${c.val_batch_size} episodes${c.val_suite ? ` of ${c.val_suite}` : ''}` : '') +
        `; checkpoints ${c.save_steps > 1 ? `every ${c.save_steps} steps and ` : c.save_steps === 1 ? 'every step and ' : ''}after the last in ${displayPath(checkpointRoot)}`,
    );
    const summary = await trainer.run(from);
    consoleTracker.clearBar();
    if (tensorboard?.skippedNonFinite)
      options.warn(`tensorboard: ${tensorboard.skippedNonFinite} NaN or infinite metric values were left out${jsonl ? ' (metrics.jsonl has them)' : ''}`);
    const modelDir = resolve(join(c.output_dir, 'model'));
    const { actor, tokenizer, base } = trainer.roles;
    await saveModel(modelDir, actor, tokenizer, { dtype: c.actor_train.model_args.dtype, base });
    if (actor.lora && c.actor_train.model_args.lora_save_merged) {
      await saveModel(resolve(join(c.output_dir, 'model_merged')), actor, tokenizer, { dtype: c.actor_train.model_args.dtype, merged: true });
    }
    return {
      ...summary,
      modelDir,
      metricsFile: jsonl?.path ?? null,
      curvesFile: curves?.path ?? null,
      tensorboardDir: tensorboard?.dir ?? null,
      resumedFrom: resumed?.path ?? null,
    };
  } finally {
    consoleTracker.clearBar();
    await trainer.close();
  }
}
