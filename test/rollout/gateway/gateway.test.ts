import { afterAll, describe, expect, test } from 'bun:test';
import { Gateway, type GatewaySession } from '../../../src/rollout/gateway/gateway';
import { chat, tokenizer } from '../helpers';

const gateway = Gateway.start();
afterAll(() => gateway.stop());

/** A session whose every call is answered with "ok". */
function open(deadline = Date.now() + 60_000): GatewaySession {
  const tokens = [...tokenizer.encode('ok', { addSpecialTokens: false }), chat.stopTokenIds[0]!];
  return gateway.open({
    model: 'agentic-policy',
    tokenizer,
    piece: chat.responsePiece,
    deadline,
    maxCalls: 4,
    generate: async (turn) => ({
      generation: { text: 'ok', tokens, logProbs: tokens.map(() => -1), finish: 'stop' as const, promptTokens: turn.promptIds.length },
    }),
  });
}

function post(session: GatewaySession, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${session.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'agentic-policy', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

async function errorOf(response: Response): Promise<{ message: string; param: string | null; type: string; code: null }> {
  return ((await response.json()) as { error: { message: string; param: string | null; type: string; code: null } }).error;
}

describe('the gateway over HTTP', () => {
  test('an unknown field is a 400 naming it, and costs nothing: the agent may send the request again without it', async () => {
    const session = open();
    const unknown = await post(session, { frobnicate: true });
    expect(unknown.status).toBe(400);
    expect(await errorOf(unknown)).toMatchObject({ param: 'frobnicate', message: expect.stringContaining("unknown field 'frobnicate'") });
    // a field the Vercel AI SDK can send is refused with the reason
    const effort = await post(session, { reasoning_effort: 'low' });
    expect(effort.status).toBe(400);
    expect((await errorOf(effort)).message).toBe(
      "unknown field 'reasoning_effort' (reasoning effort is not served: the policy samples as the run's generating_args say)",
    );
    // structured output is refused by name too, and every refusal is counted (gateway_refused)
    const structured = await post(session, { response_format: { type: 'json_object' } });
    expect(structured.status).toBe(400);
    expect((await errorOf(structured)).message).toBe("unknown field 'response_format' (structured output is not served)");
    expect(session.problem).toBeNull();
    expect([session.refused, session.firstRefusal]).toEqual([3, expect.stringContaining("unknown field 'frobnicate'")]);
    const fixed = await post(session, {});
    expect(fixed.status).toBe(200);
    expect(((await fixed.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('ok');
    expect(session.calls).toHaveLength(1);
    gateway.close(session);
  });

  test("a model other than the session's is refused as agentic serve refuses it (404), and costs nothing; no model is the session's", async () => {
    const session = open();
    const other = await post(session, { model: 'gpt-4o-mini' });
    expect(other.status).toBe(404);
    expect(await errorOf(other)).toEqual({
      message: "model 'gpt-4o-mini' is not served here; this server serves 'agentic-policy'",
      type: 'invalid_request_error',
      param: 'model',
      code: null,
    });
    expect([session.problem, session.refused]).toEqual([null, 1]);
    const named = await post(session, {});
    const unnamed = await post(session, { model: null });
    expect([named.status, unnamed.status]).toEqual([200, 200]);
    expect(((await named.json()) as { model: string }).model).toBe('agentic-policy');
    expect(session.calls).toHaveLength(2);
    gateway.close(session);
  });

  test("a call after the session's deadline is refused (408) and costs the episode", async () => {
    const session = open(Date.now() - 1);
    const late = await post(session, {});
    expect(late.status).toBe(408);
    expect(session.problem).toBe('the agent called the model after its deadline');
    expect(session.calls).toHaveLength(0);
    gateway.close(session);
  });

  test('a closed session answers 410 to its own key', async () => {
    const session = open();
    gateway.close(session);
    expect((await post(session, {})).status).toBe(410);
  });
});
