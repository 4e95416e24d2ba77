/**
 * Tool arguments as JSON schema, both ways: the schema the policy sees for a zod object (what a
 * tool plugin declares), and a check of arguments against a JSON schema (what an MCP server
 * lists). Problems read the same either way, `path: message`.
 */
import { z } from 'zod';
import type { ToolArgsCheck } from './types';

export type JsonSchema = { [key: string]: unknown };

/** The JSON schema the policy sees for a zod object of arguments. */
export function argumentsSchema(parameters: z.ZodType): JsonSchema {
  const schema = z.toJSONSchema(parameters, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete schema.$schema;
  return schema;
}

/** The parameter a plain-text input goes to: the only required one, when it is a string. */
export function textParameterOf(schema: JsonSchema): string | null {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as unknown[];
  const only = required.length === 1 && typeof required[0] === 'string' ? required[0] : null;
  return only !== null && properties[only]?.type === 'string' ? only : null;
}

/** A zod check's problems, `path: message` each. */
export function zodProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'arguments'}: ${issue.message}`);
}

/**
 * A check of arguments against a JSON schema: zod's reading of it (z.fromJSONSchema), or, for a
 * schema zod cannot read, the least a call needs (an object with the required keys). The
 * arguments pass on as they came; the server checks them again.
 */
export function jsonSchemaCheck(schema: JsonSchema): (args: unknown) => ToolArgsCheck {
  let parser: z.ZodType | null = null;
  try {
    parser = z.fromJSONSchema(schema as never);
  } catch {
    parser = null;
  }
  if (parser) {
    const zod = parser;
    return (args) => {
      const parsed = zod.safeParse(args);
      return parsed.success ? { ok: true, args } : { ok: false, problems: zodProblems(parsed.error) };
    };
  }
  const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : [];
  return (args) => {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return { ok: false, problems: ['arguments: expected an object'] };
    const missing = required.filter((key) => !(key in args));
    return missing.length === 0 ? { ok: true, args } : { ok: false, problems: missing.map((key) => `${key}: required`) };
  };
}
