/** `agentic config`: print the fully resolved config as YAML (Hydra's --cfg job), or list the configs there are. */
import { resolve } from 'node:path';
import { DEFAULT_CONFIG_PATH, loadConfig } from '../config/load';
import { rollKeysWarning } from '../config/roll';
import { availableConfigs } from '../config/search_path';
import { maskSecrets } from '../config/secrets';
import { stringifyYaml } from '../config/yaml';
import { UsageError } from '../errors';
import { PluginHost } from '../host/plugin_host';
import { checkPlugins } from './start_up';
import { displayPath } from '../util/paths';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log, out } from './log';

export default command(
  {
    meta: { name: 'config', description: 'Print the resolved config as YAML (all layers, overrides and interpolations applied)' },
    args: {
      ...configArgs,
      list: { type: 'boolean', description: 'List the configs --config-name can name, one a line with its summary' },
      ...overridesArg,
    },
    async run({ args }) {
      const request = configRequest(args, overridesFrom(args._));
      if (args.list) {
        if (request.configFile || request.configName || request.overrides?.length) throw new UsageError('--list takes only --config-path');
        out(listing(request.configPath ?? DEFAULT_CONFIG_PATH));
        return;
      }
      const host = new PluginHost();
      const loaded = await loadConfig(request, host);
      await checkPlugins(loaded.config, host);
      const unread = rollKeysWarning(loaded);
      if (unread) log.warn(unread);
      for (const line of loaded.warnings ?? []) log.warn(line);
      out(stringifyYaml(maskSecrets(loaded.config)));
    },
  },
  `${OVERRIDES_HELP}

--config-name looks in the config folder (./configs or --config-path), then among the configs built
into agentic; a file in the folder wins over the built-in one of the same name, as on Hydra's search
path. --list marks the folder's configs with their file (and 'over the built-in' where one differs
from the built-in config of its name).

EXAMPLES
  agentic config exp_name=foo seed=123
  agentic config --list
  agentic config --config-name bandit_grpo train_env_manager.group_size=16
  agentic config -c my.yaml > resolved.yaml   # the output is itself a valid config`,
);

/** One line a config: name, summary, and where a config on disk comes from. */
function listing(configPath: string): string {
  const configs = availableConfigs(resolve(configPath));
  const width = Math.max(...configs.map((c) => c.name.length));
  return configs
    .map(({ name, summary, file, hidesBuiltin }) => {
      const from = file ? `  [${displayPath(file)}${hidesBuiltin ? ', over the built-in' : ''}]` : '';
      return `${name.padEnd(width)}  ${summary}${from}`.trimEnd();
    })
    .join('\n');
}
