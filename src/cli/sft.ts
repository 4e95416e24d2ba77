/**
 * `agentic sft [config] [overrides]`: the warm start alone (src/train/warm_start/). Builds the
 * base model of a config into warm_start.output_dir, as `agentic train` would before RL when
 * warm_start.enabled, and rebuilds it even if one from the same settings exists.
 */
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log } from './log';

export default command(
  {
    meta: { name: 'sft', description: 'Build the warm-started base model of a config (supervised, on self-generated data)' },
    args: { ...configArgs, ...overridesArg },
    async run({ args }) {
      const { loadConfig } = await import('../config/load');
      const { checkOutputFolders } = await import('../config/output_folders');
      const { runBackend } = await import('../config/validate');
      const { startBackend } = await import('../engine/backend');
      const { PluginHost } = await import('../host/plugin_host');
      const { warmStart } = await import('../train/warm_start/train_base');
      const host = new PluginHost();
      const loaded = await loadConfig(configRequest(args, overridesFrom(args._)), host);
      const c = loaded.config;
      checkOutputFolders(c, ['warm_start.output_dir']);
      await startBackend(runBackend(c), { webgpuAdapter: c.webgpu_adapter, blas: c.blas });
      const { withPlugins } = await import('./start_up');
      const result = await withPlugins(c, host, (run) => warmStart(c, run, { info: (line) => log.info(line) }, { force: true }));
      log.success(`base model saved to ${result.folder} (${result.rows} rows, final loss ${result.losses.at(-1)?.toFixed(4)})`);
      return 0;
    },
  },
  `${OVERRIDES_HELP}

The data are episodes of train_env_manager's environments played through the prompts RL uses:
with each env's random valid actions (the answer format, never a solution), and where the config
asks for them (warm_start.worked_examples; the default asks for 1000) with the env's worked
solution of training episodes. warm_start.* sets the episodes, worked examples, epochs, batch
size, learning rate and output folder; pretrain
(null: the tiny preset from seeded random weights) is the model it starts from.

EXAMPLES
  agentic sft
  agentic sft --config-name sokoban warm_start.episodes=2048`,
);
