/**
 * What an HTTP endpoint of ours (`agentic serve`, the trainer's gateway) does on the way in:
 * reading a JSON body against a strict schema, the error a bad request gets (an HTTP status and
 * the field it names), and the field schemas the generation protocols share.
 */
import { z } from 'zod';
import { didYouMean } from '../util/suggest';

/** A request the server refuses: answered with `status` and { error: { message, field } }. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The body field at fault, dotted (`sampling_params.top_p`); null when no one field is. */
    readonly field: string | null = null,
    /** Seconds a client should wait before it tries again (503 on a full queue). */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

/** A body field's path as the error names it: `input_ids` for `input_ids[3]`, the index goes in the message. */
function fieldOf(path: readonly PropertyKey[]): string | null {
  const named = path.filter((p): p is string => typeof p === 'string');
  return named.length > 0 ? named.join('.') : null;
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

/** The keys a strict object schema accepts at `path` (through optional wrappers). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: unknown = schema;
  for (const key of [...path, null]) {
    while (at instanceof z.ZodOptional || at instanceof z.ZodDefault) at = at.unwrap();
    if (key === null) break;
    if (!(at instanceof z.ZodObject)) return [];
    at = (at.shape as Record<string, unknown>)[String(key)];
  }
  return at instanceof z.ZodObject ? Object.keys(at.shape) : [];
}

/**
 * A `model` other than the served one or a loaded LoRA adapter (vLLM names adapters so) is 404, as
 * in vLLM; no `model` is the served one. `agentic serve` and the trainer's gateway answer alike.
 */
export function checkModel(given: string | null | undefined, served: string, adapters: readonly string[] = []): void {
  if (given != null && given !== served && !adapters.includes(given)) {
    const also = adapters.length > 0 ? ` and the LoRA adapters ${adapters.join(', ')}` : '';
    throw new RequestError(404, `model '${given}' is not served here; this server serves '${served}'${also}`, 'model');
  }
}

export interface BodyOptions {
  /** Why a field the protocol has is not served here, for its error message. */
  hints?: Record<string, string>;
  /** A check of the raw JSON before the schema's, for a mistake the schema would describe poorly. */
  before?: (value: unknown) => void;
}

/**
 * Parses a body against `schema` (an empty body is {}); the first problem (an unknown field
 * before any other) is a 400 naming its field.
 */
export function parseBody<T extends z.ZodType>(schema: T, text: string, options: BodyOptions = {}): z.output<T> {
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new RequestError(400, `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  options.before?.(value);
  const hints = options.hints ?? {};
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown) {
    const key = unknown.keys[0]!;
    const path = [...unknown.path, key];
    const field = fieldOf(path)!;
    const known = keysAt(schema, unknown.path);
    const hint = hints[field] ? ` (${hints[field]})` : didYouMean(key, known) || ` (fields: ${known.join(', ')})`;
    throw new RequestError(400, `unknown field '${pathText(path)}'${hint}`, field);
  }
  const issue = issues[0]!;
  if (issue.path.length === 0) throw new RequestError(400, `the body must be a JSON object: ${issue.message}`);
  throw new RequestError(400, `${pathText(issue.path)}: ${issue.message}`, fieldOf(issue.path));
}

/**
 * What one request may ask for: enough for any real client, bounded so that no request can make
 * the server do unbounded work per token (stop strings are searched for at every step).
 */
export const BOUNDS = { stopStrings: 32, stopLength: 512, stopTokenIds: 256, rid: 256, tokenizeChars: 1_000_000, topLogProbs: 20 } as const;

/** Field schemas both protocols use. */
export const tokenId = z.number().int().min(0);
export const tokenIds = z.array(tokenId);
export const stopTokenIds = tokenIds.max(BOUNDS.stopTokenIds);
const stopString = z.string().min(1).max(BOUNDS.stopLength);
/** One stop string or a list of them; a list either way. */
export const stopStrings = z.preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(stopString).max(BOUNDS.stopStrings));
export const seed = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const rid = z.string().min(1).max(BOUNDS.rid);
/** How many top alternatives a step's log-probs come with. */
export const topLogProbs = z.number().int().min(0).max(BOUNDS.topLogProbs);
