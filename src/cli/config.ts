/** `agentic config`: print the fully resolved config as YAML (Hydra's --cfg job). */
import { loadConfig } from '../config/load';
import { rollKeysWarning } from '../config/roll';
import { maskSecrets } from '../config/secrets';
import { stringifyYaml } from '../config/yaml';
import { PluginHost } from '../plugins/host';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log, out } from './log';

export default command(
  {
    meta: { name: 'config', description: 'Print the resolved config as YAML (all layers, overrides and interpolations applied)' },
    args: { ...configArgs, ...overridesArg },
    async run({ args }) {
      const host = new PluginHost();
      const loaded = await loadConfig(configRequest(args, overridesFrom(args._)), host);
      const unread = rollKeysWarning(loaded);
      if (unread) log.warn(unread);
      out(stringifyYaml(maskSecrets(loaded.config)));
    },
  },
  `${OVERRIDES_HELP}

EXAMPLES
  agentic config exp_name=foo seed=123
  agentic config --config-name bandit_grpo train_env_manager.group_size=16
  agentic config -c my.yaml > resolved.yaml   # the output is itself a valid config`,
);
