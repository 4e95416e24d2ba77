/**
 * An outside agent for one seat of a two-player game, written with the official `openai` client as
 * you would write it for any OpenAI-compatible server: at each of its turns agentic calls act(ctx)
 * with the seat's rules and what it sees, the agent asks the model, and its reply is the move.
 * agentic answers the calls with the policy it trains and trains on them as that seat's rows
 * (custom_envs.<tag>.seats: {O: agent}, seat_agent: examples/agents/openai_game_seat.ts;
 * docs/multi_agent.md#an-outside-agent-in-a-seat).
 */
import OpenAI from 'openai';

interface SeatContext {
  baseUrl: string;
  apiKey: string;
  model: string;
  seat: string;
  instruction: string;
  observation: string;
  signal: AbortSignal;
}

export async function act(ctx: SeatContext): Promise<string> {
  const client = new OpenAI({ baseURL: ctx.baseUrl, apiKey: ctx.apiKey, maxRetries: 0 });
  const completion = await client.chat.completions.create(
    {
      model: ctx.model,
      messages: [
        { role: 'system', content: ctx.instruction },
        { role: 'user', content: ctx.observation },
      ],
    },
    { signal: ctx.signal },
  );
  return completion.choices[0]?.message.content ?? '';
}
