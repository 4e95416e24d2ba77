/**
 * The tools an episode may call, as the policy sees them: each tool's name, description and the
 * JSON schema of its arguments (a plugin's derived from its zod `parameters`, an MCP server's as
 * it lists it; see toolsFromConfig in the SDK), plus sampling arguments from that schema for
 * random actions.
 */
import type { AgentTool, Rng } from 'agentic';

type JsonSchema = { [key: string]: unknown };

/** A tool of the episode: a tool plugin's or an MCP server's (the SDK's AgentTool). */
export type ToolSpec = AgentTool;

/** One line per tool, in the OpenAI function format that chat models are trained on. */
export function toolCatalogue(tools: readonly ToolSpec[]): string {
  return tools
    .map((tool) => JSON.stringify({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.schema } }))
    .join('\n');
}

/** Arguments drawn from the tool's schema that its check accepts, or null when that is not feasible. */
export function sampleArguments(tool: ToolSpec, rng: Rng): Record<string, unknown> | null {
  const value = sampleValue(tool.schema, rng, 0);
  if (value === undefined || !tool.check(value).ok) return null;
  return value as Record<string, unknown>;
}

const MAX_DEPTH = 4;

/** A value of the schema, or undefined for a schema we cannot sample (patterns, formats, refs). */
function sampleValue(schema: JsonSchema, rng: Rng, depth: number): unknown {
  if (depth > MAX_DEPTH) return undefined;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return rng.choice(schema.enum);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options)) {
      for (const option of rng.shuffle([...(options as JsonSchema[])])) {
        const value = sampleValue(option, rng, depth + 1);
        if (value !== undefined) return value;
      }
      return undefined;
    }
  }
  switch (schema.type) {
    case 'string':
      // an expression-like text suits the usual text parameters: expressions, code, queries, answers
      return schema.pattern || schema.format ? undefined : `${rng.intBetween(1, 20)} + ${rng.intBetween(1, 20)}`;
    case 'integer':
    case 'number': {
      const low = Math.ceil(typeof schema.minimum === 'number' ? Math.max(schema.minimum, -10) : 0);
      const high = Math.floor(typeof schema.maximum === 'number' ? Math.min(schema.maximum, low + 10) : low + 10);
      return high < low ? undefined : rng.intBetween(low, high);
    }
    case 'boolean':
      return rng.bernoulli(0.5);
    case 'null':
      return null;
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : schema.maxItems === 0 ? 0 : 1;
      const items = Array.from({ length: count }, () => sampleValue((schema.items ?? {}) as JsonSchema, rng, depth + 1));
      return items.includes(undefined) ? undefined : items;
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required ?? []) as string[]);
      const value: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(properties)) {
        if (!required.has(key) && rng.bernoulli(0.5)) continue;
        const sampled = sampleValue(property, rng, depth + 1);
        if (sampled === undefined) {
          if (required.has(key)) return undefined;
          continue;
        }
        value[key] = sampled;
      }
      return value;
    }
    default:
      return undefined;
  }
}
