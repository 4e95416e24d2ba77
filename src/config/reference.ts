/**
 * docs/config.md, generated from the schema (`bun run docs`), so the reference can never drift:
 * a test compares the file with this output.
 */
import type { z } from 'zod';
import { declaredKeys, defaultValue, describeExpected, description, schemaAt, unwrap } from './introspect';
import { ConfigShape, configDefaults } from './schema';
import { formatPath, lookup, type PathSegment, type Tree } from './tree';

type AnySchema = z.core.$ZodType;

function kind(schema: AnySchema): string {
  return (unwrap(schema)._zod.def as { type: string }).type;
}

function showDefault(value: Tree | undefined): string {
  if (value === undefined) return '';
  const text = JSON.stringify(value);
  return `\`${text.replace(/\|/g, '\\|')}\``;
}

/** Object schemas already documented, by identity: repeated blocks (the four roles) link back. */
type Seen = Map<AnySchema, PathSegment[]>;

function rows(schema: AnySchema, path: PathSegment[], defaults: Tree, sections: string[][], seen: Seen): string[] {
  const lines: string[] = [];
  for (const key of declaredKeys(schema)) {
    const child = schemaAt(schema, [key])!;
    const childPath = [...path, key];
    const type = kind(child);
    const found = lookup(defaults, childPath);
    const declared = defaultValue(child);
    const value: Tree | undefined = found.found ? found.value : declared.has ? (declared.value as Tree) : undefined;
    const about = description(child) ?? '';
    if (type === 'object') {
      const documented = seen.get(unwrap(child));
      const target = documented ?? childPath;
      if (!documented) {
        seen.set(unwrap(child), childPath);
        const section: string[] = [formatPath(childPath), about];
        sections.push(section);
        section.push(...rows(child, childPath, defaults, sections, seen));
      }
      const same = documented ? 'same keys as ' : 'see ';
      const orNull = value === null ? '`null`, or ' : '';
      lines.push(`| \`${key}\` | mapping | ${orNull}${same}[${formatPath(target)}](#${anchor(target)}) | ${about} |`);
    } else if (type === 'record' && declaredKeys(schemaAt(child, ['*'])).length > 0) {
      const entryPath = [...childPath, '<tag>'];
      const section: string[] = [formatPath(entryPath), `Each entry of \`${key}\`. ${about}`];
      sections.push(section);
      section.push(...rows(schemaAt(child, ['*'])!, entryPath, {}, sections, seen));
      lines.push(`| \`${key}\` | mapping of entries | ${showDefault(value)} | ${about} See [${formatPath(entryPath)}](#${anchor(entryPath)}). |`);
    } else {
      lines.push(`| \`${key}\` | ${describeExpected(child)} | ${showDefault(value)} | ${about} |`);
    }
  }
  return lines;
}

function anchor(path: PathSegment[]): string {
  return formatPath(path)
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '');
}

export function renderConfigReference(): string {
  const sections: string[][] = [];
  const top = rows(ConfigShape, [], configDefaults() as Tree, sections, new Map());
  const header = '| key | type | default | meaning |\n|---|---|---|---|';
  const out = [
    '# Configuration reference',
    '',
    '<!-- Generated from src/config/schema.ts by `bun run docs`; do not edit by hand. -->',
    '',
    'Every key agentic reads, with its type and default. Defaults written as `${...}` are',
    'interpolations, resolved with the rest of the config. `agentic config` prints the resolved',
    'values for a given config and overrides.',
    '',
    '## Top level',
    '',
    header,
    ...top,
  ];
  for (const [title, about, ...lines] of sections) {
    out.push('', `## ${title}`, '', ...(about ? [about, ''] : []), header, ...lines);
  }
  return `${out.join('\n')}\n`;
}
