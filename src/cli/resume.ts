/**
 * `agentic resume [CHECKPOINT] [overrides]`: continue a run from a checkpoint with the config it
 * was saved with (checkpoint-N/config.yaml), overrides on top (e.g. max_steps=2000). Without a
 * CHECKPOINT it takes the newest complete checkpoint of the run that the config flags and
 * overrides name, as `agentic train` would resolve them (docs/training.md).
 */
import { looksLikeOverride } from '../config/overrides';
import { configArgs, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log } from './log';
import { doneLine } from './train';

export default command(
  {
    meta: { name: 'resume', description: 'Continue a run from a checkpoint, with its saved config' },
    args: {
      ...configArgs,
      checkpoint: {
        type: 'positional',
        required: false,
        valueHint: 'path',
        description: 'Checkpoint folder; without one, the newest intact checkpoint of the run the config flags and overrides name',
      },
      ...overridesArg,
    },
    async run({ args }) {
      const [first, ...rest] = args._;
      const folder = first !== undefined && !looksLikeOverride(first) ? first : undefined;
      const overrides = overridesFrom(folder === undefined ? args._ : rest);
      const { PluginHost } = await import('../host/plugin_host');
      const { checkpointConfig, locateCheckpoint } = await import('./checkpoints');
      const { runTraining } = await import('./training_run');
      const host = new PluginHost();
      const checkpoint = await locateCheckpoint(folder ?? 'auto', args, overrides, host);
      const loaded = await checkpointConfig(checkpoint, overrides, host);
      const resuming = { ...loaded, config: { ...loaded.config, resume_from_checkpoint: checkpoint.path } };
      const { withPlugins } = await import('./start_up');
      const result = await withPlugins(resuming.config, host, (run) =>
        runTraining(resuming, run, { info: (line) => log.info(line), warn: (line) => log.warn(line) }),
      );
      log.success(doneLine(result));
      return 0;
    },
  },
  `${OVERRIDES_HELP}

EXAMPLES
  agentic resume                                          # the newest checkpoint of ./output/agentic
  agentic resume --config-name frozen_lake max_steps=400  # the run configs/frozen_lake.yaml names
  agentic resume output/agentic/checkpoints/checkpoint-50 max_steps=2000`,
);
