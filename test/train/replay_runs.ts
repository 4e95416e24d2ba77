/**
 * Short runs recorded before a refactor of the step, replayed after it: the same seed must give
 * the same run, bit for bit (metrics.jsonl with the timings left out). `AGENTIC_RECORD_REPLAY=1 bun test test/train/replay.test.ts`
 * records them again into test/fixtures/replay (only when a change of behaviour is meant).
 *
 * Each run goes through the command line, as a user's does: the default config from its warm-start
 * base, trajectory-wise GRPO, GAE with a critic, an asynchronous run, and a resume from a
 * checkpoint written by the code that recorded the runs.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { agentic, scratch } from '../helpers';
import { microPolicyFolder, vowelsYaml } from './helpers';

export const REPLAY_FIXTURES = resolve(import.meta.dir, '../fixtures/replay');
const VOWELS_PLUGIN = resolve(import.meta.dir, '../fixtures/plugins/vowels.ts');

/** Metrics that measure wall-clock time, and so differ between any two runs. */
const TIMING_METRIC = /^time\/|tokens_per_second|^system\/tps$/;

export interface ReplayRun {
  name: string;
  /** The vowels env on the micro policy (a config file), or the built-in default config. */
  vowels: boolean;
  overrides: string[];
  /** Resumes from the committed checkpoint of the run of this name (recorded with it). */
  resumes?: { from: string; step: number };
  /** Who computes the matmuls (AGENTIC_BLAS): XNNPACK unless a run says otherwise. */
  blas?: string;
}

// validation on seeds, as recorded: the default config's val_suite changes what validation plays, never what training does;
// and its recipe as recorded (a random-move base, RL at 1e-3 decaying, lakes of 30% holes): the run pins the step's code, not the recipe;
// 4 steps validating at 0, 2 and 4, one step of warm-up and then the cosine decay over the other three
const DEFAULT_SMALL = [
  'max_steps=4',
  'eval_steps=2',
  'rollout_batch_size=16',
  'val_batch_size=16',
  'val_suite=null',
  'warm_start.episodes=24',
  'warm_start.epochs=1',
  'warm_start.worked_examples=0',
  'warm_start.random_actions=true',
  'warm_start.lr_scheduler_type=constant',
  'actor_train.training_args.learning_rate=1e-3',
  'actor_train.training_args.lr_scheduler_type=cosine',
  'actor_train.training_args.warmup_steps=1',
  'custom_envs.FrozenLakeTrain.env_config.p=0.7',
  'custom_envs.FrozenLakeTrain.env_config.hold_out_maps=false',
];

export const REPLAY_RUNS: readonly ReplayRun[] = [
  { name: 'default', vowels: false, overrides: DEFAULT_SMALL },
  {
    name: 'grpo_traj',
    vowels: true,
    overrides: ['max_steps=3', 'adv_estimator=grpo', 'reward_normalization.method=mean_std', 'enable_old_logprobs_recompute=true', 'save_steps=1'],
  },
  {
    name: 'gae_critic',
    vowels: true,
    overrides: ['max_steps=3', 'adv_estimator=gae', 'value_clip=0.2', 'lambd=0.9', 'gamma=0.99', 'use_kl_loss=true', 'kl_loss_coef=0.1', 'ppo_epochs=2'],
  },
  { name: 'async', vowels: true, overrides: ['max_steps=3', 'adv_estimator=grpo', 'async_generation_ratio=1', 'eval_steps=2'] },
  { name: 'grpo_resumed', vowels: true, overrides: [], resumes: { from: 'grpo_traj', step: 1 } },
  // the system BLAS's path, pinned the same way (its bits belong to the library and the CPU it picks a kernel for)
  {
    name: 'gae_critic_openblas',
    vowels: true,
    overrides: ['max_steps=3', 'adv_estimator=gae', 'use_kl_loss=true', 'kl_loss_coef=0.1', 'ppo_epochs=2'],
    blas: 'openblas',
  },
];

/** One JSON object per step, as metrics.jsonl holds them, without the timings. */
export function comparableMetrics(jsonl: string): string[] {
  return jsonl
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const { step, metrics } = JSON.parse(line) as { step: number; metrics: Record<string, number> };
      return JSON.stringify({ step, metrics: Object.fromEntries(Object.entries(metrics).filter(([k]) => !TIMING_METRIC.test(k))) });
    });
}

let pretrain: string | null = null;

/** Plays a run in a fresh folder; returns the folder. */
export async function playReplay(run: ReplayRun): Promise<string> {
  const dir = scratch();
  const out = join(dir, 'run');
  const common = ['track_with=[jsonl]', `output_dir=${out}`];
  let args: string[];
  if (run.vowels) {
    pretrain ??= await microPolicyFolder();
    writeFileSync(join(dir, 'config.yaml'), vowelsYaml(pretrain));
    args = ['train', '-c', join(dir, 'config.yaml'), ...common, `plugins=[${VOWELS_PLUGIN}]`, ...run.overrides];
  } else {
    args = ['train', ...common, `warm_start.output_dir=${join(dir, 'bases')}`, ...run.overrides];
  }
  if (run.resumes) {
    const source = REPLAY_RUNS.find((r) => r.name === run.resumes!.from)!;
    mkdirSync(join(out, 'checkpoints'), { recursive: true });
    cpSync(join(REPLAY_FIXTURES, `${run.resumes.from}-checkpoint-${run.resumes.step}`), join(out, 'checkpoints', `checkpoint-${run.resumes.step}`), {
      recursive: true,
    });
    args = [...args.slice(0, args.indexOf('track_with=[jsonl]')), ...common, `plugins=[${VOWELS_PLUGIN}]`, ...source.overrides, 'resume_from_checkpoint=auto'];
  }
  const result = await agentic(args, { cwd: dir, env: { AGENTIC_BLAS: run.blas ?? 'none' } });
  if (result.code !== 0) throw new Error(`replay ${run.name} failed: ${result.stderr.trim()}`);
  return out;
}

export function metricsOf(out: string): string[] {
  return comparableMetrics(readFileSync(join(out, 'logs/metrics.jsonl'), 'utf8'));
}
