/**
 * The settings a resumed run changes from its checkpoint's config, so the log says plainly when a
 * continuation is not the run that was interrupted (a longer max_steps moves the LR schedule, ...).
 */
import { readFileSync } from 'node:fs';
import type { AgenticConfig } from '../config/schema';
import { maskSecrets } from '../config/secrets';
import { parseYaml } from '../config/yaml';

/** Keys that name where the run starts, not how it trains. */
const NOT_A_CHANGE = new Set(['resume_from_checkpoint']);

function flatten(value: unknown, prefix: string, into: Map<string, string>): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) flatten(child, prefix ? `${prefix}.${key}` : key, into);
  } else {
    into.set(prefix, JSON.stringify(value));
  }
}

/** `key (old -> new)` for each setting that differs, in key order. */
export function changedSettings(savedConfigFile: string, current: AgenticConfig): string[] {
  const before = new Map<string, string>();
  const after = new Map<string, string>();
  flatten(parseYaml(readFileSync(savedConfigFile, 'utf8'), savedConfigFile), '', before);
  flatten(maskSecrets(current), '', after); // the saved config has its secrets masked, and the log must not show them
  const keys = [...new Set([...before.keys(), ...after.keys()])].filter((k) => !NOT_A_CHANGE.has(k)).sort();
  return keys.filter((k) => before.get(k) !== after.get(k)).map((k) => `${k} (${before.get(k) ?? 'unset'} -> ${after.get(k) ?? 'unset'})`);
}
