/** Helpers the tests of GEM's games share: building an env from its plugin, and a step's result. */
import type { z } from 'zod';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, EnvPlugin, ResetResult, StepResult } from '../../../src/sdk/types';

export function makeEnv<S extends z.ZodType>(plugin: EnvPlugin<S>, config: Record<string, unknown> = {}): Env {
  return new plugin.env(plugin.config.parse(config), new PluginHost().envContext());
}

export const resetOf = (env: Env, seed: number) => env.reset(seed) as ResetResult;
export const stepOf = (env: Env, response: string) => env.step(response) as StepResult;

/** The GEM id resolves to the plugin through the host's foreign names. */
export async function resolvedName(id: string): Promise<string> {
  return (await new PluginHost().resolveEnv(id)).name;
}
