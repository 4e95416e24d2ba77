/**
 * `agentic mcp-tools [TOOL...]`: tool plugins (calculator, search and python_executor by default)
 * as an MCP server (docs/mcp_tools.md), so an outside agent, or an env of another run, can call
 * them: over stdio by default, or over streamable HTTP at http://127.0.0.1:PORT/mcp with --port.
 * Loopback only: the tools run code and read files for whoever reaches them, and nothing here
 * asks who that is.
 *
 * python_executor runs in the Python sandbox as it does in a run. When bwrap is unusable, a
 * python_executor named on the command line is refused in one line; the default set is served
 * without it, with a warning saying why (or add --python-sandbox unconfined).
 */
import pkg from '../../package.json';
import { firstLine, PluginError, UsageError } from '../errors';
import { PYTHON_SANDBOX_MODES, type PythonSandboxMode } from '../sandbox/modes';
import type { ToolPlugin } from '../sdk/types';
import { didYouMean } from '../util/suggest';
import { debugArg } from './args';
import { command } from './command';
import { log } from './log';

export const DEFAULT_TOOLS = ['calculator', 'search', 'python_executor'];
const DEFAULT_TIMEOUT_MS = 10_000;

function intFlag(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${name}: expected an integer from ${min} to ${max}, got '${value}'`);
  return n;
}

/** The tools asked for; unknown names are a usage error that lists the tools. */
function pickTools(names: readonly string[], known: ReadonlyMap<string, ToolPlugin>): ToolPlugin[] {
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new UsageError(`tool '${twice}' is named twice`);
  return names.map((name) => {
    const tool = known.get(name);
    if (!tool) throw new UsageError(`unknown tool '${name}'${didYouMean(name, known.keys())}; the tools are: ${[...known.keys()].join(', ')}`);
    return tool;
  });
}

/** The tools to serve once the sandbox is checked: sandboxed ones need bwrap (or unconfined). */
async function checkSandbox(tools: ToolPlugin[], mode: PythonSandboxMode, named: boolean): Promise<ToolPlugin[]> {
  const { sandboxRefusal, sandboxSupport } = await import('../sandbox/python');
  const sandboxed = tools.filter((tool) => tool.sandboxed);
  if (sandboxed.length === 0) return tools;
  if (mode === 'unconfined') {
    const { UNCONFINED_WARNING } = await import('./sandbox_check');
    log.warn(UNCONFINED_WARNING);
    return tools;
  }
  const needed = ` (needed by ${sandboxed.map((tool) => `tool ${tool.name}`).join(', ')})`;
  let problem: string;
  try {
    const support = await sandboxSupport();
    if (!support.problem) return tools;
    problem = sandboxRefusal(support, needed);
  } catch (error) {
    // no Python interpreter at all: as unusable as a missing bwrap
    if (!(error instanceof PluginError)) throw error;
    problem = error.message;
  }
  if (named) throw new PluginError(problem);
  log.warn(`serving without ${sandboxed.map((tool) => tool.name).join(', ')}: ${problem}`);
  return tools.filter((tool) => !tool.sandboxed);
}

export default command(
  {
    meta: { name: 'mcp-tools', description: 'Serve tool plugins (calculator, search, python_executor) as an MCP server, over stdio or HTTP on loopback' },
    args: {
      tools: { type: 'positional', required: false, valueHint: 'tool...', description: `Tools to serve (default: ${DEFAULT_TOOLS.join(', ')})` },
      port: { type: 'string', valueHint: 'n', description: 'Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (0 picks a free port)' },
      host: { type: 'string', valueHint: 'address', description: 'Loopback address to listen on with --port (default 127.0.0.1)' },
      plugins: { type: 'string', valueHint: 'path,...', description: 'Plugin files or folders to load, whose tools can then be named' },
      'tool-timeout-ms': { type: 'string', valueHint: 'ms', description: `Time limit of one call (default ${DEFAULT_TIMEOUT_MS})` },
      'python-sandbox': {
        type: 'string',
        valueHint: 'bwrap|unconfined',
        description: "How python_executor contains code: bwrap (default) or unconfined, as the config's python_sandbox",
      },
      ...debugArg,
    },
    async run({ args }) {
      const timeoutMs = intFlag('tool-timeout-ms', args['tool-timeout-ms'], DEFAULT_TIMEOUT_MS, 1, 2 ** 31 - 1);
      const port = args.port === undefined ? null : intFlag('port', args.port, 0, 0, 65535);
      const host = args.host ?? '127.0.0.1';
      if (args.host !== undefined && port === null) throw new UsageError('--host needs --port (without it the tools are served over stdio)');
      const { isLoopback } = await import('../util/loopback');
      if (!isLoopback(host)) {
        throw new UsageError(
          `--host ${host} is not a loopback address: mcp-tools serves this machine only (127.0.0.1, localhost or ::1), as it asks no one for a key`,
        );
      }
      const mode = (args['python-sandbox'] ?? 'bwrap') as PythonSandboxMode;
      if (!PYTHON_SANDBOX_MODES.includes(mode)) throw new UsageError(`--python-sandbox: expected ${PYTHON_SANDBOX_MODES.join(' or ')}, got '${mode}'`);

      const { PluginHost } = await import('../host/plugin_host');
      const plugins = new PluginHost();
      const paths = (args.plugins ?? '').split(',').filter((path) => path.trim() !== '');
      await plugins.loadAll(paths);
      const known = new Map(plugins.registry.list('tool').map(({ definition }) => [definition.name, definition as ToolPlugin]));
      const named = args._.length > 0;
      const tools = await checkSandbox(pickTools(named ? args._ : DEFAULT_TOOLS, known), mode, named);

      const { serveHttp, serveStdio, toolServer } = await import('../serve/mcp_server');
      const makeServer = () => toolServer(tools, { timeoutMs, version: pkg.version, pythonSandbox: mode });
      const names = tools.map((tool) => tool.name).join(', ');
      if (port === null) {
        log.info(`serving ${names} over stdio (MCP)`);
        await serveStdio(makeServer);
        return 0;
      }
      let server: Awaited<ReturnType<typeof serveHttp>>;
      try {
        server = await serveHttp(makeServer, host, port);
      } catch (error) {
        throw new UsageError(`cannot listen on ${host}:${port}: ${firstLine(error)}`);
      }
      log.info(`serving ${names} on ${server.url} (MCP, streamable HTTP)`);
      await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
      await server.stop();
      return 0;
    },
  },
  `TOOLS
  The built-in tools (see 'agentic plugins'), and those of --plugins files. A call is checked
  against the tool's schema and runs under --tool-timeout-ms; an error is a result with isError.

SECURITY
  Loopback only, and no keys: anyone on this machine who reaches the port may call the tools.
  python_executor runs in the bwrap sandbox; if bwrap is unusable, the default set is served
  without it (a warning says why) and a python_executor named here is refused.

EXAMPLES
  agentic mcp-tools                                  stdio, for an MCP client that starts it
  agentic mcp-tools calculator --port 8765           http://127.0.0.1:8765/mcp
  agentic mcp-tools my_tool --plugins ./my_tools.ts  a tool plugin of yours

In an env's tools: (tool_use), name it as {mcp: {command: agentic, args: [mcp-tools]}} (docs/mcp_tools.md).`,
);
