/**
 * What Hydra's `${hydra:key}` reads, for one run (not a multirun sweep):
 *
 *   runtime.cwd         the folder the command was started in
 *   runtime.output_dir  hydra.run.dir made absolute (Hydra's default outputs/<date>/<time>); only
 *                       named: agentic writes to output_dir and logging_dir, not there
 *   job.name            the config's hydra.job.name, else the config's name (Hydra names the job
 *                       after the Python script; agentic has none, and the config names the job)
 *   job.config_name     the config's name
 *   anything else       the config's own hydra.<key> (hydra.run.dir, ...), when it has one
 *
 * job.num and job.id exist only in a multirun sweep, which agentic does not run: an error, as in
 * Hydra, where they are missing in a single run.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../errors';
import type { Tree } from './tree';

export interface HydraJob {
  /** The primary config's name (--config-name or the file's name without .yaml); null: the built-in config. */
  configName?: string | null;
  cwd: string;
}

const DEFAULT_RUN_DIR = 'outputs/${now:%Y-%m-%d}/${now:%H-%M-%S}';
const COMPUTED = ['runtime.cwd', 'runtime.output_dir', 'job.name', 'job.config_name'];

/**
 * The value of `${hydra:key}`; `own(key)` reads the config's hydra.<key> (resolved), undefined
 * when it has none; `expand` resolves an interpolation string such as Hydra's default run dir.
 */
export function hydraLookup(key: string, job: HydraJob, own: (key: string) => Tree | undefined, expand: (text: string) => Tree, where: string): Tree {
  const configName = job.configName ?? 'agentic';
  switch (key) {
    case 'runtime.cwd':
      return job.cwd;
    case 'runtime.output_dir':
      return resolve(job.cwd, String(own('run.dir') ?? expand(DEFAULT_RUN_DIR)));
    case 'job.name':
      return own('job.name') ?? configName;
    case 'job.config_name':
      return configName;
    case 'job.num':
    case 'job.id':
      throw new ConfigError(`${where}: \${hydra:${key}} is set only in a multirun sweep (hydra -m), which agentic does not run`);
  }
  const value = own(key);
  if (value !== undefined) return value;
  throw new ConfigError(`${where}: \${hydra:${key}}: not a Hydra value agentic knows (${COMPUTED.join(', ')}, or a key under the config's hydra:)`);
}
