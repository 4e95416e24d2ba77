/**
 * A calculator agent written with the official `openai` client, as you would write it for any
 * OpenAI-compatible server: function calling with the tools the env offers, until the model
 * answers without a call. agentic trains it as it is (configs/calculator_openai_agent.yaml,
 * examples/agents/README.md).
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

interface Context {
  baseUrl: string;
  apiKey: string;
  model: string;
  question: string;
  tools: ChatCompletionTool[];
  callTool(name: string, args: unknown): Promise<string>;
  signal: AbortSignal;
}

const MAX_TURNS = 3;

export async function run(ctx: Context): Promise<{ answer: string }> {
  const client = new OpenAI({ baseURL: ctx.baseUrl, apiKey: ctx.apiKey, maxRetries: 0 });
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Use the calculator.' },
    { role: 'user', content: ctx.question },
  ];
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const completion = await client.chat.completions.create({ model: ctx.model, messages, tools: ctx.tools }, { signal: ctx.signal });
    const message = completion.choices[0]!.message;
    messages.push(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return { answer: message.content ?? '' };
    for (const call of calls) {
      if (call.type !== 'function') continue;
      const output = await ctx.callTool(call.function.name, JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content: output });
    }
  }
  return { answer: '' };
}
