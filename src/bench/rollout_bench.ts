/**
 * The rollout benchmark: generated tokens/s of FrozenLake episodes when all environments share
 * one continuously batched decode, against decoding for one environment at a time
 * (max_running_requests 1: every sequence alone, no batching). Same model (the default
 * agentic:tiny policy, random init, sampling at temperature 1), same envs, same token budgets.
 * The one-at-a-time side plays fewer episodes (it is slow); tokens/s is a rate either way.
 */
import { resolveInterpolations } from '../config/interpolate';
import { configDefaults, type AgenticConfig } from '../config/schema';
import { mergeOver, type TreeObject } from '../config/tree';
import { validateWithPlugins } from '../config/load';
import { tf } from '../engine/tf';
import { loadModel } from '../model/load';
import { PluginHost } from '../host/plugin_host';
import { ChatFormat } from '../rollout/chat';
import { EnvManager, makePolicy } from '../rollout/env_manager';
import type { SchedulerStats } from '../rollout/scheduler';
import type { RolloutBatch } from '../rollout/types';

export interface RolloutBenchOptions {
  /** Environments playing at once in the batched run. */
  envs: number;
  /** Environments played one at a time. */
  alone: number;
  maxSteps: number;
  tokensPerStep: number;
}

export const ROLLOUT_BENCH: RolloutBenchOptions = { envs: 64, alone: 4, maxSteps: 3, tokensPerStep: 32 };
export const QUICK_ROLLOUT_BENCH: RolloutBenchOptions = { envs: 4, alone: 1, maxSteps: 1, tokensPerStep: 4 };

export interface RolloutRun {
  envs: number;
  maxRunning: number;
  episodes: number;
  generatedTokens: number;
  /** Prompt ids prefilled, and prompt ids whose keys and values were reused from earlier turns. */
  prefillTokens: number;
  reusedTokens: number;
  seconds: number;
  tokensPerSecond: number;
  meanRows: number;
  peakRows: number;
  /** Seconds prefilling prompts and decoding tokens (the rest is env steps and waiting). */
  prefillSeconds: number;
  decodeSeconds: number;
  /** Generated tokens per second of decoding alone. */
  decodeTokensPerSecond: number;
}

export interface RolloutBenchResult {
  env: 'frozen_lake';
  model: string;
  maxSteps: number;
  tokensPerStep: number;
  batched: RolloutRun;
  oneAtATime: RolloutRun;
  /** batched tokens/s over one-at-a-time tokens/s, end to end. */
  speedup: number;
  /** The same for the decoding phase alone (prefill excluded). */
  decodeSpeedup: number;
}

async function benchConfig(envs: number, maxRunning: number, options: RolloutBenchOptions, host: PluginHost): Promise<AgenticConfig> {
  const tree = {
    seed: 1,
    sequence_length: 1024,
    rollout_batch_size: envs,
    max_running_requests: maxRunning,
    custom_envs: {
      FrozenLake: {
        env_type: 'frozen_lake',
        max_steps: options.maxSteps,
        max_tokens_per_step: options.tokensPerStep,
        env_config: { size: 4, is_slippery: false, format_penalty: -0.01 },
      },
    },
    train_env_manager: {
      num_env_groups: envs,
      group_size: 1,
      tags: ['FrozenLake'],
      generating_args: { max_new_tokens: options.tokensPerStep, temperature: 1, top_p: 1, top_k: 0 },
    },
    val_env_manager: { num_env_groups: 1, group_size: 1, tags: ['FrozenLake'] },
    val_batch_size: 1,
  };
  return validateWithPlugins(resolveInterpolations(mergeOver(configDefaults() as TreeObject, tree as TreeObject)), host);
}

export async function runRolloutBench(options: RolloutBenchOptions, info: (line: string) => void = () => {}): Promise<RolloutBenchResult> {
  const host = new PluginHost();
  const { model, tokenizer, source } = await loadModel(null, { seed: 1, trainable: false });
  const chat = new ChatFormat(tokenizer);
  const run = async (envs: number, maxRunning: number): Promise<RolloutRun> => {
    const config = await benchConfig(envs, maxRunning, options, host);
    const manager = await EnvManager.build('train', config, host);
    const policy = makePolicy(config, 'train', model, chat);
    const before = tf.memory().numTensors;
    let batch: RolloutBatch;
    try {
      batch = await manager.collect(envs, policy, chat);
    } finally {
      await policy.close();
      await manager.close();
    }
    // checked only after a rollout that worked, so a failure is reported as itself
    if (tf.memory().numTensors !== before) throw new Error(`the rollout leaked ${tf.memory().numTensors - before} tensors`);
    const stats = policy.stats() as SchedulerStats;
    const seconds = batch.metrics['time/rollout']!;
    const result: RolloutRun = {
      envs,
      maxRunning,
      episodes: batch.episodes.length,
      generatedTokens: stats.generatedTokens,
      prefillTokens: stats.prefillTokens,
      reusedTokens: stats.reusedTokens,
      seconds,
      tokensPerSecond: stats.generatedTokens / seconds,
      meanRows: stats.decodeSteps ? stats.rowSteps / stats.decodeSteps : 0,
      peakRows: stats.peakRows,
      prefillSeconds: stats.prefillSeconds,
      decodeSeconds: stats.decodeSeconds,
      decodeTokensPerSecond: stats.generatedTokens / stats.decodeSeconds,
    };
    info(
      `${envs} envs, ${maxRunning} at a time: ${result.generatedTokens} tokens in ${seconds.toFixed(2)} s = ${result.tokensPerSecond.toFixed(0)} tokens/s (prefill ${result.prefillSeconds.toFixed(2)} s for ${result.prefillTokens} prompt ids, decode ${result.decodeSeconds.toFixed(2)} s, mean batch ${result.meanRows.toFixed(1)} rows)`,
    );
    return result;
  };
  try {
    const batched = await run(options.envs, options.envs);
    const oneAtATime = await run(options.alone, 1);
    return {
      env: 'frozen_lake',
      model: source,
      maxSteps: options.maxSteps,
      tokensPerStep: options.tokensPerStep,
      batched,
      oneAtATime,
      speedup: batched.tokensPerSecond / oneAtATime.tokensPerSecond,
      decodeSpeedup: batched.decodeTokensPerSecond / oneAtATime.decodeTokensPerSecond,
    };
  } finally {
    model.dispose();
  }
}
