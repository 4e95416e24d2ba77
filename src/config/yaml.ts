/**
 * YAML in and out. Parsing uses the YAML 1.2 core schema (so `1e-3` is a number and `2024-01-01`
 * stays a string), rejects duplicate keys, and reports errors as `file:line:col: reason`.
 */
import { parseDocument, stringify } from 'yaml';
import { ConfigError } from '../errors';

export function parseYaml(text: string, file: string): unknown {
  const doc = parseDocument(text, { schema: 'core', merge: true, uniqueKeys: true, prettyErrors: false });
  const problem = doc.errors[0];
  if (problem) {
    const [line, col] = lineCol(text, problem.pos[0]);
    const reason = problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError(`${file}:${line}:${col}: ${reason}`);
  }
  return doc.toJS({ maxAliasCount: 1000 }) ?? {};
}

function lineCol(text: string, offset: number): [number, number] {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  return [line, col];
}

/** Block-style YAML that reads back to the same data (no anchors, no line folding). */
export function stringifyYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, indent: 2, aliasDuplicateObjects: false });
}
