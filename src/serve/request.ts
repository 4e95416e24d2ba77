/**
 * What the endpoints share on the way in: reading a JSON body against a strict schema, the error
 * a bad request gets (an HTTP status and the field it names), and one generation request in the
 * server's own terms, whichever protocol it came in (SGLang's /generate or OpenAI's completions),
 * checked against the served model: ids inside the vocabulary, prompt and budget inside the context.
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

/** A body field a spec came from, so the model's checks name the field the client wrote. */
export interface FieldNames {
  prompt: string;
  maxNewTokens: string;
  stopTokenIds: string;
  /** Where the request names its LoRA adapter: SGLang's lora_path, OpenAI's model. */
  adapter: string;
}

/** One generation request as a protocol gives it, before the model's checks. */
export interface GenerationSpec {
  /** The client's handle (SGLang's rid); null: the server makes one. */
  rid: string | null;
  promptIds: number[];
  /** As given; null: the protocol's default, cut to the room the prompt leaves. */
  maxNewTokens: number | null;
  defaultMaxNewTokens: number;
  temperature: number;
  topP: number;
  /** 0 (or -1) off. */
  topK: number;
  /** Seeds the request's own random stream; null: the server's counter does. */
  seed: number | null;
  stopTokenIds: number[];
  stopStrings: string[];
  /** The most likely tokens of every step to return with their log-probs; 0: none. */
  topLogProbs: number;
  /** The loaded LoRA adapter to generate with (/load_lora_adapter); null: the served model itself. */
  adapter: string | null;
  fields: FieldNames;
}

/** A spec the served model can run: every id in its vocabulary, prompt and budget within its context. */
export interface BoundedSpec extends Omit<GenerationSpec, 'maxNewTokens' | 'defaultMaxNewTokens' | 'fields'> {
  maxNewTokens: number;
  /** The body field that named the adapter, for the error when it is not loaded. */
  adapterField: string;
}

export interface ModelLimits {
  /** Embedding rows: ids must be below it. */
  vocabSize: number;
  /** Most positions one request may reach, prompt and generated ids together. */
  maxContext: number;
}

function checkVocabulary(ids: readonly number[], field: string, vocabSize: number): void {
  const at = ids.findIndex((id) => id >= vocabSize);
  if (at >= 0) throw new RequestError(400, `${field}[${at}]: token id ${ids[at]} is outside the vocabulary [0, ${vocabSize})`, field);
}

/**
 * Checks a spec against the model. An explicit budget must fit: prompt + max_new_tokens at most
 * the context (SGLang and vLLM refuse more too); an absent one is the default cut to the room left.
 */
export function boundSpec(spec: GenerationSpec, limits: ModelLimits): BoundedSpec {
  const { fields, defaultMaxNewTokens, maxNewTokens, ...rest } = spec;
  if (spec.promptIds.length === 0) throw new RequestError(400, `${fields.prompt}: the prompt has no ids`, fields.prompt);
  checkVocabulary(spec.promptIds, fields.prompt, limits.vocabSize);
  checkVocabulary(spec.stopTokenIds, fields.stopTokenIds, limits.vocabSize);
  const room = limits.maxContext - spec.promptIds.length;
  if (room < 1) {
    throw new RequestError(
      400,
      `${fields.prompt}: a prompt of ${spec.promptIds.length} ids leaves no room in the context of ${limits.maxContext} positions`,
      fields.prompt,
    );
  }
  if (maxNewTokens !== null && maxNewTokens > room) {
    throw new RequestError(
      400,
      `${fields.maxNewTokens}: ${maxNewTokens} new ids after a prompt of ${spec.promptIds.length} exceed the context of ${limits.maxContext} positions (at most ${room})`,
      fields.maxNewTokens,
    );
  }
  return { ...rest, maxNewTokens: maxNewTokens ?? Math.min(defaultMaxNewTokens, room), adapterField: fields.adapter };
}
