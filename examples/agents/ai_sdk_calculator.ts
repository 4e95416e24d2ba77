/**
 * The calculator agent written with the Vercel AI SDK, as you would write it for any
 * OpenAI-compatible server: `streamText` (streaming, the SDK's default way) with the env's tools
 * wrapped as AI SDK tools, step after step until the model answers without a call. agentic trains
 * it as it is (examples/agents/README.md).
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, stepCountIs, streamText, type ToolSet, tool } from 'ai';

interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

interface Context {
  baseUrl: string;
  apiKey: string;
  model: string;
  question: string;
  tools: FunctionTool[];
  callTool(name: string, args: unknown): Promise<string>;
  signal: AbortSignal;
}

/** Model calls at most: a calculator call, then the answer, and one more try. */
const MAX_STEPS = 3;

/** The env's tools as AI SDK tools: the same JSON schemas, executed by the env. */
function sdkTools(ctx: Context): ToolSet {
  return Object.fromEntries(
    ctx.tools.map(({ function: f }) => [
      f.name,
      tool({
        description: f.description,
        inputSchema: jsonSchema(f.parameters ?? { type: 'object' }),
        execute: (args: unknown) => ctx.callTool(f.name, args),
      }),
    ]),
  );
}

export async function run(ctx: Context): Promise<{ answer: string }> {
  const provider = createOpenAICompatible({ name: 'agentic', baseURL: ctx.baseUrl, apiKey: ctx.apiKey, includeUsage: true });
  const result = streamText({
    model: provider.chatModel(ctx.model),
    system: 'Use the calculator.',
    prompt: ctx.question,
    tools: sdkTools(ctx),
    stopWhen: stepCountIs(MAX_STEPS),
    abortSignal: ctx.signal,
    maxRetries: 0,
  });
  // the last step's text: the reply that made no call
  return { answer: await result.text };
}
