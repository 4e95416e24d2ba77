/**
 * Reading zod schemas as data: which keys exist at a path, what a value is expected to be. The
 * override checker, the error messages and the generated docs use these.
 */
import type { z } from 'zod';
import type { PathSegment } from './tree';

type AnySchema = z.core.$ZodType;

function def(schema: AnySchema): z.core.$ZodTypeDef & Record<string, any> {
  return schema._zod.def as z.core.$ZodTypeDef & Record<string, any>;
}

/** Strips wrappers that do not change the shape: default, prefault, optional, nullable, pipe. */
export function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (;;) {
    const d = def(current);
    if (['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch', 'nonoptional'].includes(d.type)) {
      current = d.innerType;
    } else if (d.type === 'pipe') {
      // preprocess(fn, schema) is a pipe from a transform into the real schema
      current = def(d.in).type === 'transform' ? d.out : d.in;
    } else {
      return current;
    }
  }
}

/** The schema of a child: an object's field, a record's value, a list's element. */
export function childSchema(schema: AnySchema, segment: PathSegment): AnySchema | undefined {
  const inner = unwrap(schema);
  const d = def(inner);
  switch (d.type) {
    case 'object':
      return typeof segment === 'string' && Object.hasOwn(d.shape, segment) ? d.shape[segment] : undefined;
    case 'record':
      return d.valueType;
    case 'array':
      return d.element;
    case 'union':
      for (const option of d.options as AnySchema[]) {
        const child = childSchema(option, segment);
        if (child) return child;
      }
      return undefined;
    default:
      return undefined;
  }
}

export function schemaAt(schema: AnySchema, path: readonly PathSegment[]): AnySchema | undefined {
  let current: AnySchema | undefined = schema;
  for (const segment of path) {
    if (!current) return undefined;
    current = childSchema(current, segment);
  }
  return current;
}

/** The options of a union schema (through wrappers); [] for any other schema. */
export function unionOptions(schema: AnySchema): AnySchema[] {
  const d = def(unwrap(schema));
  return d.type === 'union' ? [...(d.options as AnySchema[])] : [];
}

/** The fixed keys of an object schema, in declaration order ([] for records and scalars). */
export function declaredKeys(schema: AnySchema | undefined): string[] {
  if (!schema) return [];
  const d = def(unwrap(schema));
  return d.type === 'object' ? Object.keys(d.shape) : [];
}

/** Whether the schema accepts any key (a record, or an unknown value that may be a mapping). */
export function isOpenMapping(schema: AnySchema | undefined): boolean {
  if (!schema) return false;
  const type = def(unwrap(schema)).type;
  return type === 'record' || type === 'unknown' || type === 'any';
}

export function description(schema: AnySchema | undefined): string | undefined {
  return (schema as { description?: string } | undefined)?.description;
}

/** What a value at this schema should look like, in words: "integer", "one of a, b", "string or null". */
export function describeExpected(schema: AnySchema): string {
  const d = def(schema);
  switch (d.type) {
    case 'default':
    case 'prefault':
    case 'optional':
    case 'readonly':
    case 'catch':
      return describeExpected(d.innerType);
    case 'nullable':
      return `${describeExpected(d.innerType)} or null`;
    case 'pipe':
      return describeExpected(def(d.in).type === 'transform' ? d.out : d.in);
    case 'number':
      return d.format === 'safeint' || d.format === 'int32' ? 'integer' : 'number';
    case 'string':
    case 'boolean':
    case 'null':
      return d.type;
    case 'enum':
      return `one of ${Object.values(d.entries as Record<string, string>).join(', ')}`;
    case 'literal':
      return (d.values as unknown[]).map((v) => JSON.stringify(v)).join(' or ');
    case 'array':
      return `a list of ${plural(describeExpected(d.element))}`;
    case 'object':
    case 'record':
      return 'a mapping';
    case 'union':
      return (d.options as AnySchema[]).map(describeExpected).join(' or ');
    default:
      return d.type;
  }
}

function plural(what: string): string {
  if (what.startsWith('one of ')) return `values (${what})`;
  if (what === 'a mapping') return 'mappings';
  return /^(integer|number|string|boolean)/.test(what) ? what.replace(/^(\w+)/, '$1s') : what;
}

/** The default of a field, if it has one (shown in docs). */
export function defaultValue(schema: AnySchema): { has: true; value: unknown } | { has: false } {
  const d = def(schema);
  if (d.type === 'default') return { has: true, value: d.defaultValue };
  if (d.type === 'prefault') return { has: true, value: undefined };
  return { has: false };
}
