/**
 * A whole training run, as `agentic train` starts it, top to bottom: plan it (run_plan.ts: checks,
 * the step it starts at, the engine, the models; frozen), build the trainer (or restore it from
 * the checkpoint), open the trackers, run the steps (each logged to the trackers, checkpoints
 * saved as they fall due), say the held-out success it started from and ended at, and save the
 * trained policy.
 */
import { join, resolve } from 'node:path';
import { listCheckpoints, removeAbandonedTemporaries, removeCheckpoint } from '../checkpoint/folders';
import { restoreTrainer } from '../checkpoint/load';
import { pruneCheckpoints, saveCheckpoint } from '../checkpoint/save';
import type { LoadedConfig } from '../config/load';
import { tensorboardFolder } from '../config/output_folders';
import { writeRunConfig } from '../config/save';
import type { AgenticConfig } from '../config/schema';
import { firstLine } from '../errors';
import type { PluginHost } from '../host/plugin_host';
import { saveModel } from '../model/load';
import { episodeAnimation, type Animation } from '../render/animation';
import { replayEpisode } from '../render/replay';
import type { Episode } from '../rollout/types';
import { ConsoleTracker } from '../tracking/console';
import { CurvesTracker } from '../tracking/curves';
import { JsonlTracker, jsonlLine } from '../tracking/jsonl';
import { TensorboardTracker } from '../tracking/tensorboard';
import { heldOutChangeLine } from '../tracking/held_out_change';
import { episodeMarkdown } from '../tracking/transcript';
import { openRollouts } from '../rollout_sources/open';
import { Trainer, type TrainerHooks, type TrainSummary } from '../train/trainer';
import type { StepReport } from '../train/types';
import { writeFileAtomic } from '../util/atomic';
import { displayPath } from '../util/paths';
import { planRun, type PlanOptions, type RunPlan } from './run_plan';

export interface RunOptions extends PlanOptions {
  /** Where console lines go (stderr by default). */
  write?: (text: string) => void;
  tty?: boolean;
  poison?: TrainerHooks['poison'];
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

/** The run's trackers: the console's from the start, those that write files once the trainer (every model) has loaded. */
class RunTrackers {
  readonly console: ConsoleTracker;
  private jsonl: JsonlTracker | null = null;
  private curves: CurvesTracker | null = null;
  private tensorboard: TensorboardTracker | null = null;

  constructor(
    private readonly plan: RunPlan,
    options: RunOptions,
    private readonly animate: (episode: Episode) => Promise<Animation | null>,
  ) {
    this.console = new ConsoleTracker(plan.config.max_steps, plan.config.logging_steps, plan.startStep, options.write, options.tty);
  }

  /** Opens the trackers that write files; a resumed run's log holds exactly the checkpoint's steps, whatever the interrupted run wrote after it. */
  open(history: readonly StepReport[]): void {
    const c = this.plan.config;
    const resumed = this.plan.resumed !== null;
    if (c.track_with.includes('jsonl')) {
      if (resumed) writeFileAtomic(join(resolve(c.logging_dir), 'metrics.jsonl'), history.map(jsonlLine).join(''));
      this.jsonl = new JsonlTracker(resolve(c.logging_dir), { append: resumed });
    }
    this.curves = c.track_with.includes('html') ? new CurvesTracker(resolve(c.logging_dir), c.exp_name, history) : null;
    // TensorBoard drops the events of steps a restarted run writes again (its purge of orphaned data)
    this.tensorboard = c.track_with.includes('tensorboard') ? new TensorboardTracker(resolve(tensorboardFolder(c)), { append: resumed }) : null;
  }

  /** Logs a step to every tracker; TensorBoard also gets the validation episodes, as text and pictures. */
  async log(report: StepReport, valEpisodes: readonly Episode[] | undefined): Promise<void> {
    this.jsonl?.log(report);
    this.curves?.log(report);
    this.tensorboard?.log(report);
    if (this.tensorboard && valEpisodes) {
      for (const [i, episode] of valEpisodes.entries()) {
        this.tensorboard.text(report.step, `val/episode_${i}`, episodeMarkdown(episode));
        const gif = await this.animate(episode);
        if (gif) this.tensorboard.animation(report.step, `val/episode_${i}`, gif);
      }
    }
    if (this.plan.config.track_with.includes('console')) this.console.log(report);
  }

  /** After the last step: what TensorBoard left out, said once. */
  finish(warn: (line: string) => void): void {
    this.console.clearBar();
    if (this.tensorboard?.skippedNonFinite)
      warn(`tensorboard: ${this.tensorboard.skippedNonFinite} NaN or infinite metric values were left out${this.jsonl ? ' (metrics.jsonl has them)' : ''}`);
  }

