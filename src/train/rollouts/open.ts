/** Opens the run's rollout source (./source.ts): in this thread, or a worker playing ahead. */
import type { AgenticConfig } from '../../config/schema';
import type { PluginHost } from '../../plugins/host';
import type { ChatFormat } from '../../rollout/chat';
import { EnvManager } from '../../rollout/env_manager';
import type { Roles } from '../roles';
import { AsyncRollouts } from './async';
import { LocalRollouts } from './local';
import { RolloutWorker } from './remote';
import type { RolloutSource } from './source';

export async function openRollouts(config: AgenticConfig, host: PluginHost, roles: Roles, chat: ChatFormat): Promise<RolloutSource> {
  let train: EnvManager | null = null;
  let worker: RolloutWorker | null = null;
  try {
    // this thread keeps a train manager in both cases: asynchronous runs keep its episode counters
    train = await EnvManager.build('train', config, host);
    if (config.async_generation_ratio > 0) {
      worker = await RolloutWorker.start(config, { cwd: host.cwd, threads: 1 });
      const ahead = `${config.async_generation_ratio} step${config.async_generation_ratio > 1 ? 's' : ''}`;
      roles.sources.actor_infer = `a worker thread with its own engine, playing ${ahead} ahead of actor_train (old log-probs recomputed by actor_train)`;
      return new AsyncRollouts(config, worker, roles, train);
    }
    const val = config.eval_steps > 0 && config.val_env_manager.tags.length > 0 ? await EnvManager.build('val', config, host) : null;
    return new LocalRollouts(config, roles, chat, train, val);
  } catch (error) {
    await worker?.close();
    await train?.close();
    throw error;
  }
}
