/**
 * Running an agent program for one episode: a module's `run(ctx)` in this process, or a command
 * line as a child process (the SDK's runAgentCommand). Either way the agent ends with its final
 * output: `{ answer, reward? }` or just the answer as a string (a module returns it; a command
 * prints it as JSON on its last line of standard output). The host checks that output (the SDK's
 * AgentOutput), so a wrong one fails the episode with what it was.
 */
import { pathToFileURL } from 'node:url';
import type { OpenAiTool } from 'agentic';

/** What a module agent's run() is given (docs/agents.md). */
export interface AgentContext {
  /** OpenAI's base URL for this episode (what OPENAI_BASE_URL would hold). */
  baseUrl: string;
  /** The key that identifies this episode (what OPENAI_API_KEY would hold). */
  apiKey: string;
  model: string;
  question: string;
  /** The dataset row without its hidden fields (the answer). */
  task: Record<string, unknown>;
  /** The tools the env offers, as OpenAI function definitions. */
  tools: OpenAiTool[];
  /** Calls one of `tools`; errors come back as text, as a tool message would show them. */
  callTool(name: string, args: unknown): Promise<string>;
  /** Date.now() by which the agent must be done. */
  deadline: number;
  /** Aborted when the episode's time is up. */
  signal: AbortSignal;
}

export type AgentModule = { run: (ctx: AgentContext) => unknown };

const modules = new Map<string, Promise<AgentModule>>();

/** The module at `path`, imported once; one without a run() function is an error. */
export function loadAgentModule(path: string): Promise<AgentModule> {
  let loaded = modules.get(path);
  if (!loaded) {
    loaded = import(pathToFileURL(path).href).then((mod: Record<string, unknown>) => {
      const run = mod.run ?? (mod.default as Record<string, unknown> | undefined)?.run;
      if (typeof run !== 'function') throw new Error(`${path}: no run(ctx) function exported`);
      return { run: run as AgentModule['run'] };
    });
    modules.set(path, loaded);
  }
  return loaded;
}
