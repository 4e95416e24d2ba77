/**
 * An `agentic worker`'s spare environments by env id: concurrent jobs of one group each get their
 * own instances, and a job's environments go back to the pool when it is done.
 */
import type { AgenticConfig } from '../config/schema';
import type { PluginHost } from '../host/plugin_host';
import { guardedEnv } from '../rollout/env_manager';
import type { GuardedEnv } from '../sdk/guarded_env';

export class EnvPool {
  private readonly free = new Map<number, GuardedEnv[]>();
  private readonly made: GuardedEnv[] = [];

  constructor(
    private readonly config: AgenticConfig,
    private readonly host: PluginHost,
  ) {}

  async take(tag: string, envId: number): Promise<GuardedEnv> {
    const spare = this.free.get(envId)?.pop();
    if (spare) return spare;
    const custom = this.config.custom_envs[tag]!;
    const env = guardedEnv(await this.host.resolveEnv(custom.env_type), custom, this.host.envContext(), tag, envId);
    this.made.push(env);
    return env;
  }

  give(envId: number, env: GuardedEnv): void {
    const list = this.free.get(envId) ?? [];
    list.push(env);
    this.free.set(envId, list);
  }

  async close(): Promise<void> {
    await Promise.all(this.made.map((env) => env.close()));
  }
}
