/**
 * A whole training run, as `agentic train` starts it: record the config, start the backend, build
 * the trainer, log every step to the trackers, and save the trained policy.
 */
import { join, resolve } from 'node:path';
import type { LoadedConfig } from '../config/load';
import { writeRunConfig } from '../config/save';
import { runBackend } from '../config/validate';
import { startBackend } from '../engine/backend';
import { ConfigError, firstLine } from '../errors';
import type { AgenticConfig } from '../config/schema';
import { episodeAnimation, type Animation } from '../render/animation';
import { replayEpisode } from '../render/replay';
import type { Episode } from '../rollout/types';
import { saveModel } from '../model/load';
import type { PluginHost } from '../plugins/host';
import { ConsoleTracker } from '../tracking/console';
import { CurvesTracker } from '../tracking/curves';
import { JsonlTracker } from '../tracking/jsonl';
import { TensorboardTracker } from '../tracking/tensorboard';
import { episodeMarkdown } from '../tracking/transcript';
import { refuseWandb, type ReachProbe } from '../tracking/wandb';
import { warmStart } from './warm_start';
import { Trainer, type StepReport, type TrainerHooks, type TrainSummary } from './trainer';

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
}

export interface RunResult extends TrainSummary {
  /** The trained policy, a Hugging Face folder. */
  modelDir: string;
  metricsFile: string | null;
  curvesFile: string | null;
  /** The TensorBoard log folder, for `tensorboard --logdir`. */
  tensorboardDir: string | null;
}

/** What the run cannot do, said before it starts rather than discovered after. */
async function checkAvailable(loaded: LoadedConfig, options: RunOptions): Promise<void> {
  const c = loaded.config;
  if (c.resume_from_checkpoint !== false) {
    throw new ConfigError('resume_from_checkpoint: resuming arrives with checkpoints (issue #8); set it to false');
  }
  if (c.track_with.includes('wandb')) await refuseWandb(resolve(c.logging_dir), options.env, options.wandbProbe);
  options.warn(`checkpoints every save_steps arrive with issue #8; this run saves its final policy only`);
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

export async function runTraining(loaded: LoadedConfig, host: PluginHost, options: RunOptions): Promise<RunResult> {
  let c = loaded.config;
  const started = performance.now();
  await checkAvailable(loaded, options);
  options.info(`training ${c.exp_name} (seed ${c.seed}) from ${loaded.files.join(', ')}`);
  const recordDir = writeRunConfig(loaded);
  const backend = await startBackend(runBackend(c), { webgpuAdapter: c.webgpu_adapter });
  options.info(`backend ${backend.detail ? `${backend.name} (${backend.detail})` : backend.name}; config recorded in ${recordDir}`);

  if (c.warm_start.enabled) {
    const base = await warmStart(c, host, { info: options.info });
    options.info(base.built ? `warm start: base saved to ${base.folder}` : `warm start: reusing the base in ${base.folder} (built from the same settings)`);
    c = { ...c, pretrain: base.folder };
  }

  const consoleTracker = new ConsoleTracker(c.max_steps, c.logging_steps, 0, options.write, options.tty);
  const jsonl = c.track_with.includes('jsonl') ? new JsonlTracker(resolve(c.logging_dir)) : null;
  const curves = c.track_with.includes('html') ? new CurvesTracker(resolve(c.logging_dir), c.exp_name) : null;
  const tensorboard = c.track_with.includes('tensorboard') ? new TensorboardTracker(resolve(c.logging_dir)) : null;
  const animate = episodeAnimator(c, host, options.warn);
  const trainer = await Trainer.create(c, host, {
    warn: (line) => {
      consoleTracker.clearBar();
      options.warn(line);
    },
    onStep: async (given: StepReport) => {
      // wall time since the run began, warm start included: the x axis the learning targets use
      const report = { step: given.step, metrics: { ...given.metrics, 'time/elapsed': (performance.now() - started) / 1000 } };
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
    },
    poison: options.poison,
  });
  try {
    for (const [role, source] of Object.entries(trainer.roles.sources)) options.info(`${role}: ${source}`);
    options.info(
      `${c.max_steps} steps of ${c.rollout_batch_size} trajectories (${c.train_env_manager.tags.join(', ')}), adv_estimator ${c.adv_estimator}` +
        (c.eval_steps > 0 ? `, validating every ${c.eval_steps} steps on ${c.val_batch_size} episodes` : ''),
    );
    const summary = await trainer.run();
    consoleTracker.clearBar();
    if (tensorboard?.skippedNonFinite) options.warn(`tensorboard: ${tensorboard.skippedNonFinite} NaN or infinite metric values were left out${jsonl ? ' (metrics.jsonl has them)' : ''}`);
    const modelDir = resolve(join(c.output_dir, 'model'));
    await saveModel(modelDir, trainer.roles.actor, trainer.roles.tokenizer, c.actor_train.model_args.dtype);
    return { ...summary, modelDir, metricsFile: jsonl?.path ?? null, curvesFile: curves?.path ?? null, tensorboardDir: tensorboard?.dir ?? null };
  } finally {
    consoleTracker.clearBar();
    await trainer.close();
  }
}
