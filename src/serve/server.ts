/**
 * The HTTP side of `agentic serve`: Bun.serve, a table of endpoints, and the one place a request's
 * failure becomes a response. A refused request is a 4xx/503 JSON error naming its field
 * ({ error: { message, field } }); anything else a handler throws is a 500 with one line, and
 * the server goes on serving. Each endpoint says who may call it (./access.ts) and whether it waits
 * on generation: those answer when the batch lets them, the others must finish within the idle
 * timeout. docs/serve.md describes every endpoint.
 *
 * /v1/chat/completions is the trainer gateway's module (../rollout/gateway/chat_completions.ts)
 * over this engine, so an agent sees the same API from both.
 */
import type { Server } from 'bun';
import { firstLine, oneLine } from '../errors';
import { type Access, authorize, type Keys } from './access';
import type { EngineStats, ServingEngine } from './batcher';
import { assistantMessage, CHAT_HINTS, ChatCompletionsBody, chatResponse, chatStream, chatTurn } from '../rollout/gateway/chat_completions';
import { CompletionsBody, completionsResponse, completionsSpec, modelsResponse, refusePromptForm } from './openai';
import { chatGeneration, chatSpec } from './openai_chat';
import { checkModel, parseBody, RequestError } from '../util/request_body';
import { boundSpec } from './request';
import {
  AbortBody,
  EmptyBody,
  GENERATE_HINTS,
  GenerateBody,
  generateResponse,
  generateSpec,
  LoadLoraBody,
  loraResponse,
  modelInfoResponse,
  PauseBody,
  refuseBatch,
  TokenizeBody,
  UnloadLoraBody,
  UpdateWeightsBody,
} from './sglang';
import type { WeightsRoot } from './weights_root';

export interface ServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The model's name in the OpenAI API (/v1/models, completions' `model`). */
  servedModel: string;
  /** Lines worth an operator's attention (a handler's internal error, a weight update). */
  log: (line: string) => void;
  keys: Keys;
  /** Where weight and adapter folders may be loaded from. */
  weightsRoot: WeightsRoot;
  /** Seconds an endpoint that does not wait on generation may take, its request's upload included. */
  idleTimeoutS: number;
}

type Method = 'GET' | 'POST';
/** `body`: the request's body, read in full. */
type Handler = (body: string, request: Request) => Promise<Response> | Response;

interface Route {
  access: Access;
  /** Answers when generation lets it (a generation, or a change that waits for the batch): no idle timeout once its body is in. */
  waits?: true;
  methods: Partial<Record<Method, Handler>>;
}

/** A prompt of a long context is a few hundred kilobytes of JSON; this is ample and bounded. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

function json(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(value, { status, headers });
}

function errorResponse(status: number, message: string, field: string | null, headers: Record<string, string> = {}): Response {
  return json({ error: { message, field } }, status, headers);
}

/** Ours (SGLang's endpoint of this name reports its own internals): the queue, the batch and the tfjs tensor count. */
function serverInfoResponse(stats: EngineStats) {
  return {
    weight_version: stats.weightVersion,
    running: stats.running,
    queued: stats.queued,
    paused: stats.paused,
    updating: stats.updating,
    draining: stats.draining,
    max_running_requests: stats.maxRunning,
    max_queue: stats.maxQueue,
    served: stats.served,
    generated_tokens: stats.generatedTokens,
    weight_updates: stats.weightUpdates,
    lora_adapters: stats.adapters,
    tensors: stats.tensors,
  };
}

export class InferenceServer {
  private server: Server<undefined> | null = null;
  /** When the server started, in seconds (OpenAI's `created`). */
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly routes: Record<string, Route>;

