/**
 * Where an env's config names rewards: the values its schema declares with the SDK's
 * RewardReference (tool_use's `reward`, say), found by walking the config beside its schema.
 * Validation checks each one's settings against its reward's schema, so a bad setting is a config
 * error at its full path (custom_envs.qa.env_config.reward.max_tokens).
 */
import type { z } from 'zod';
import { RewardReference } from '../sdk/reward_reference';
import { childSchema, unwrap } from './introspect';
import { isObject, type PathSegment } from './tree';

export interface FoundReference {
  /** Where it stands in the env's config. */
  path: PathSegment[];
  reference: RewardReference;
}

/** Whether `schema` is RewardReference, perhaps with a default, a description or the like around it. */
function isRewardReferenceSchema(schema: z.core.$ZodType): boolean {
  // .describe() and .meta() clone a schema and remember the original as its parent
  for (let s: z.core.$ZodType | undefined = unwrap(schema); s; s = s._zod.parent) if (s === RewardReference) return true;
  return false;
}

export function rewardReferencesIn(schema: z.core.$ZodType, value: unknown, path: PathSegment[] = []): FoundReference[] {
  if (isRewardReferenceSchema(schema)) {
    const parsed = RewardReference.safeParse(value);
    return parsed.success ? [{ path, reference: parsed.data }] : [];
  }
  const entries: Array<[PathSegment, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : isObject(value) ? Object.entries(value) : [];
  return entries.flatMap(([key, child]) => {
    const inner = childSchema(schema, key);
    return inner ? rewardReferencesIn(inner, child, [...path, key]) : [];
  });
}
