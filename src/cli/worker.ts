/**
 * `agentic worker [config] distributed.redis_url=redis://HOST:6379 [overrides]`: plays the
 * distributed rollouts of a training run (docs/distributed.md). Start any number, on any machines,
 * with the trainer's config: each takes group episodes from the run's BullMQ queues, plays them with
 * the config's environments and policy, and returns the episodes. SIGTERM finishes the jobs in hand
 * and stops; a killed worker's jobs go back to the queue when their locks lapse.
 */
import { UsageError } from '../errors';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log } from './log';

export default command(
  {
    meta: { name: 'worker', description: 'Play the distributed rollouts of a training run: BullMQ jobs from Redis' },
    args: {
      ...configArgs,
      name: { type: 'string', valueHint: 'name', description: 'BullMQ worker name recorded on the jobs it plays (default <hostname>-<pid>)' },
      ...overridesArg,
    },
    async run({ args }) {
      if (args.name === '') throw new UsageError("option '--name' needs a value");
      const { loadConfig } = await import('../config/load');
      const { PluginHost } = await import('../host/plugin_host');
      const { runWorker } = await import('../worker/worker');
      const host = new PluginHost();
      const { withPlugins } = await import('./start_up');
      const { config } = await loadConfig(configRequest(args, overridesFrom(args._)), host);
      const stop = new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
      const summary = await withPlugins(config, host, (run) =>
        runWorker(config, run, {
          name: args.name,
          info: (line) => log.info(line),
          warn: (line) => log.warn(line),
          stop,
        }),
      );
      log.success(`worker ${summary.name} stopped; ${summary.completed} job(s) played`);
      return 0;
    },
  },
  `${OVERRIDES_HELP}

EXAMPLES
  agentic worker --config-name frozen_lake distributed.redis_url=redis://10.0.0.5:6379
  agentic worker -c exp.yaml distributed.redis_url=redis://127.0.0.1:6379 train_env_manager.max_env_num_per_worker=32 --name gpu-box-1`,
);
