/**
 * `agentic plugins [PATH...]`: list the registered environments, reward functions and tools.
 * `agentic plugins check ENV` (plugins_check.ts) checks an environment.
 */
import { looksLikeOverride } from '../config/overrides';
import { loadConfig } from '../config/load';
import { PluginHost } from '../host/plugin_host';
import { checkPlugins } from './start_up';
import { PLUGIN_KINDS } from '../host/registry';
import { configArgs, configRequest, OVERRIDES_HELP } from './args';
import { command, type Command } from './command';
import { out } from './log';
import checkCommand from './plugins_check';

const HEADINGS = { env: 'environments', reward: 'reward functions', tool: 'tools' } as const;

export default command(
  {
    meta: { name: 'plugins', description: 'List environments, reward functions and tools: built-in, from the config, and from paths given' },
    args: {
      ...configArgs,
      paths: { type: 'positional', required: false, valueHint: 'path...', description: 'Plugin files or folders to load and list (checks them)' },
    },
    async run({ args }) {
      const paths = args._.filter((a) => !looksLikeOverride(a));
      const overrides = args._.filter((a) => looksLikeOverride(a));
      const host = new PluginHost();
      await checkPlugins((await loadConfig(configRequest(args, overrides), host)).config, host);
      await host.loadAll(paths);
      const lines: string[] = [];
      for (const kind of PLUGIN_KINDS) {
        const entries = host.registry.list(kind);
        lines.push(`${HEADINGS[kind]} (${entries.length})`);
        const width = Math.max(0, ...entries.map((e) => e.definition.name.length));
        for (const { definition, source, builtin } of entries) {
          const from = builtin ? '' : `  [${source}]`;
          lines.push(`  ${definition.name.padEnd(width)}  ${definition.description}${from}`);
        }
        lines.push('');
      }
      out(lines.join('\n').trimEnd());
    },
  },
  `Plugins are found by name (the built-ins under plugins/), by path in a config (env_type: ./my_env.ts),
and in the folders listed under the config key 'plugins'. A plugin imports its helpers from 'agentic':

  import { defineEnv, z } from 'agentic';

Its other packages resolve from its own folder (the node_modules beside it, or above it), and nothing
is downloaded at run time: a package that is not installed stops the command with the npm install
that installs it.

'agentic plugins check ENV' plays random episodes of an environment (a name or a file) and checks
it against the Env contract; see 'agentic plugins check --help'.

${OVERRIDES_HELP}`,
  { check: checkCommand as Command },
);
