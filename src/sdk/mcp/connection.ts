/**
 * One client connection to an MCP server, through the official SDK's Client: the server started
 * (stdio) or reached (streamable HTTP), its tools listed, then calls. A server that dies (its
 * process exits, its endpoint stops answering) leaves the connection dead: the calls in flight
 * and any later ones throw ToolServerLost, and the run's pool (./pool.ts) opens a new connection
 * before the next env is built.
 *
 * The SDK loads at the first connection (a quarter of a second), not with every command.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { firstLine } from '../../errors';
import type { ListedTool, McpServer, ToolOutput } from '../types';
import { MCP_START_TIMEOUT_S, serverLabel, type McpServerConfig } from './servers';

/** The key of a result's `_meta` that carries a tool's extras for the logs (what `agentic mcp-tools` sends). */
export const INFO_META_KEY = 'agentic/info';

/**
 * A call's MCP server is gone (its process died, its endpoint stopped answering): not the
 * tool's error but the env's, so the episode ends (env_failure) and the next one reconnects.
 */
export class ToolServerLost extends Error {
  override readonly name = 'ToolServerLost';
}

/** The SDK's default limit is one minute; a call's own signal (the env's tool time limit) is what stops it. */
const CALL_TIMEOUT_MS = 24 * 3600 * 1000;
/** How much of a stdio server's stderr a failure to start quotes. */
const STDERR_TAIL_CHARS = 300;

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

async function loadSdk() {
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }, { ErrorCode, McpError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Client, StdioClientTransport, StreamableHTTPClientTransport, ErrorCode, McpError };
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

export class McpConnection implements McpServer {
  private lost: string | null = null;

  private constructor(
    private readonly sdk: Sdk,
    readonly label: string,
    private readonly client: Client,
    private readonly transport: StdioClientTransport | StreamableHTTPClientTransport,
    readonly tools: readonly ListedTool[],
  ) {
    client.onclose = () => {
      this.lost ??= 'the connection closed';
    };
  }

  /**
   * Starts or reaches the server and lists its tools, all within its start_timeout_s; throws one
   * line naming it when that fails, or it lists none. A stdio server that failed to start is killed
   * at once: it has nothing to save, and asking it to exit first would take seconds more.
   */
  static async open(server: McpServerConfig): Promise<McpConnection> {
    const label = serverLabel(server);
    const sdk = await loadSdk();
    const { Client, StdioClientTransport, StreamableHTTPClientTransport, ErrorCode, McpError } = sdk;
    const limitS = server.start_timeout_s ?? MCP_START_TIMEOUT_S;
    const deadline = performance.now() + limitS * 1000;
    const left = () => Math.max(1, deadline - performance.now());
    let stderr = '';
    const transport =
      server.url !== undefined
        ? new StreamableHTTPClientTransport(new URL(server.url))
        : new StdioClientTransport({ command: server.command!, args: server.args, env: server.env, cwd: server.cwd, stderr: 'pipe' });
    if (transport instanceof StdioClientTransport) transport.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4096)));
    const client = new Client({ name: 'agentic', version: '1' });
    let awaiting = "answer MCP's initialize";
    let pid: number | null = null;
    try {
      const connecting = client.connect(transport, { timeout: left() });
      // connect() spawns the process before its first await; an initialize that fails makes the
      // SDK close it in the background, asking it to exit for seconds, which a command that ends
      // right after would leave running: its pid is taken here to kill it
      pid = transport instanceof StdioClientTransport ? transport.pid : null;
      await connecting;
      awaiting = 'list its tools';
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: left() });
        for (const tool of page.tools) tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema });
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      if (tools.length === 0) throw new Error('it lists no tools');
      return new McpConnection(sdk, label, client, transport, tools);
    } catch (error) {
      if (pid !== null) killQuietly(pid);
      await client.close().catch(() => {});
      const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
      const why = timedOut
        ? `it did not ${awaiting} within ${limitS} s (mcp.start_timeout_s${server.url === undefined ? '; is the command an MCP server over stdio?' : ''})`
        : firstLine(error);
      const said = stderr.trim().split('\n').at(-1)?.trim().slice(-STDERR_TAIL_CHARS);
      throw new Error(`${label} cannot ${server.url === undefined ? 'start' : 'be reached'}: ${why}${said ? ` (its stderr: ${said})` : ''}`);
    }
  }

  /** Whether the server still answers, as far as this connection knows. */
  get alive(): boolean {
    return this.lost === null;
  }

  /** The process of a stdio server, while it runs. */
  get pid(): number | null {
    return this.transport instanceof this.sdk.StdioClientTransport ? this.transport.pid : null;
  }

  /**
   * Calls a tool. Its error result (isError) throws an Error with its text; a server that is
   * gone throws ToolServerLost; a call aborted by `signal` rejects with the abort's reason.
   */
  async call(name: string, args: unknown, signal: AbortSignal): Promise<ToolOutput> {
    if (this.lost !== null) throw new ToolServerLost(`${this.label} is gone: ${this.lost}`);
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await this.client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, { signal, timeout: CALL_TIMEOUT_MS });
    } catch (error) {
      if (signal.aborted) throw error;
      // the server answered with a JSON-RPC error: the call's fault, not the server's
      if (error instanceof this.sdk.McpError && error.code !== this.sdk.ErrorCode.ConnectionClosed) throw new Error(firstLine(error));
      this.lost ??= firstLine(error);
      throw new ToolServerLost(`${this.label} is gone: ${this.lost}`);
    }
    const content = Array.isArray(result.content) ? (result.content as Array<{ type: string; text?: string }>) : [];
    const text = content.map((part) => (part.type === 'text' ? (part.text ?? '') : `[${part.type} content]`)).join('\n');
    if (result.isError) throw new Error(text.trim() === '' ? 'the tool reported an error' : text);
    const info = (result._meta as Record<string, unknown> | undefined)?.[INFO_META_KEY];
    return typeof info === 'object' && info !== null ? { observation: text, info: info as Record<string, unknown> } : text;
  }

  /** Closes the connection; a stdio server is asked to exit (its stdin closed), then stopped. */
  async close(): Promise<void> {
    this.lost ??= 'closed';
    await this.client.close().catch(() => {});
  }
}
