/**
 * `agentic train [config] [overrides]`: the RL training loop (docs/training.md). With no config
 * it runs configs/agentic.yaml; `resume_from_checkpoint=auto` continues the run's newest checkpoint.
 */
import type { RunResult } from './training_run';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log } from './log';

/** The last line of a run (`agentic train`, `agentic resume`). */
export function doneLine(result: RunResult): string {
  const skipped = result.skippedUpdates ? `; ${result.skippedUpdates} non-finite update(s) skipped` : '';
  return `${result.steps} step${result.steps === 1 ? '' : 's'}${skipped}; policy saved to ${result.modelDir}${result.metricsFile ? `; metrics in ${result.metricsFile}` : ''}${result.curvesFile ? `; curves in ${result.curvesFile}` : ''}${result.tensorboardDir ? `; tensorboard --logdir ${result.tensorboardDir}` : ''}`;
}

export default command(
  {
    meta: { name: 'train', description: 'Train a policy with RL' },
    args: { ...configArgs, ...overridesArg },
    async run({ args }) {
      const { loadConfig } = await import('../config/load');
      const { PluginHost } = await import('../host/plugin_host');
      const { runTraining } = await import('./training_run');
      const { rollKeysWarning } = await import('../config/roll');
      const host = new PluginHost();
      const { withPlugins } = await import('./start_up');
      const loaded = await loadConfig(configRequest(args, overridesFrom(args._)), host);
      const result = await withPlugins(loaded.config, host, (run) => {
        const unread = rollKeysWarning(loaded);
        if (unread) log.warn(unread);
        for (const line of loaded.warnings ?? []) log.warn(line);
        return runTraining(loaded, run, { info: (line) => log.info(line), warn: (line) => log.warn(line) });
      });
      log.success(doneLine(result));
      return 0;
    },
  },
  `${OVERRIDES_HELP}

EXAMPLES
  agentic train
  agentic train --config-name frozen_lake max_steps=50 seed=1
  agentic train --config-name frozen_lake_gigpo actor_train.training_args.learning_rate=1e-4
  agentic train --config-name frozen_lake resume_from_checkpoint=auto   # continue if it was interrupted`,
);
