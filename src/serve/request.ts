/**
 * One generation request in the server's own terms, whichever protocol it came in (SGLang's
 * /generate or OpenAI's completions), checked against the served model: ids inside the
 * vocabulary, prompt and budget inside the context. Reading bodies: ../util/request_body.ts.
 */
import { RequestError } from '../util/request_body';

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
