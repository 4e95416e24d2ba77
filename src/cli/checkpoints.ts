/**
 * How `agentic resume` and `agentic eval --checkpoint` find a checkpoint and its config.
 *
 * A checkpoint folder named on the command line brings its own config (checkpoint-N/config.yaml),
 * so config flags are refused with it; overrides apply on top. Without a folder (`auto`), the
 * config flags and overrides name the run exactly as `agentic train` would resolve it, and its
 * checkpoint_config.output_dir is searched for the newest complete checkpoint.
 */
import { resolve } from 'node:path';
import { newestCheckpoint, openCheckpoint, savedConfigFile, type Checkpoint } from '../checkpoint/load';
import { loadConfig, type LoadedConfig } from '../config/load';
import { CheckpointError, UsageError } from '../errors';
import type { PluginHost } from '../plugins/host';
import { displayPath } from '../util/paths';
import { configRequest } from './args';
import { log } from './log';

const CONFIG_FLAGS = ['config', 'config-path', 'config-name'] as const;

/** `given`: a checkpoint folder, or 'auto'. */
export async function locateCheckpoint(given: string, args: Record<string, unknown>, overrides: readonly string[], host: PluginHost): Promise<Checkpoint> {
  if (given !== 'auto') {
    const flag = CONFIG_FLAGS.find((name) => args[name] !== undefined);
    if (flag)
      throw new UsageError(`--${flag}: a checkpoint folder brings its own config; give overrides only (or use auto to find the checkpoint through a config)`);
    return openCheckpoint(given);
  }
  const { config } = await loadConfig(configRequest(args, overrides), host);
  const root = resolve(config.checkpoint_config.output_dir);
  const found = newestCheckpoint(root, (line) => log.warn(line));
  if (!found) throw new CheckpointError(`no complete checkpoint in ${displayPath(root)} (checkpoint_config.output_dir of exp_name ${config.exp_name})`);
  return found;
}

/** The checkpoint's saved config with `overrides` applied. */
export function checkpointConfig(checkpoint: Checkpoint, overrides: readonly string[], host: PluginHost): Promise<LoadedConfig> {
  return loadConfig({ configFile: savedConfigFile(checkpoint), overrides }, host);
}
