/**
 * Commands whose work arrives with later issues. They already parse and validate their config,
 * so a bad config fails now, and then say plainly what is missing (exit 1).
 */
import type { ArgsDef } from 'citty';
import { loadConfig } from '../config/load';
import { PluginHost } from '../plugins/host';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log } from './log';

export function notImplemented(name: string, what: string, arrives: string): number {
  log.warn(`agentic ${name}: ${what} is not implemented yet; it arrives with ${arrives}.`);
  return 1;
}

/** A command that validates its config and stops there. */
export function validatingCommand(name: string, description: string, what: string, arrives: string, extraArgs: ArgsDef = {}) {
  return command(
    {
      meta: { name, description: `${description} (not implemented yet: validates the config only)` },
      args: { ...configArgs, ...extraArgs, ...overridesArg },
      async run({ args }) {
        const { config, files } = await loadConfig(configRequest(args, overridesFrom(args._)), new PluginHost());
        log.info(`config is valid: ${files.join(', ')}${args._.length ? ` + ${args._.length} override(s)` : ''} (exp_name=${config.exp_name})`);
        return notImplemented(name, what, arrives);
      },
    },
    OVERRIDES_HELP,
  );
}
