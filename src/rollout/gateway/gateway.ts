/**
 * The gateway: an OpenAI-compatible endpoint on loopback that outside agents call as their model,
 * one session per episode. A session has its own base URL (`http://127.0.0.1:<port>/s/<id>/v1`)
 * and key; every call is answered by the rollout's policy and recorded as prompt ids, reply ids
 * and sampling log-probs (./session_turns.ts makes training rows of them).
 *
 * What costs the episode (the session's first problem, reported when it ends): a call with the
 * key of another episode or no key, a call after the deadline, a body over MAX_BODY_BYTES, more
 * calls than the session allows, a prompt that leaves no room in sequence_length, and a call the
 * policy could not answer. A malformed request (an unknown field, a field not served such as
 * response_format, a bad value, a `model` other than the session's, refused as `agentic serve`
 * refuses it) is a 4xx naming the field and costs nothing: the agent may correct it. Every refused
 * call is counted (gateway_refused), and the first one's reason kept.
 */
import type { Server } from 'bun';
import { randomBytes } from 'node:crypto';
import { firstLine } from '../../errors';
import { checkModel, parseBody, RequestError } from '../../util/request_body';
import { assistantMessage, CHAT_HINTS, ChatCompletionsBody, type ChatGeneration, chatResponse, chatStream, type ChatTurn, chatTurn } from './chat_completions';
import type { RecordedCall } from './session_turns';
import type { Tokenizer } from '../../model/tokenizer';

/** A conversation as long as any sequence_length here is a few hundred kilobytes; 10 MB is an agent gone wrong. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** A call's reply, or why the policy gave none (the call fails and the episode with it). */
export type Generated = { generation: ChatGeneration } | { failure: string; status: number };

export interface SessionOptions {
  /** The model's name in /v1/models and replies. */
  model: string;
  tokenizer: Tokenizer;
  /** What one token adds to the reply's text ('' for a special token). */
  piece: (id: number) => string;
  /** Date.now() after which calls are refused. */
  deadline: number;
  maxCalls: number;
  /** Answers call number `index` (0-based) of the session. */
  generate(turn: ChatTurn, index: number): Promise<Generated>;
}

export class GatewaySession {
  readonly calls: RecordedCall[] = [];
  /** The first thing that went wrong, in one line; it costs the episode. */
  problem: string | null = null;
  /** Model calls refused or failed, besides the recorded ones (gateway_refused). */
  refused = 0;
  /** Why the first of them was refused. */
  firstRefusal: string | null = null;
  private started = 0;
  private open = true;

  constructor(
    readonly id: string,
    readonly key: string,
    readonly baseUrl: string,
    readonly options: SessionOptions,
  ) {}

  get ended(): boolean {
    return !this.open;
  }

  /** Closes the session: later calls are refused. */
  end(): void {
    this.open = false;
  }

  /** A call refused for `problem`, which costs the episode. */
  flag(problem: string): void {
    this.problem ??= problem;
    this.refuse(problem);
  }

  /** A call refused for `reason`; alone, it costs nothing (the agent may correct its request). */
  refuse(reason: string): void {
    this.refused++;
    this.firstRefusal ??= reason;
  }

  /** The next call's index, or null when the session has had all it may. */
  takeCall(): number | null {
    if (this.started >= this.options.maxCalls) return null;
    return this.started++;
  }
}

function errorBody(message: string, field: string | null = null) {
  return { error: { message, type: 'invalid_request_error', param: field, code: null } };
}

function json(status: number, body: unknown): Response {
  return Response.json(body, { status });
}

export class Gateway {
  private readonly sessions = new Map<string, GatewaySession>();
  private readonly byKey = new Map<string, GatewaySession>();
  private counter = 0;

  private constructor(private readonly server: Server<undefined>) {}

