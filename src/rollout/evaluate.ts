/**
 * A standalone evaluation: load the policy (or none, for random actions or inference servers),
 * play the val env manager's episodes (every episode of val_suite, else val_batch_size drawn by
 * seed) once per pass, and summarise them per tag and as a held-out result with 95% intervals.
 * Pass k plays with the run's seed + k: the same episodes, with their sampling and the envs'
 * randomness (slippery ice, random actions) drawn anew. Envs that compute their episodes' optimum
 * (EvaluationHooks.optimalSuccess) add it to the held-out result (optima.ts).
 */
import { isHttpProxy, type AgenticConfig } from '../config/schema';
import { policyAdapter, runBackend } from '../config/validate';
import { describeBackend, startBackend } from '../engine/backend';
import { loadModel, loadTokenizer } from '../model/load';
import type { Qwen2Model } from '../model/qwen2';
import type { Tokenizer } from '../model/tokenizer';
import type { PluginHost } from '../host/plugin_host';
import { loadSuite } from '../config/suites';
import { ChatFormat } from './chat';
import { EnvManager, generatingArgs, makePolicy } from './env_manager';
import type { Policy } from './policy';
import { heldOut, type HeldOut } from './held_out';
import { withOptima } from './optima';
import { formatSummaryTable, summarizeByTag, type TagSummary } from './report';
import { type SeatResults, seatResults } from './seat_results';
import type { RolloutBatch } from './types';

export interface EvaluationResult {
  table: string;
  /** The episodes played (every pass's, in order, with their optimum where the env computes one), their samples and the first pass's metrics. */
  batch: RolloutBatch;
  json: {
    exp_name: string;
    seed: number;
    /** The seeds of the passes: seed, seed + 1, ... */
    seeds: number[];
    /** The val_suite played, or null: episodes drawn by seed. */
    suite: string | null;
    policy: 'model' | 'random';
    /** The model evaluated (preset or folder, or the inference servers that answered), null for the random policy. */
    model: string | null;
    backend: string | null;
    episodes: number;
    seconds: number;
    generating_args: Record<string, unknown> | null;
    tags: Record<string, TagSummary>;
    /** Success and mean score over every episode of every pass, with 95% intervals, and the optimum where the env computes it. */
    held_out: HeldOut;
    /** Envs with seats: win, draw and loss per tag, opponent and seat, with 95% intervals (seat_results.ts); absent without such envs. */
    seats?: SeatResults;
    /** Each metric's mean over the passes. */
    metrics: Record<string, number>;
  };
}

/** The episodes an evaluation plays per pass: the whole suite, by whole groups, else val_batch_size. */
export function evaluationEpisodes(config: AgenticConfig): number {
  return config.val_suite === null ? config.val_batch_size : loadSuite(config.val_suite).episodes.length * config.val_env_manager.group_size;
}

/** Plays `episodes` episodes (whole groups of val_env_manager.group_size) `passes` times. */
export async function evaluate(
  config: AgenticConfig,
  host: PluginHost,
  info: (line: string) => void = () => {},
  episodes = evaluationEpisodes(config),
  passes = 1,
): Promise<EvaluationResult> {
  const proxy = config.val_env_manager.llm_proxy.proxy_type;
  const random = proxy === 'random';
  const reference = config.actor_infer.model_args.model_name_or_path ?? config.pretrain;
  let model: Qwen2Model | null = null;
  let tokenizer: Tokenizer;
  let source: string | null = null;
  let backend: string | null = null;
  // the servers generate: this process needs only the tokenizer they are checked against
  if (random || isHttpProxy(proxy)) {
    tokenizer = await loadTokenizer(reference);
  } else {
    const started = await startBackend(runBackend(config), { webgpuAdapter: config.webgpu_adapter, blas: config.blas });
    backend = describeBackend(started);
    const loaded = await loadModel(reference, { seed: config.seed, trainable: false, adapter: policyAdapter(config) });
    ({ model, tokenizer, source } = loaded);
    info(`policy: ${source} on ${backend}`);
  }
  const chat = new ChatFormat(tokenizer);
  const seeds = Array.from({ length: passes }, (_, k) => config.seed + k);
  const batches: Array<{ batch: RolloutBatch; source: string | null }> = [];
  try {
    for (const seed of seeds)
      batches.push(await onePass({ ...config, seed }, host, model, chat, episodes, (line) => info(passes > 1 ? `seed ${seed}: ${line}` : line)));
  } finally {
    model?.dispose();
  }
  const first = batches[0]!;
  source = first.source ?? source;
  const all = await withOptima(
    config,
    host,
    batches.flatMap((b) => b.batch.episodes),
    info,
  );
  const batch: RolloutBatch = { ...first.batch, episodes: all, samples: batches.flatMap((b) => b.batch.samples) };
  const tags = summarizeByTag(batch);
  const seats = seatResults(all, config.seed);
  const metrics: Record<string, number> = {};
  for (const key of Object.keys(first.batch.metrics)) metrics[key] = batches.reduce((sum, b) => sum + (b.batch.metrics[key] ?? 0), 0) / batches.length;
  return {
    table: formatSummaryTable(tags),
    batch,
    json: {
      exp_name: config.exp_name,
      seed: config.seed,
      seeds,
      suite: config.val_suite,
      policy: random ? 'random' : 'model',
      model: source,
      backend,
      episodes: all.length,
      seconds: batches.reduce((sum, b) => sum + (b.batch.metrics['time/step_val'] ?? 0), 0),
      generating_args: random ? null : { ...generatingArgs(config, 'val') },
      tags,
      held_out: heldOut(all, config.seed),
      ...(Object.keys(seats).length > 0 ? { seats } : {}),
      metrics,
    },
  };
}

/** One pass: the val env manager of `config` plays `episodes` episodes with a fresh policy. */
async function onePass(
  config: AgenticConfig,
  host: PluginHost,
  model: Qwen2Model | null,
  chat: ChatFormat,
  episodes: number,
  info: (line: string) => void,
): Promise<{ batch: RolloutBatch; source: string | null }> {
  const random = config.val_env_manager.llm_proxy.proxy_type === 'random';
  const manager = await EnvManager.build('val', config, host);
  let policy: Policy | null = null;
  let source: string | null = null;
  try {
    if (manager.servers) {
      await manager.servers.connect(chat.tokenizer);
      source = `${manager.servers.type} server${manager.servers.urls.length > 1 ? 's' : ''} ${manager.servers.urls.join(', ')}`;
      info(`policy: the model on ${source}`);
    }
    policy = makePolicy(config, 'val', model, chat, { servers: manager.servers });
    const what = config.val_suite === null ? 'episodes' : `episodes of ${config.val_suite}`;
    info(`playing ${episodes} ${what} on ${manager.slots.length} environments (${random ? 'random actions' : 'the model'})`);
    const batch = await manager.collect(episodes, policy, chat);
    const seconds = batch.metrics['time/step_val'] ?? 0;
    if (!random)
      info(
        `generated ${batch.metrics['val/rollout/generated_tokens']} tokens in ${seconds.toFixed(1)} s (${(batch.metrics['val/rollout/tokens_per_second'] ?? 0).toFixed(0)} tokens/s)`,
      );
    const unanswered = batch.episodes.filter((e) => e.endReason === 'infer_failure');
    if (unanswered.length > 0)
      info(`${unanswered.length} of ${batch.episodes.length} episodes got no response (infer_failure); the first: ${unanswered[0]!.failure}`);
    return { batch, source };
  } finally {
    await policy?.close();
    await manager.close();
  }
}
