/**
 * A standalone evaluation: load the policy (or none, for random actions), play val_batch_size
 * episodes with the val env manager, and summarise them per tag.
 */
import type { AgenticConfig } from '../config/schema';
import { runBackend } from '../config/validate';
import { describeBackend, startBackend } from '../engine/backend';
import { loadModel, loadTokenizer } from '../model/load';
import type { Qwen2Model } from '../model/qwen2';
import type { Tokenizer } from '../model/tokenizer';
import type { PluginHost } from '../plugins/host';
import { ChatFormat } from './chat';
import { EnvManager, generatingArgs, makePolicy } from './env_manager';
import { formatSummaryTable, summarizeByTag, type TagSummary } from './report';
import type { RolloutBatch } from './types';

export interface EvaluationResult {
  table: string;
  /** The episodes played, with their samples and metrics. */
  batch: RolloutBatch;
  json: {
    exp_name: string;
    seed: number;
    policy: 'model' | 'random';
    /** The model evaluated (preset or folder), null for the random policy. */
    model: string | null;
    backend: string | null;
    episodes: number;
    seconds: number;
    generating_args: Record<string, unknown> | null;
    tags: Record<string, TagSummary>;
    metrics: Record<string, number>;
  };
}

/** Plays `episodes` episodes (default val_batch_size; whole groups of val_env_manager.group_size). */
export async function evaluate(
  config: AgenticConfig,
  host: PluginHost,
  info: (line: string) => void = () => {},
  episodes = config.val_batch_size,
): Promise<EvaluationResult> {
  const random = config.val_env_manager.llm_proxy.proxy_type === 'random';
  const reference = config.actor_infer.model_args.model_name_or_path ?? config.pretrain;
  let model: Qwen2Model | null = null;
  let tokenizer: Tokenizer;
  let source: string | null = null;
  let backend: string | null = null;
  if (random) {
    tokenizer = await loadTokenizer(reference);
  } else {
    const started = await startBackend(runBackend(config), { webgpuAdapter: config.webgpu_adapter, blas: config.blas });
    backend = describeBackend(started);
    const loaded = await loadModel(reference, { seed: config.seed, trainable: false });
    ({ model, tokenizer, source } = loaded);
    info(`policy: ${source} on ${backend}`);
  }
  const chat = new ChatFormat(tokenizer);
  const manager = await EnvManager.build('val', config, host);
  const policy = makePolicy(config, 'val', model, chat);
  info(`playing ${episodes} episodes on ${manager.slots.length} environments (${random ? 'random actions' : 'the model'})`);
  try {
    const batch = await manager.collect(episodes, policy, chat);
    const tags = summarizeByTag(batch);
    const seconds = batch.metrics['time/step_val'] ?? 0;
    if (!random)
      info(
        `generated ${batch.metrics['val/rollout/generated_tokens']} tokens in ${seconds.toFixed(1)} s (${(batch.metrics['val/rollout/tokens_per_second'] ?? 0).toFixed(0)} tokens/s)`,
      );
    return {
      table: formatSummaryTable(tags),
      batch,
      json: {
        exp_name: config.exp_name,
        seed: config.seed,
        policy: random ? 'random' : 'model',
        model: source,
        backend,
        episodes: batch.episodes.length,
        seconds,
        generating_args: random ? null : { ...generatingArgs(config, 'val') },
        tags,
        metrics: batch.metrics,
      },
    };
  } finally {
    await policy.close();
    await manager.close();
    model?.dispose();
  }
}
