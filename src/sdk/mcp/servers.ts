/**
 * MCP servers as an env's `tools:` names them (tool_use's, the agent env's), beside the names of
 * tool plugins: a program spoken to over stdio, `{mcp: {command, args, env, cwd}}`, or a
 * streamable HTTP endpoint on this machine, `{mcp: {url}}`; `include` picks some of its tools.
 * A server config is one connection per process (its key), however many envs name it.
 */
import { basename } from 'node:path';
import { z } from 'zod';
import { isLoopback } from '../../util/loopback';

/** Why `text` is not the URL of an MCP endpoint on loopback, or null. */
export function mcpUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `'${text}' is not a URL (expected one like http://127.0.0.1:8000/mcp)`;
  }
  if (url.protocol !== 'http:') return `'${text}' is not an http:// URL (MCP servers over HTTP are reached on loopback only)`;
  if (!isLoopback(url.hostname)) return `'${text}' is not on loopback (127.0.0.1, localhost or [::1]); only this machine's MCP servers can be named`;
  return null;
}

/**
 * How long a server may take to start (or answer) and list its tools, unless its config says: an
 * MCP server answers its initialize in about a second, so one that has not within this never will.
 */
export const MCP_START_TIMEOUT_S = 10;

export const McpServerShape = z
  .strictObject({
    command: z.string().min(1).optional().describe('The program that serves MCP over stdio (started by agentic, one process per run)'),
    args: z.array(z.string()).optional().describe("The program's arguments"),
    env: z
      .record(z.string(), z.string())
      .optional()
      .describe("Environment variables of the program, besides the MCP SDK's default few (HOME, LOGNAME, PATH, SHELL, TERM, USER)"),
    cwd: z.string().min(1).optional().describe("The program's working folder (default: the run's)"),
    url: z.string().optional().describe('A streamable HTTP MCP endpoint on loopback, e.g. http://127.0.0.1:8000/mcp'),
    start_timeout_s: z
      .number()
      .positive()
      .optional()
      .describe(`How long the server may take to start (or answer) and list its tools, in seconds (default ${MCP_START_TIMEOUT_S})`),
  })
  .superRefine((server, context) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      context.addIssue({ code: 'custom', message: 'give either command (a stdio server) or url (an HTTP server on loopback), not both or neither' });
      return;
    }
    if (server.url !== undefined) {
      const problem = mcpUrlProblem(server.url);
      if (problem) context.addIssue({ code: 'custom', path: ['url'], message: problem });
      for (const key of ['args', 'env', 'cwd'] as const) {
        if (server[key] !== undefined)
          context.addIssue({ code: 'custom', path: [key], message: `${key} is for a stdio server (command); an HTTP server takes url only` });
      }
    }
  });

export type McpServerConfig = z.output<typeof McpServerShape>;

export const McpToolEntryShape = z.strictObject({
  mcp: McpServerShape.describe('An MCP server whose tools the policy may call (docs/mcp_tools.md)'),
  include: z.array(z.string().min(1)).min(1).optional().describe("The server's tools to offer, by name (default: all it lists)"),
});

export type McpToolEntry = z.output<typeof McpToolEntryShape>;

/** One entry of an env's `tools:` list: a tool plugin's name, or an MCP server. */
export const ToolEntryShape = z.union([z.string().min(1), McpToolEntryShape]);
export type ToolEntry = z.output<typeof ToolEntryShape>;

/** The `tools:` key of an env config: tool plugin names and MCP servers (docs/mcp_tools.md). */
export function toolEntries(defaults: readonly string[]) {
  return z
    .array(ToolEntryShape)
    .default([...defaults])
    .describe(
      'The tools the policy may call: tool plugin names (see `agentic plugins`), and MCP servers as {mcp: {command, args, env, cwd}} (stdio) or {mcp: {url}} (streamable HTTP on loopback), with include: [names] to pick some of their tools (docs/mcp_tools.md).',
    );
}

/** The identity of a server config: equal configs share one connection (their start time limit aside: the first opening's applies). */
export function serverKey(server: McpServerConfig): string {
  if (server.url !== undefined) return JSON.stringify({ url: server.url });
  const env = Object.entries(server.env ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify({ command: server.command, args: server.args ?? [], env, cwd: server.cwd ?? null });
}

/** How messages name a server: its URL, or its command line (cut short). */
export function serverLabel(server: McpServerConfig): string {
  if (server.url !== undefined) return `MCP server ${server.url}`;
  // the program's own name, not its folder: the arguments are what tells two servers apart
  const line = [basename(server.command!), ...(server.args ?? [])].join(' ');
  return `MCP server '${line.length > 120 ? `${line.slice(0, 117)}...` : line}'`;
}

/**
 * The MCP servers named anywhere in a (validated) env config: every value that is an MCP tool
 * entry, `{mcp: {...}}`. So the host connects an env's servers before it builds the env, whatever
 * key of its config holds them.
 */
export function mcpServersIn(value: unknown): McpServerConfig[] {
  if (Array.isArray(value)) return value.flatMap(mcpServersIn);
  if (typeof value !== 'object' || value === null) return [];
  if ('mcp' in value) {
    const parsed = McpToolEntryShape.safeParse(value);
    if (parsed.success) return [parsed.data.mcp];
  }
  return Object.values(value).flatMap(mcpServersIn);
}