  constructor(
    private readonly engine: ServingEngine,
    private readonly options: ServerOptions,
  ) {
    const info = (answer: () => unknown): Partial<Record<Method, Handler>> => ({ GET: () => json(answer()) });
    this.routes = {
      '/generate': { access: 'serving', waits: true, methods: { POST: (b, r) => this.generate(b, r) } },
      '/v1/completions': { access: 'serving', waits: true, methods: { POST: (b, r) => this.completions(b, r) } },
      '/v1/chat/completions': { access: 'serving', waits: true, methods: { POST: (b, r) => this.chatCompletions(b, r) } },
      '/v1/models': {
        access: 'serving',
        methods: info(() => modelsResponse(this.options.servedModel, this.created, this.engine.limits.maxContext, this.engine.loadedAdapters)),
      },
      '/tokenize': { access: 'serving', methods: { POST: (b) => this.tokenize(b) } },
      '/get_weight_version': { access: 'serving', methods: info(() => ({ weight_version: this.engine.version })) },
      '/get_model_info': { access: 'serving', methods: info(() => modelInfoResponse(this.engine.modelInfo())) },
      '/get_server_info': { access: 'serving', methods: info(() => serverInfoResponse(this.engine.stats())) },
      '/update_weights_from_disk': { access: 'admin', waits: true, methods: { POST: (b) => this.updateWeights(b) } },
      '/load_lora_adapter': { access: 'admin', methods: { POST: (b) => this.sglangAdapter(b, 'load') } },
      '/unload_lora_adapter': { access: 'admin', waits: true, methods: { POST: (b) => this.sglangAdapter(b, 'unload') } },
      '/v1/load_lora_adapter': { access: 'admin', methods: { POST: (b) => this.vllmAdapter(b, 'load') } },
      '/v1/unload_lora_adapter': { access: 'admin', waits: true, methods: { POST: (b) => this.vllmAdapter(b, 'unload') } },
      '/pause_generation': {
        access: 'admin',
        waits: true,
        methods: {
          POST: async (b) => {
            parseBody(PauseBody, b);
            await this.engine.pause();
            return json({ success: true });
          },
        },
      },
      '/continue_generation': {
        access: 'admin',
        methods: {
          POST: (b) => {
            parseBody(EmptyBody, b);
            this.engine.resume();
            return json({ success: true });
          },
        },
      },
      '/abort_request': { access: 'admin', methods: { POST: (b) => json({ success: this.engine.abort(parseBody(AbortBody, b).rid) }) } },
      // SGLang's: there is no prefix cache here, so there is nothing to flush
      '/flush_cache': { access: 'admin', methods: { GET: () => new Response('Cache flushed.'), POST: () => new Response('Cache flushed.') } },
      '/health': { access: 'open', methods: { GET: () => (this.engine.isDraining ? json({}, 503) : json({})) } },
      '/health_generate': { access: 'open', waits: true, methods: { GET: (_, r) => this.healthGenerate(r) } },
    };
  }

  /** Starts listening; returns the address it listens on. */
  start(): string {
    this.server = Bun.serve({
      hostname: this.options.host,
      port: this.options.port,
      // the endpoints that wait on generation lift it for themselves once their body is in
      idleTimeout: this.options.idleTimeoutS,
      maxRequestBodySize: MAX_BODY_BYTES,
      fetch: (request, server) => this.handle(request, server),
    });
    return this.server.url.href.replace(/\/$/, '');
  }

  /** SIGTERM: new requests get 503 while the queued and running ones finish; then the server closes. */
  async drain(): Promise<void> {
    await this.engine.drain();
    await this.server?.stop();
    this.server = null;
  }

  private async handle(request: Request, server: Server<undefined>): Promise<Response> {
    const path = new URL(request.url).pathname;
    const route = this.routes[path];
    if (!route) return errorResponse(404, `no endpoint ${path}`, null);
    const handler = route.methods[request.method as Method];
    if (!handler) {
      const allowed = Object.keys(route.methods).join(', ');
      return errorResponse(405, `${path} takes ${allowed}, not ${request.method}`, null, { Allow: allowed });
    }
    try {
      authorize(request, route.access, this.options.keys);
      const body = await request.text();
      if (route.waits) server.timeout(request, 0);
      return await handler(body, request);
    } catch (error) {
      if (error instanceof RequestError) {
        const headers: Record<string, string> = error.retryAfter === null ? {} : { 'Retry-After': String(error.retryAfter) };
        if (error.status === 401) headers['WWW-Authenticate'] = 'Bearer';
        return errorResponse(error.status, error.message, error.field, headers);
      }
      const line = oneLine(firstLine(error));
      this.options.log(`${path}: ${line}`);
      return errorResponse(500, line, null);
    }
  }

  private async generate(text: string, request: Request): Promise<Response> {
    const body = parseBody(GenerateBody, text, { hints: GENERATE_HINTS, before: refuseBatch });
    const spec = boundSpec(generateSpec(body), this.engine.limits);
    const completion = await this.engine.generate(spec, request.signal);
    return json(generateResponse(completion, body, this.engine.chat.responsePiece));
  }