  get files(): Pick<RunResult, 'metricsFile' | 'curvesFile' | 'tensorboardDir'> {
    return { metricsFile: this.jsonl?.path ?? null, curvesFile: this.curves?.path ?? null, tensorboardDir: this.tensorboard?.dir ?? null };
  }
}

/** Everything has loaded: from here on the run writes (its checkpoint folder cleared, its config recorded, its trackers opened). */
function startWriting(
  plan: RunPlan,
  trainer: Trainer,
  trackers: RunTrackers,
  history: readonly StepReport[],
  info: (line: string) => void,
  warn: (line: string) => void,
): void {
  const c = plan.config;
  prepareCheckpointFolder(plan.checkpointRoot, plan.startStep, warn);
  const recordDir = writeRunConfig(plan.loaded);
  trackers.open(history);
  info(`config recorded in ${recordDir}`);
  for (const [role, source] of Object.entries(trainer.roles.sources)) info(`${role}: ${source}`);
  info(
    `${c.max_steps} steps of ${c.rollout_batch_size} trajectories (${c.train_env_manager.tags.join(', ')}), adv_estimator ${c.adv_estimator}` +
      (c.eval_steps > 0 ? `, validating every ${c.eval_steps} steps on ${c.val_batch_size} episodes${c.val_suite ? ` of ${c.val_suite}` : ''}` : '') +
      `; checkpoints ${c.save_steps > 1 ? `every ${c.save_steps} steps and ` : c.save_steps === 1 ? 'every step and ' : ''}after the last in ${displayPath(plan.checkpointRoot)}`,
  );
}

/** Saves a checkpoint of the steps done (the config as loaded, the history so far), then keeps the newest max_ckpt_to_keep. */
async function saveDue(plan: RunPlan, trainer: Trainer, history: readonly StepReport[], options: RunOptions): Promise<void> {
  const root = plan.checkpointRoot;
  const path = await saveCheckpoint(root, { trainer, config: plan.loaded.config, history: [...history], resumedFrom: plan.resumed?.path ?? null });
  await trainer.checkpointed();
  pruneCheckpoints(root, plan.config.checkpoint_config.max_ckpt_to_keep);
  await options.onCheckpoint?.(path);
}

/** Saves the trained policy (and, for LoRA with lora_save_merged, its merged copy); returns its folder. */
async function saveTrained(c: AgenticConfig, trainer: Trainer): Promise<string> {
  const modelDir = resolve(join(c.output_dir, 'model'));
  const { actor, tokenizer, base } = trainer.roles;
  await saveModel(modelDir, actor, tokenizer, { dtype: c.actor_train.model_args.dtype, base });
  if (actor.lora && c.actor_train.model_args.lora_save_merged) {
    await saveModel(resolve(join(c.output_dir, 'model_merged')), actor, tokenizer, { dtype: c.actor_train.model_args.dtype, merged: true });
  }
  return modelDir;
}

/**
 * Runs training: plan, trainer, trackers, steps, the trained policy. Everything it reads is loaded
 * and checked first (the plan, every role's model); only then does it touch the output folder: an
 * earlier run's checkpoints, logs and config record survive any start that fails.
 */
export async function runTraining(loaded: LoadedConfig, host: PluginHost, options: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const plan = await planRun(loaded, host, options);
  const c = plan.config;
  const history = [...plan.history];
  // wall time carries on from where the checkpoint's run left it
  const elapsedBefore = history.at(-1)?.metrics['time/elapsed'] ?? 0;
  const trackers = new RunTrackers(plan, options, episodeAnimator(c, host, options.warn));
  const trainer: Trainer = await Trainer.create(c, host, openRollouts, {
    warn: (line) => {
      trackers.console.clearBar();
      options.warn(line);
    },
    onStep: async (given: StepReport) => {
      const elapsed = elapsedBefore + (performance.now() - started) / 1000;
      const report: StepReport = {
        step: given.step,
        metrics: { ...given.metrics, 'time/elapsed': elapsed },
        ...(given.failures ? { failures: given.failures } : {}),
      };
      await trackers.log(report, given.valEpisodes);
      if (report.step >= c.max_steps) return;
      history.push(report);
      if (checkpointDue(report.step + 1, c)) await saveDue(plan, trainer, history, options);
    },
    poison: options.poison,
  });
  try {
    if (plan.resumed) restoreTrainer(trainer, plan.resumed);
    startWriting(plan, trainer, trackers, history, options.info, options.warn);
    const summary = await trainer.run(plan.startStep);
    trackers.finish(options.warn);
    // a resumed run's base is in its checkpoint's log (the steps metrics.jsonl was rewritten with)
    const change = heldOutChangeLine(c, [...plan.history, ...summary.reports], plan.resumed !== null);
    if (change) options.info(change);
    const modelDir = await saveTrained(c, trainer);
    return { ...summary, modelDir, ...trackers.files, resumedFrom: plan.resumed?.path ?? null };
  } finally {
    trackers.console.clearBar();
    await trainer.close();
  }
}
