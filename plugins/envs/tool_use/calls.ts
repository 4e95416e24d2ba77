/**
 * Running the tool calls of one turn. Each call's arguments are checked against the tool's zod
 * schema, the calls run concurrently, and each gets an AbortSignal that fires at its time limit.
 * Whatever goes wrong (an unreadable call, an unknown tool, bad arguments, a tool that throws or
 * runs out of time) becomes an error observation for the policy, never an exception; but an MCP
 * server that died (ToolServerLost) throws, so the episode ends as an env failure and the next
 * one reconnects.
 */
import { ToolServerLost, type ToolOutput } from 'agentic';
import type { ToolSpec } from './tools';

/** A tool call as an agent format read it from a response, before it is checked. */
export type CallRequest =
  /** `args` is the parsed JSON value, or a string when the policy wrote plain text. */
  { kind: 'call'; name: string; args: unknown } | { kind: 'malformed'; name: string | null; error: string };

export interface CallOutcome {
  /** The tool called, when the call named one. */
  name: string | null;
  /** What the policy sees: the tool's output, or an error that says what was wrong. */
  output: string;
  ok: boolean;
  /** Whether the call reached the tool (so its outcome is a tool message). */
  ran: boolean;
  /** A terminal tool answered: the episode ends with `output` as the final answer. */
  terminal: boolean;
  /** Extras the tool returned for the logs. */
  info?: Record<string, unknown>;
}

export interface CallLimits {
  timeoutMs: number;
  maxObservationChars: number;
}

export function runCalls(requests: readonly CallRequest[], tools: ReadonlyMap<string, ToolSpec>, limits: CallLimits): Promise<CallOutcome[]> {
  return Promise.all(requests.map((request) => runCall(request, tools, limits)));
}

const failed = (name: string | null, error: string, ran = false): CallOutcome => ({ name, output: `Error: ${error}`, ok: false, ran, terminal: false });

async function runCall(request: CallRequest, tools: ReadonlyMap<string, ToolSpec>, limits: CallLimits): Promise<CallOutcome> {
  if (request.kind === 'malformed') return failed(request.name, request.error);
  const tool = tools.get(request.name);
  if (!tool) {
    const names = [...tools.keys()];
    return failed(request.name, `there is no tool '${request.name}'; the tools are: ${names.length > 0 ? names.join(', ') : '(none)'}`);
  }
  const args = argumentsObject(tool, request.args);
  if (typeof args === 'string') return failed(tool.name, args);
  const checked = tool.check(args);
  if (!checked.ok) return failed(tool.name, `invalid arguments for ${tool.name}: ${checked.problems.join('; ')}`);
  const result = await callWithTimeout(tool, checked.args, limits.timeoutMs);
  if (result.kind === 'lost') throw result.error;
  if (result.kind === 'timeout') return failed(tool.name, `${tool.name} did not finish within ${limits.timeoutMs} ms`, true);
  if (result.kind === 'threw') return failed(tool.name, `${tool.name} failed: ${result.message}`, true);
  const output = result.output;
  const observation = typeof output === 'string' ? output : typeof output?.observation === 'string' ? output.observation : null;
  if (observation === null) return failed(tool.name, `${tool.name} returned no observation`, true);
  const info = typeof output === 'object' && output.info ? output.info : undefined;
  return {
    name: tool.name,
    output: truncate(observation, limits.maxObservationChars),
    ok: true,
    ran: true,
    terminal: tool.terminal,
    ...(info ? { info } : {}),
  };
}

/** The arguments as an object, or why they cannot be one. Plain text goes to the tool's one text parameter. */
function argumentsObject(tool: ToolSpec, args: unknown): Record<string, unknown> | string {
  if (typeof args === 'string') {
    if (tool.textParameter) return { [tool.textParameter]: args };
    return `${tool.name} takes a JSON object of arguments, not plain text`;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return `the arguments of ${tool.name} must be a JSON object`;
  return args as Record<string, unknown>;
}

type CallResult = { kind: 'done'; output: ToolOutput } | { kind: 'threw'; message: string } | { kind: 'timeout' } | { kind: 'lost'; error: ToolServerLost };

async function callWithTimeout(tool: ToolSpec, args: unknown, timeoutMs: number): Promise<CallResult> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CallResult>((done) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`${tool.name} timed out`));
      done({ kind: 'timeout' });
    }, timeoutMs);
  });
  const call = tool.call(args, { signal: controller.signal }).then(
    (output): CallResult => ({ kind: 'done', output }),
    (error: unknown): CallResult => (error instanceof ToolServerLost ? { kind: 'lost', error } : { kind: 'threw', message: firstLine(error) }),
  );
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim() || 'no message';
}

export function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n... (${text.length - maxChars} more characters cut)`;
}
