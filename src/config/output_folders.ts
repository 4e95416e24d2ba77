/** The folders a command will write, checked by their config keys before it writes anything. */
import { join } from 'node:path';
import { ConfigError } from '../errors';
import { unwritableFolderReason } from '../util/writable';
import type { AgenticConfig } from './schema';

const OUTPUT_FOLDERS = {
  output_dir: (c: AgenticConfig) => c.output_dir,
  logging_dir: (c: AgenticConfig) => c.logging_dir,
  model_update_dir: (c: AgenticConfig) => c.model_update_dir,
  render_save_dir: (c: AgenticConfig) => c.render_save_dir,
  'checkpoint_config.output_dir': (c: AgenticConfig) => c.checkpoint_config.output_dir,
  'warm_start.output_dir': (c: AgenticConfig) => c.warm_start.output_dir,
  'tracker_kwargs.log_dir': (c: AgenticConfig) => tensorboardFolder(c),
} as const;

/** Where the tensorboard tracker writes its event files: tracker_kwargs.log_dir, as ROLL, or <logging_dir>/tensorboard. */
export function tensorboardFolder(c: Pick<AgenticConfig, 'logging_dir' | 'tracker_kwargs'>): string {
  return c.tracker_kwargs.log_dir ?? join(c.logging_dir, 'tensorboard');
}

export type OutputFolderKey = keyof typeof OUTPUT_FOLDERS;

/** A ConfigError naming the first key whose folder cannot be created or written. */
export function checkOutputFolders(config: AgenticConfig, keys: readonly OutputFolderKey[]): void {
  for (const key of keys) {
    const path = OUTPUT_FOLDERS[key](config);
    if (path === null) continue;
    const reason = unwritableFolderReason(path);
    if (reason) throw new ConfigError(`${key}: cannot write to ${path}: ${reason}`);
  }
}