  /** Starts the gateway on a free loopback port. */
  static start(): Gateway {
    let gateway: Gateway | null = null;
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      // a reply is generated before it is sent, which may take longer than Bun's 10 s default
      idleTimeout: 0,
      maxRequestBodySize: MAX_BODY_BYTES * 8,
      fetch: (request) => gateway!.handle(request),
    });
    gateway = new Gateway(server);
    return gateway;
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** A new session: its base URL and key are what the agent is given. */
  open(options: SessionOptions): GatewaySession {
    const id = `e${++this.counter}`;
    const key = `agentic-${randomBytes(18).toString('base64url')}`;
    const session = new GatewaySession(id, key, `${this.url}/s/${id}/v1`, options);
    this.sessions.set(id, session);
    this.byKey.set(key, session);
    return session;
  }

  /** Ends a session and forgets it: later calls with its URL or key are refused. */
  close(session: GatewaySession): void {
    session.end();
    this.sessions.delete(session.id);
    this.byKey.delete(session.key);
  }

  async stop(): Promise<void> {
    for (const session of this.sessions.values()) session.end();
    await this.server.stop(true);
  }

  private async handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const match = /^\/s\/([^/]+)\/v1\/(chat\/completions|models)$/.exec(path);
    if (!match) return json(404, errorBody(`no endpoint ${path}; an episode's base URL is /s/<session>/v1`));
    const session = this.sessions.get(match[1]!);
    if (!session) return json(410, errorBody(`session ${match[1]} is not open: its episode is over (or never was)`));
    const key = /^Bearer\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]?.trim() ?? null;
    if (key !== session.key) {
      const other = key !== null && this.byKey.has(key);
      session.flag(other ? 'the agent called the model with the key of another episode' : 'the agent called the model without its episode key');
      return json(
        401,
        errorBody(other ? "this key belongs to another episode's session" : 'missing or wrong key: use the OPENAI_API_KEY the episode was given'),
      );
    }
    if (Date.now() > session.options.deadline) {
      session.flag('the agent called the model after its deadline');
      return json(408, errorBody("the episode's deadline has passed"));
    }
    if (match[2] === 'models') {
      return json(200, { object: 'list', data: [{ id: session.options.model, object: 'model', created: 0, owned_by: 'agentic' }] });
    }
    if (request.method !== 'POST') {
      session.refuse('chat/completions takes POST');
      return json(405, errorBody('chat/completions takes POST'));
    }
    const size = Number(request.headers.get('content-length') ?? Number.NaN);
    const body = Number.isFinite(size) && size > MAX_BODY_BYTES ? null : await request.text();
    if (body === null || body.length > MAX_BODY_BYTES) {
      const bytes = body === null ? size : body.length;
      session.flag(`the agent sent a request of ${bytes} bytes (the gateway takes at most ${MAX_BODY_BYTES})`);
      return json(413, errorBody(`the body is ${bytes} bytes; at most ${MAX_BODY_BYTES} are taken`));
    }
    try {
      return await this.complete(session, body);
    } catch (error) {
      if (error instanceof RequestError) {
        session.refuse(error.message);
        return json(error.status, errorBody(error.message, error.field));
      }
      session.flag(`the gateway failed on a call: ${firstLine(error)}`);
      return json(500, errorBody(firstLine(error)));
    }
  }

  private async complete(session: GatewaySession, text: string): Promise<Response> {
    const body = parseBody(ChatCompletionsBody, text, { hints: CHAT_HINTS });
    checkModel(body.model, session.options.model);
    const turn = chatTurn(body, session.options.tokenizer);
    const index = session.takeCall();
    if (index === null) {
      session.flag(`the agent made more than ${session.options.maxCalls} model calls`);
      return json(429, errorBody(`this episode allows ${session.options.maxCalls} model calls`));
    }
    const outcome = await session.options.generate(turn, index);
    if ('failure' in outcome) {
      session.flag(outcome.failure);
      return json(outcome.status, errorBody(outcome.failure));
    }
    const { generation } = outcome;
    if (session.ended) return json(410, errorBody('the episode ended while this call was answered'));
    session.calls.push({ promptIds: turn.promptIds, responseIds: generation.tokens, logProbs: generation.logProbs, streamed: turn.stream });
    const message = assistantMessage(generation.text, turn.readCalls, (i) => `call_${session.id}_${index}_${i}`);
    const context = {
      id: `chatcmpl-${session.id}-${index}`,
      model: session.options.model,
      created: Math.floor(Date.now() / 1000),
      piece: session.options.piece,
    };
    if (turn.stream) {
      return new Response(chatStream(turn, generation, message, context), {
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
      });
    }
    return json(200, chatResponse(turn, generation, message, context));
  }
}
