/**
 * Opens the run's rollout source (src/train/rollout_source.ts): in this thread (with or without
 * inference servers), the rollout thread playing ahead, or `agentic worker` processes through
 * Redis. The run passes `openRollouts` to the trainer, which calls it once its roles are built.
 */
import { resolve } from 'node:path';
import type { AgenticConfig } from '../config/schema';
import type { InferenceServers } from '../rollout/servers';
import { displayPath } from '../util/paths';
import type { PluginHost } from '../host/plugin_host';
import type { ChatFormat } from '../rollout/chat';
import { EnvManager, managerOf } from '../rollout/env_manager';
import type { Roles } from '../train/roles';
import { AsyncRollouts } from './async';
import { DistributedPlayer } from './distributed/player';
import { DistributedRollouts, distributedSource } from './distributed/rollouts';
import { checkRedis } from '../remote/redis';
import { LocalRollouts } from './local';
import { WeightSync } from '../remote/weight_sync';
import type { RolloutSource } from '../train/rollout_source';
import { RolloutThread } from './thread/trainer_side';

/**
 * The inference servers of the managers that have them, checked against this run's tokenizer,
 * and the weight sync that keeps them on actor_infer's weights; null when neither manager has any.
 */
async function serverSync(config: AgenticConfig, roles: Roles, train: EnvManager, val: EnvManager | null): Promise<WeightSync | null> {
  const pools = [train.servers, val?.servers ?? null].filter((p): p is InferenceServers => p !== null);
  if (pools.length === 0) return null;
  for (const pool of pools) await pool.connect(roles.tokenizer);
  const dir = resolve(config.model_update_dir);
  const f = config.actor_infer.model_update_frequency;
  const loading = `loading actor_infer's weights from ${displayPath(dir)} ${f === 1 ? 'every step' : `every ${f} steps`}`;
  const where = (pool: InferenceServers) => `inference servers ${pool.urls.join(', ')} (${pool.type})`;
  if (train.servers) {
    const recompute = config.enable_old_logprobs_recompute
      ? ''
      : ' (enable_old_logprobs_recompute=false does not hold here: the servers sample with another engine)';
    roles.sources.actor_infer = `${where(train.servers)}, ${loading}; old log-probs recomputed by actor_train${recompute}`;
  }
  if (val?.servers && (!train.servers || where(val.servers) !== where(train.servers))) {
    roles.sources.validation = `${where(val.servers)}${train.servers ? '' : `, ${loading}`}`;
  }
  if (roles.infer.lora?.modulesToSave?.length) {
    const modules = roles.infer.lora.modulesToSave.join(', ');
    roles.sources['weight sync'] =
      `LoRA with ${modules} trained whole: each version's weights merged (vLLM refuses adapters with modules_to_save; SGLang documents no support for them)`;
  } else if (roles.infer.lora) {
    const endpoints = [...new Set(pools.map((p) => (p.type === 'sglang' ? '/load_lora_adapter' : '/v1/load_lora_adapter')))].join(', ');
    roles.sources['weight sync'] = `LoRA: the base once (SGLang's servers), then each version's adapter alone (${endpoints})`;
  }
  return new WeightSync(dir, pools, config.actor_infer.model_args.dtype, roles.base);
}

/**
 * Where a distributed run's weights go: to the inference servers (as in this thread), or as folders
 * for workers with their own copy of the actor, which may still read the versions of every step
 * played ahead; random policies need none.
 */
async function distributedSync(config: AgenticConfig, roles: Roles, train: EnvManager, val: EnvManager | null): Promise<WeightSync | null> {
  const servers = await serverSync(config, roles, train, val);
  if (servers) return servers;
  const playsModel = [train, val].some((m) => m !== null && managerOf(config, m.mode).llm_proxy.proxy_type === 'policy');
  return playsModel
    ? new WeightSync(resolve(config.model_update_dir), [], config.actor_infer.model_args.dtype, roles.base, config.async_generation_ratio + 2)
    : null;
}

/** The train/rollout_source.ts `OpenRollouts` of every run; `warn` hears what a source says mid-run (distributed: queues no worker serves). */
export async function openRollouts(
  config: AgenticConfig,
  host: PluginHost,
  roles: Roles,
  chat: ChatFormat,
  warn: (line: string) => void = () => {},
): Promise<RolloutSource> {
  let train: EnvManager | null = null;
  let val: EnvManager | null = null;
  let thread: RolloutThread | null = null;
  try {
    // this thread keeps a train manager in every case: asynchronous runs keep its episode counters
    train = await EnvManager.build('train', config, host);
    if (config.distributed.redis_url !== null) {
      await checkRedis(config.distributed.redis_url);
      val = config.eval_steps > 0 && config.val_env_manager.tags.length > 0 ? await EnvManager.build('val', config, host) : null;
      const sync = await distributedSync(config, roles, train, val);
      roles.sources.actor_infer = distributedSource(config);
      const player = DistributedPlayer.open(config, train, val, sync, roles.tokenizer, warn);
      return new DistributedRollouts(config, player, roles, train);
    }
    if (config.async_generation_ratio > 0) {
      thread = await RolloutThread.start(config, { cwd: host.cwd, threads: 1 });
      const ahead = `${config.async_generation_ratio} step${config.async_generation_ratio > 1 ? 's' : ''}`;
      roles.sources.actor_infer = `a worker thread with its own engine, playing ${ahead} ahead of actor_train (old log-probs recomputed by actor_train)`;
      return new AsyncRollouts(config, thread, roles, train);
    }
    val = config.eval_steps > 0 && config.val_env_manager.tags.length > 0 ? await EnvManager.build('val', config, host) : null;
    return new LocalRollouts(config, roles, chat, train, val, await serverSync(config, roles, train, val));
  } catch (error) {
    await thread?.close();
    await train?.close();
    await val?.close();
    throw error;
  }
}
