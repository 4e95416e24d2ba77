/** `agentic resume [CHECKPOINT] [overrides]`: continue a run from a checkpoint with its saved config. */
import { existsSync } from 'node:fs';
import { parseOverride } from '../config/overrides';
import { ConfigError } from '../errors';
import { debugArg, OVERRIDES_HELP, overridesFrom } from './args';
import { command } from './command';
import { notImplemented } from './pending';

export default command(
  {
    meta: { name: 'resume', description: 'Continue a run from a checkpoint (not implemented yet: checks its arguments only)' },
    args: {
      ...debugArg,
      checkpoint: { type: 'positional', required: false, valueHint: 'path', description: 'Checkpoint folder (default: the newest of the run)' },
      overrides: { type: 'positional', required: false, valueHint: 'key=value...', description: 'Overrides of the saved config, e.g. max_steps=2000' },
    },
    run({ args }) {
      const [first, ...rest] = args._;
      const isPath = first !== undefined && !first.includes('=') && !first.startsWith('~');
      const checkpoint = isPath ? first : undefined;
      if (checkpoint !== undefined && !existsSync(checkpoint)) throw new ConfigError(`${checkpoint}: no such checkpoint folder`);
      for (const text of overridesFrom(isPath ? rest : args._)) parseOverride(text);
      return notImplemented('resume', 'resuming from a checkpoint', 'checkpoints (issue #8)');
    },
  },
  OVERRIDES_HELP,
);
