/** Constructors for plugin definitions: they add the kind tag and fill optional parts. */
import { z } from 'zod';
import type { EnvClass, EnvContext, EnvPlugin, RewardInput, RewardOutput, RewardPlugin, ToolPlugin } from './types';

export function defineEnv<S extends z.ZodType = z.ZodObject<{}>>(definition: {
  name: string;
  description: string;
  config?: S;
  env: EnvClass<z.output<S>>;
  epochRows?: (config: z.output<S>, context: EnvContext) => number;
}): EnvPlugin<S> {
  return Object.freeze({ kind: 'env', ...definition, config: definition.config ?? (z.strictObject({}) as unknown as S) });
}

/**
 * A reward, with settings when it declares a `config` schema: `score(input, settings)` receives
 * them validated. Called without settings (a test, a script), it gets the schema's defaults.
 */
export function defineReward<S extends z.ZodType = z.ZodObject<{}>>(
  definition: Omit<RewardPlugin<S>, 'kind' | 'score'> & {
    score(input: RewardInput, settings: z.output<S>): RewardOutput | Promise<RewardOutput>;
  },
): RewardPlugin<S> {
  const { config } = definition;
  if (!config) return Object.freeze({ kind: 'reward', ...definition });
  return Object.freeze({
    kind: 'reward',
    ...definition,
    score: (input: RewardInput, settings?: z.output<S>) => definition.score(input, settings ?? config.parse({})),
  });
}

export function defineTool<P extends z.ZodObject>(definition: Omit<ToolPlugin<P>, 'kind'>): ToolPlugin<P> {
  return Object.freeze({ kind: 'tool', ...definition });
}
