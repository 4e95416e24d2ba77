/**
 * The process's MCP connections: one per distinct server config, shared by every env that names
 * it (a stdio server and an HTTP endpoint both take concurrent calls). The host opens an env's
 * servers before it builds the env (connectMcpServersIn: at config validation, and before each
 * fresh env instance, which reopens a server that died); the env's constructor, synchronous,
 * finds them here. closeMcpServers ends them when the command ends, and an exit hook stops any
 * stdio server still running if the process exits another way.
 */
import { McpConnection } from './connection';
import { mcpServersIn, serverKey, serverLabel, type McpServerConfig } from './servers';

/** How long a server may take to start (or answer) and list its tools. */
export const MCP_START_TIMEOUT_MS = 30_000;

const connections = new Map<string, McpConnection>();
const opening = new Map<string, Promise<McpConnection>>();
let exitHooked = false;

/** Opens each server that is not open, or whose connection died; concurrent callers share one opening. */
export async function connectMcpServers(servers: readonly McpServerConfig[]): Promise<void> {
  await Promise.all(servers.map(connect));
}

/** Opens the MCP servers an env config names (mcpServersIn), before the env is built. */
export function connectMcpServersIn(envConfig: unknown): Promise<void> {
  return connectMcpServers(mcpServersIn(envConfig));
}

function connect(server: McpServerConfig): Promise<McpConnection> {
  const key = serverKey(server);
  const current = connections.get(key);
  if (current?.alive) return Promise.resolve(current);
  const pending = opening.get(key);
  if (pending) return pending;
  // a dead connection's process (if any is left) is reaped in the background
  if (current) void current.close();
  hookExit();
  const opened = McpConnection.open(server, MCP_START_TIMEOUT_MS)
    .then((connection) => {
      connections.set(key, connection);
      return connection;
    })
    .finally(() => opening.delete(key));
  opening.set(key, opened);
  return opened;
}

/** The connection of an opened server (alive or dead), for an env's constructor and its calls. */
export function connectedMcpServer(server: McpServerConfig): McpConnection {
  const connection = connections.get(serverKey(server));
  if (!connection) throw new Error(`${serverLabel(server)} is not connected (agentic connects the servers an env config names before it builds the env)`);
  return connection;
}

/** Closes every connection (stdio servers exit); the next connect opens them afresh. */
export async function closeMcpServers(): Promise<void> {
  const open = [...connections.values()];
  connections.clear();
  await Promise.all(open.map((connection) => connection.close()));
}

/** The processes of the stdio servers running now. */
export function mcpServerPids(): number[] {
  return [...connections.values()].flatMap((connection) => (connection.pid === null ? [] : [connection.pid]));
}

/** On any exit, SIGTERM to the stdio servers still running: none outlives the process that started it. */
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const pid of mcpServerPids()) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  });
}
