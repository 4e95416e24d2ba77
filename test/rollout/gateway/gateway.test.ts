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

async function errorOf(response: Response): Promise<{ message: string; param: string | null }> {
  return ((await response.json()) as { error: { message: string; param: string | null } }).error;
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
    expect(session.problem).toBeNull();
    const fixed = await post(session, {});
    expect(fixed.status).toBe(200);
    expect(((await fixed.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('ok');
    expect(session.calls).toHaveLength(1);
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
