/**
 * Tool plugins as an MCP server (`agentic mcp-tools`, docs/mcp_tools.md), so an outside agent can
 * call them. Built on the SDK's low-level Server rather than McpServer, whose tools list their
 * arguments as its own conversion of zod (draft-07, with $schema): here each tool lists the JSON
 * schema an env shows the policy (argumentsSchema), so an env that names this server renders
 * its tools exactly as it renders the built-ins. A call is checked against the tool's zod schema
 * and runs under a time limit; whatever goes wrong is a result with isError and one line of text.
 *
 * Two transports: stdio (one client, the process that started us; we exit when it closes our
 * stdin), and streamable HTTP at /mcp on loopback, a session per client.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { firstLine } from '../errors';
import { pluginTool } from '../sdk/agent_tools';
import { INFO_META_KEY } from '../sdk/mcp/connection';
import type { PythonSandboxMode } from '../sandbox/modes';
import type { AgentTool, ToolPlugin } from '../sdk/types';

export interface ToolServerOptions {
  /** Time limit of one call, in ms. */
  timeoutMs: number;
  version: string;
  /** How the tools' runPython contains code (--python-sandbox). */
  pythonSandbox: PythonSandboxMode;
}

const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** The result of one call: the tool's output, or its error as one line. */
export async function callResult(
  tool: AgentTool | undefined,
  name: string,
  args: unknown,
  known: readonly string[],
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<CallToolResult> {
  if (!tool) return errorResult(`there is no tool '${name}'; the tools are: ${known.join(', ')}`);
  const checked = tool.check(args ?? {});
  if (!checked.ok) return errorResult(`invalid arguments for ${name}: ${checked.problems.join('; ')}`);
  const controller = new AbortController();
  const abort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener('abort', abort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CallToolResult>((done) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`${name} timed out`));
      done(errorResult(`${name} did not finish within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
  });
  const call = tool.call(checked.args, { signal: controller.signal }).then(
    (output): CallToolResult => {
      const text = typeof output === 'string' ? output : output?.observation;
      if (typeof text !== 'string') return errorResult(`${name} returned no observation`);
      const info = typeof output === 'object' ? output.info : undefined;
      return { content: [{ type: 'text', text }], ...(info ? { _meta: { [INFO_META_KEY]: info } } : {}) };
    },
    (error: unknown) => errorResult(firstLine(error) || 'no message'),
  );
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', abort);
  }
}

/** A Server (not yet connected to a transport) that lists and runs `plugins`. */
export async function toolServer(plugins: readonly ToolPlugin[], options: ToolServerOptions): Promise<Server> {
  const [{ Server }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const tools = new Map(plugins.map((plugin) => [plugin.name, pluginTool(plugin, options.pythonSandbox)]));
  const server = new Server({ name: 'agentic-tools', version: options.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools.values()].map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.schema as never })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callResult(tools.get(request.params.name), request.params.name, request.params.arguments, [...tools.keys()], {
      timeoutMs: options.timeoutMs,
      signal: extra.signal,
    }),
  );
  return server;
}

/** Serves over this process's stdin and stdout until the client closes stdin (or SIGTERM). */
export async function serveStdio(makeServer: () => Promise<Server>): Promise<void> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const server = await makeServer();
  const closed = new Promise<void>((done) => {
    process.stdin.once('end', done);
    process.stdin.once('close', done);
    process.once('SIGTERM', done);
  });
  await server.connect(new StdioServerTransport());
  await closed;
  await server.close();
}

export interface HttpToolServer {
  url: string;
  stop(): Promise<void>;
}

/** Serves streamable HTTP at http://host:port/mcp, a Server and transport per session; `host` is loopback (the caller checks). */
export async function serveHttp(makeServer: () => Promise<Server>, host: string, port: number): Promise<HttpToolServer> {
  const { WebStandardStreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js');
  type Transport = InstanceType<typeof WebStandardStreamableHTTPServerTransport>;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const sessions = new Map<string, { transport: Transport; server: Server }>();
  // DNS rebinding protection: a web page that resolves its own name to 127.0.0.1 sends its name as Host
  let allowedHosts: string[] = [];
  const listener = Bun.serve({
    hostname: bare,
    port,
    // a call's own time limit bounds it; Bun's default idle limit (10 s) would cut a long one short
    idleTimeout: 0,
    async fetch(request) {
      if (new URL(request.url).pathname !== '/mcp') return new Response('not found: the MCP endpoint is /mcp\n', { status: 404 });
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const session = sessions.get(id);
        if (!session) return Response.json({ jsonrpc: '2.0', error: { code: -32001, message: 'session not found' }, id: null }, { status: 404 });
        return session.transport.handleRequest(request);
      }
      const server = await makeServer();
      const transport: Transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableDnsRebindingProtection: true,
        allowedHosts,
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, { transport, server });
        },
        onsessionclosed: (sessionId) => {
          sessions.delete(sessionId);
        },
      });
      await server.connect(transport);
      return transport.handleRequest(request);
    },
  });
  allowedHosts = [bare.includes(':') ? `[${bare}]` : bare, 'localhost', '127.0.0.1', '[::1]'].map((name) => `${name}:${listener.port}`);
  return {
    url: `http://${allowedHosts[0]}/mcp`,
    async stop() {
      await Promise.all([...sessions.values()].map(({ server }) => server.close().catch(() => {})));
      sessions.clear();
      await listener.stop(true);
    },
  };
}
