/**
 * The HTTP side of `agentic serve`: Bun.serve, a table of endpoints, and the one place a request's
 * failure becomes a response. A refused request is a 4xx/503 JSON error naming its field
 * ({ error: { message, field } }); anything else a handler throws is a 500 with one line, and
 * the server goes on serving. docs/serve.md describes every endpoint.
 */
import type { Server } from 'bun';
import { resolve } from 'node:path';
import { firstLine, oneLine } from '../errors';
import type { EngineStats, ServingEngine } from './engine';
import { checkModel, CompletionsBody, completionsResponse, completionsSpec, modelsResponse, refusePromptForm } from './openai';
import { boundSpec, parseBody, RequestError } from './request';
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

export interface ServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The model's name in the OpenAI API (/v1/models, completions' `model`). */
  servedModel: string;
  /** Lines worth an operator's attention (a handler's internal error, a weight update). */
  log: (line: string) => void;
}

type Method = 'GET' | 'POST';
type Handler = (request: Request) => Promise<Response> | Response;

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
  private readonly routes: Record<string, Partial<Record<Method, Handler>>>;

  constructor(
    private readonly engine: ServingEngine,
    private readonly options: ServerOptions,
  ) {
    this.routes = {
      '/generate': { POST: (r) => this.generate(r) },
      '/v1/completions': { POST: (r) => this.completions(r) },
      '/v1/models': { GET: () => json(modelsResponse(this.options.servedModel, this.created, this.engine.limits.maxContext, this.engine.loadedAdapters)) },
      '/update_weights_from_disk': { POST: (r) => this.updateWeights(r) },
      '/load_lora_adapter': { POST: (r) => this.sglangAdapter(r, 'load') },
      '/unload_lora_adapter': { POST: (r) => this.sglangAdapter(r, 'unload') },
      '/v1/load_lora_adapter': { POST: (r) => this.vllmAdapter(r, 'load') },
      '/v1/unload_lora_adapter': { POST: (r) => this.vllmAdapter(r, 'unload') },
      '/get_weight_version': { GET: () => json({ weight_version: this.engine.version }) },
      '/pause_generation': {
        POST: async (r) => {
          parseBody(PauseBody, await r.text());
          await this.engine.pause();
          return json({ success: true });
        },
      },
      '/continue_generation': {
        POST: async (r) => {
          parseBody(EmptyBody, await r.text());
          this.engine.resume();
          return json({ success: true });
        },
      },
      '/abort_request': { POST: async (r) => json({ success: this.engine.abort(parseBody(AbortBody, await r.text()).rid) }) },
      '/health': { GET: () => (this.engine.isDraining ? json({}, 503) : json({})) },
      '/get_model_info': { GET: () => json(modelInfoResponse(this.engine.modelInfo())) },
      '/get_server_info': { GET: () => json(serverInfoResponse(this.engine.stats())) },
      '/tokenize': { POST: (r) => this.tokenize(r) },
    };
  }

  /** Starts listening; returns the address it listens on. */
  start(): string {
    this.server = Bun.serve({
      hostname: this.options.host,
      port: this.options.port,
      // a long generation sends nothing until it is done: no idle timeout may cut it
      idleTimeout: 0,
      maxRequestBodySize: MAX_BODY_BYTES,
      fetch: (request) => this.handle(request),
    });
    return this.server.url.href.replace(/\/$/, '');
  }

  /** SIGTERM: new requests get 503 while the queued and running ones finish; then the server closes. */
  async drain(): Promise<void> {
    await this.engine.drain();
    await this.server?.stop();
    this.server = null;
  }

  private async handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const route = this.routes[path];
    if (!route) return errorResponse(404, `no endpoint ${path}`, null);
    const handler = route[request.method as Method];
    if (!handler) {
      const allowed = Object.keys(route).join(', ');
      return errorResponse(405, `${path} takes ${allowed}, not ${request.method}`, null, { Allow: allowed });
    }
    try {
      return await handler(request);
    } catch (error) {
      if (error instanceof RequestError) {
        return errorResponse(error.status, error.message, error.field, error.retryAfter === null ? {} : { 'Retry-After': String(error.retryAfter) });
      }
      const line = oneLine(firstLine(error));
      this.options.log(`${path}: ${line}`);
      return errorResponse(500, line, null);
    }
  }

  private async generate(request: Request): Promise<Response> {
    const body = parseBody(GenerateBody, await request.text(), { hints: GENERATE_HINTS, before: refuseBatch });
    const spec = boundSpec(generateSpec(body), this.engine.limits);
    const completion = await this.engine.generate(spec, request.signal);
    return json(generateResponse(completion, body.return_logprob));
  }

  private async completions(request: Request): Promise<Response> {
    const body = parseBody(CompletionsBody, await request.text(), { before: refusePromptForm });
    const adapters = [...this.engine.loadedAdapters.keys()];
    checkModel(body.model, this.options.servedModel, adapters);
    const spec = boundSpec(completionsSpec(body, adapters), this.engine.limits);
    const completion = await this.engine.generate(spec, request.signal);
    return json(completionsResponse(completion, body, this.options.servedModel, this.created, this.engine.chat.responsePiece));
  }

  private async updateWeights(request: Request): Promise<Response> {
    const body = parseBody(UpdateWeightsBody, await request.text());
    const result = await this.engine.updateWeights(resolve(body.model_path), body.weight_version ?? null);
    this.options.log(result.message);
    // as SGLang: a failed update answers 400 with success false
    return json(result, result.success ? 200 : 400);
  }

  /** The adapter's name and folder, loaded or unloaded; a refusal is a RequestError. */
  private async adapterChange(request: Request, change: 'load' | 'unload'): Promise<string> {
    if (change === 'load') {
      const body = parseBody(LoadLoraBody, await request.text());
      this.engine.loadAdapter(body.lora_name, resolve(body.lora_path));
      this.options.log(`loaded the LoRA adapter ${body.lora_name} from ${body.lora_path}`);
      return body.lora_name;
    }
    const body = parseBody(UnloadLoraBody, await request.text());
    await this.engine.unloadAdapter(body.lora_name);
    return body.lora_name;
  }

  /** SGLang's answer: {success, error_message, loaded_adapters}, 400 with success false on a refusal. */
  private async sglangAdapter(request: Request, change: 'load' | 'unload'): Promise<Response> {
    try {
      await this.adapterChange(request, change);
      return json(loraResponse(null, this.engine.loadedAdapters));
    } catch (error) {
      if (!(error instanceof RequestError) || error.status !== 400) throw error;
      return json(loraResponse(error.message, this.engine.loadedAdapters), 400);
    }
  }

  /** vLLM's answer: a sentence of text on success; a refusal is the usual JSON error. */
  private async vllmAdapter(request: Request, change: 'load' | 'unload'): Promise<Response> {
    const name = await this.adapterChange(request, change);
    return new Response(`Success: LoRA adapter '${name}' ${change === 'load' ? 'added' : 'removed'} successfully.`);
  }

  private async tokenize(request: Request): Promise<Response> {
    const body = parseBody(TokenizeBody, await request.text());
    const tokens = this.engine.chat.tokenizer.encode(body.prompt, { addSpecialTokens: body.add_special_tokens });
    return json({ tokens, count: tokens.length, max_model_len: this.engine.limits.maxContext });
  }
}
