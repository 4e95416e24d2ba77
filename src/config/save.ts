/**
 * Each run records how it was configured, next to its outputs (Hydra's .hydra/ folder):
 *
 *   <output_dir>/.agentic/config.yaml     the resolved config (itself a valid config file)
 *   <output_dir>/.agentic/overrides.yaml  the command-line overrides, in order
 *   <output_dir>/.agentic/sources.yaml    the config files that were composed
 *
 * Files are written to a temporary name and renamed, so a crash never leaves half a file. Secrets
 * (a Redis password, API keys) are masked in them (secrets.ts).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LoadedConfig } from './load';
import { maskOverride, maskSecrets } from './secrets';
import { stringifyYaml } from './yaml';

export const RUN_CONFIG_DIR = '.agentic';

function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** Writes the run's config record and returns its folder. */
export function writeRunConfig(loaded: LoadedConfig, cwd = process.cwd()): string {
  const dir = join(resolve(cwd, loaded.config.output_dir), RUN_CONFIG_DIR);
  mkdirSync(dir, { recursive: true });
  writeAtomically(join(dir, 'overrides.yaml'), stringifyYaml(loaded.overrides.map(maskOverride)));
  writeAtomically(join(dir, 'sources.yaml'), stringifyYaml(loaded.files));
  writeAtomically(join(dir, 'config.yaml'), stringifyYaml(maskSecrets(loaded.config)));
  return dir;
}
