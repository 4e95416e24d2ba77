/** Constructors for plugin definitions: they add the kind tag and fill optional parts. */
import { z } from 'zod';
import type { EnvClass, EnvContext, EnvPlugin, RewardContext, RewardInput, RewardOutput, RewardPlugin, SeatedEnv, SeatSpec, ToolPlugin } from './types';

/** A reward called without the run's context (a test, a script) contains its Python with bwrap. */
const DEFAULT_REWARD_CONTEXT: RewardContext = Object.freeze({ pythonSandbox: 'bwrap' });

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
 * An env with seats (types.ts, SeatedEnv): its class plays every seat's move, and `seats` names the
 * seats and the env's own opponents. The registry checks the spec when the plugin is loaded.
 */
export function defineSeatedEnv<S extends z.ZodType = z.ZodObject<{}>>(definition: {
  name: string;
  description: string;
  config?: S;
  seats: SeatSpec;
  env: new (config: z.output<S>, context: EnvContext) => SeatedEnv;
}): EnvPlugin<S> {
  return Object.freeze({ kind: 'env', ...definition, config: definition.config ?? (z.strictObject({}) as unknown as S) });
}

/**
 * A reward, with settings when it declares a `config` schema: `score(input, settings, context)`
 * receives them validated, and the run's RewardContext. Called without settings (a test, a
 * script), it gets the schema's defaults; without a context, python_sandbox bwrap.
 */
export function defineReward<S extends z.ZodType = z.ZodObject<{}>>(
  definition: Omit<RewardPlugin<S>, 'kind' | 'score'> & {
    score(input: RewardInput, settings: z.output<S>, context: RewardContext): RewardOutput | Promise<RewardOutput>;
  },
): RewardPlugin<S> {
  const { config } = definition;
  // a definition without score() stays without it, so the registry's check names what is missing
  if (typeof definition.score !== 'function') return Object.freeze({ kind: 'reward', ...definition });
  return Object.freeze({
    kind: 'reward',
    ...definition,
    score: (input: RewardInput, settings?: z.output<S>, context?: RewardContext) =>
      definition.score(input, settings ?? (config ? config.parse({}) : (undefined as z.output<S>)), context ?? DEFAULT_REWARD_CONTEXT),
  });
}

export function defineTool<P extends z.ZodObject>(definition: Omit<ToolPlugin<P>, 'kind'>): ToolPlugin<P> {
  return Object.freeze({ kind: 'tool', ...definition });
}
