/**
 * A small real OpenAI-compatible server for the judge's tests: /v1/chat/completions and /v1/models
 * answered as OpenAI answers them, with what each test needs to watch (the requests, the most in
 * flight at once) and to vary (the reply, a status, a delay) per request.
 */
import type { Server } from 'bun';

export interface JudgeRequest {
  path: string;
  authorization: string | null;
  body: { model: string; messages: Array<{ role: string; content: string }>; max_tokens: number; temperature: number } | null;
}

/** What the server does with the n-th chat request (0-based): a reply's text, or a status to fail with. */
export type Behaviour = (request: JudgeRequest, n: number) => { reply?: string; status?: number; delayMs?: number };

export interface JudgeServer {
  url: string;
  requests: JudgeRequest[];
  /** Chat requests only. */
  chats(): JudgeRequest[];
  maxInFlight: number;
  behave(behaviour: Behaviour): void;
  stop(): void;
}

export function startJudgeServer(models: readonly string[] = ['judge-model', 'other-model']): JudgeServer {
  let behaviour: Behaviour = () => ({ reply: 'Correct. Score: 1' });
  let inFlight = 0;
  const state: JudgeServer = {
    url: '',
    requests: [],
    chats: () => state.requests.filter((r) => r.path === '/v1/chat/completions'),
    maxInFlight: 0,
    behave: (next) => {
      behaviour = next;
    },
    stop: () => server.stop(true),
  };
  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = req.method === 'POST' ? ((await req.json()) as JudgeRequest['body']) : null;
      const request: JudgeRequest = { path, authorization: req.headers.get('authorization'), body };
      state.requests.push(request);
      if (path === '/v1/models') return Response.json({ object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'test' })) });
      if (path !== '/v1/chat/completions') return Response.json({ error: { message: `no route ${path}` } }, { status: 404 });
      const n = state.chats().length - 1;
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      try {
        const { reply, status, delayMs } = behaviour(request, n);
        if (delayMs) await Bun.sleep(delayMs);
        if (status) return Response.json({ error: { message: `failing with ${status}`, type: 'server_error' } }, { status });
        return Response.json({
          id: `chatcmpl-${n}`,
          object: 'chat.completion',
          created: 0,
          model: body!.model,
          choices: [{ index: 0, message: { role: 'assistant', content: reply ?? '' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      } finally {
        inFlight--;
      }
    },
  });
  state.url = `http://127.0.0.1:${server.port}`;
  return state;
}