  /** SGLang's: 200 once the model has generated one token, 503 when it cannot (or the server is draining). */
  private async healthGenerate(request: Request): Promise<Response> {
    if (this.engine.isDraining) return json({}, 503);
    const body = GenerateBody.parse({ input_ids: [0], sampling_params: { max_new_tokens: 1, temperature: 0 } });
    try {
      await this.engine.generate(boundSpec(generateSpec(body), this.engine.limits), request.signal);
      return json({});
    } catch (error) {
      this.options.log(`/health_generate: ${oneLine(firstLine(error))}`);
      return json({}, 503);
    }
  }

  private async completions(text: string, request: Request): Promise<Response> {
    const body = parseBody(CompletionsBody, text, { before: refusePromptForm });
    const adapters = [...this.engine.loadedAdapters.keys()];
    checkModel(body.model, this.options.servedModel, adapters);
    const spec = boundSpec(completionsSpec(body, adapters), this.engine.limits);
    const completion = await this.engine.generate(spec, request.signal);
    return json(completionsResponse(completion, body, this.options.servedModel, this.created, this.engine.chat.responsePiece));
  }

  /** The reply is generated whole before it is sent: a stream comes in one burst. */
  private async chatCompletions(text: string, request: Request): Promise<Response> {
    const body = parseBody(ChatCompletionsBody, text, { hints: CHAT_HINTS });
    const adapters = [...this.engine.loadedAdapters.keys()];
    checkModel(body.model, this.options.servedModel, adapters);
    const turn = chatTurn(body, this.engine.chat.tokenizer);
    const spec = boundSpec(chatSpec(body, turn, adapters), this.engine.limits);
    const completion = await this.engine.generate(spec, request.signal);
    const message = assistantMessage(completion.text, turn.readCalls, (i) => `call_${completion.rid}_${i}`);
    const context = {
      id: `chatcmpl-${completion.rid}`,
      model: this.options.servedModel,
      created: Math.floor(Date.now() / 1000),
      piece: this.engine.chat.responsePiece,
    };
    const generation = chatGeneration(completion);
    if (!turn.stream) return json(chatResponse(turn, generation, message, context));
    return new Response(chatStream(turn, generation, message, context), { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
  }

  private async updateWeights(text: string): Promise<Response> {
    const body = parseBody(UpdateWeightsBody, text);
    const root = this.options.weightsRoot;
    let folder: string;
    try {
      folder = root.folder(body.model_path, 'model_path');
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      return json({ success: false, message: error.message }, error.status);
    }
    const result = await this.engine.updateWeights(folder, body.weight_version ?? null);
    this.options.log(result.message);
    // as SGLang: a failed update answers 400 with success false
    return json({ ...result, message: root.redact(result.message, folder, body.model_path) }, result.success ? 200 : 400);
  }

  /** The adapter's name and folder, loaded or unloaded; a refusal is a RequestError. */
  private async adapterChange(text: string, change: 'load' | 'unload'): Promise<string> {
    if (change === 'load') {
      const body = parseBody(LoadLoraBody, text);
      const root = this.options.weightsRoot;
      const folder = root.folder(body.lora_path, 'lora_path');
      try {
        this.engine.loadAdapter(body.lora_name, folder);
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        this.options.log(`/load_lora_adapter: ${error.message}`);
        throw new RequestError(error.status, root.redact(error.message, folder, body.lora_path), error.field);
      }
      this.options.log(`loaded the LoRA adapter ${body.lora_name} from ${folder}`);
      return body.lora_name;
    }
    const body = parseBody(UnloadLoraBody, text);
    await this.engine.unloadAdapter(body.lora_name);
    return body.lora_name;
  }

  /** SGLang's answer: {success, error_message, loaded_adapters}, 400 with success false on a refusal. */
  private async sglangAdapter(text: string, change: 'load' | 'unload'): Promise<Response> {
    try {
      await this.adapterChange(text, change);
      return json(loraResponse(null, this.engine.loadedAdapters));
    } catch (error) {
      if (!(error instanceof RequestError) || error.status !== 400) throw error;
      return json(loraResponse(error.message, this.engine.loadedAdapters), 400);
    }
  }

  /** vLLM's answer: a sentence of text on success; a refusal is the usual JSON error. */
  private async vllmAdapter(text: string, change: 'load' | 'unload'): Promise<Response> {
    const name = await this.adapterChange(text, change);
    return new Response(`Success: LoRA adapter '${name}' ${change === 'load' ? 'added' : 'removed'} successfully.`);
  }

  private tokenize(text: string): Response {
    const body = parseBody(TokenizeBody, text);
    const tokens = this.engine.chat.tokenizer.encode(body.prompt, { addSpecialTokens: body.add_special_tokens });
    return json({ tokens, count: tokens.length, max_model_len: this.engine.limits.maxContext });
  }
}
