/**
 * Talking to an OpenAI-compatible server: POST /chat/completions and GET /models under its API
 * root, as the openai client does with its baseURL. A base URL with a path (`.../v1`,
 * `https://openrouter.ai/api/v1`) is that root; a bare host (`http://127.0.0.1:8000`) gets `/v1`.
 *
 * Each request has its own time limit; a request that fails in a way that may pass (no answer, a
 * time-out, 408, 409, 429 or a 5xx) is tried again after a wait that doubles each time. Any other
 * refusal (a bad key, an unknown model) fails at once.
 */
export interface ServerOptions {
  baseUrl: string;
  apiKey: string | null;
  timeoutMs: number;
  maxRetries: number;
  /** The wait before the first retry; it doubles for each later one. */
  backoffMs: number;
}

export interface ChatRequest {
  model: string;
  prompt: string;
  maxTokens: number;
  temperature: number;
}

/** The API root that /chat/completions and /models hang from. */
export function apiRoot(baseUrl: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/v1' : path}`;
}

/** A failure the retry may cure. */
class Transient extends Error {}

const RETRIED_STATUSES = new Set([408, 409, 429]);

async function request(options: ServerOptions, path: string, body?: unknown): Promise<unknown> {
  const url = `${apiRoot(options.baseUrl)}${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.apiKey === null ? {} : { authorization: `Bearer ${options.apiKey}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    throw new Transient(timedOut ? `${url}: no answer within ${options.timeoutMs / 1000} s` : `${url}: ${firstLine(error)}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new Transient(`${url}: the answer broke off: ${firstLine(error)}`);
  }
  if (!response.ok) {
    const why = `${url}: HTTP ${response.status}${text.trim() ? `: ${firstLine(text).slice(0, 200)}` : ''}`;
    throw response.status >= 500 || RETRIED_STATUSES.has(response.status) ? new Transient(why) : new Error(why);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Transient(`${url}: the answer is not JSON: ${firstLine(text).slice(0, 200)}`);
  }
}

/** Runs `attempt` until it succeeds, fails for good, or has been retried maxRetries times. */
async function withRetries<T>(options: ServerOptions, attempt: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof Transient) || retry >= options.maxRetries) {
        const tries = retry + 1;
        throw new Error(`${error instanceof Error ? error.message : String(error)}${tries > 1 ? ` (after ${tries} tries)` : ''}`);
      }
      await Bun.sleep(options.backoffMs * 2 ** retry);
    }
  }
}

/** The reply's text: the first choice's message content. */
export async function chatCompletion(options: ServerOptions, chat: ChatRequest): Promise<string> {
  const body = {
    model: chat.model,
    messages: [{ role: 'user', content: chat.prompt }],
    max_tokens: chat.maxTokens,
    temperature: chat.temperature,
  };
  const answer = await withRetries(options, () => request(options, '/chat/completions', body));
  const content = (answer as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content;
  // a reply without text (a reasoning model that ran out of tokens) is a reply that gives no score
  return typeof content === 'string' ? content : '';
}

/** The id of the first model the server lists at /models. */
export async function firstModel(options: ServerOptions): Promise<string> {
  const answer = await withRetries(options, () => request(options, '/models'));
  const id = (answer as { data?: Array<{ id?: unknown }> }).data?.[0]?.id;
  if (typeof id !== 'string') throw new Error(`${apiRoot(options.baseUrl)}/models lists no model; set the judge's model`);
  return id;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}
