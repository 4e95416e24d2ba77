/**
 * A run's MCP connections: one per distinct server config, shared by every env that names it (a
 * stdio server and an HTTP endpoint both take concurrent calls). The run makes the pool, its
 * start-up opens the servers the env configs name, and each fresh env instance reopens a server
 * that died (GuardedEnv.reset, through the env's EnvContext); the env's constructor, synchronous,
 * finds them here. The run closes the pool when it ends; until then an exit hook stops any stdio
 * server still running if the process exits another way.
 */
import type { McpServers } from '../types';
import { McpConnection } from './connection';
import { mcpServersIn, serverKey, serverLabel, type McpServerConfig } from './servers';

export class McpPool implements McpServers {
  private readonly connections = new Map<string, McpConnection>();
  private readonly opening = new Map<string, Promise<McpConnection>>();
  /** Stops the stdio servers still running when the process exits; installed while any may run. */
  private readonly onExit = () => {
    for (const pid of this.pids()) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  };
  private exitHooked = false;

  /** Opens each server that is not open, or whose connection died; concurrent callers share one opening. */
  async connect(servers: readonly McpServerConfig[]): Promise<void> {
    await Promise.all(servers.map((server) => this.open(server)));
  }

  /** Opens the MCP servers an env config names (mcpServersIn), before the env is built. */
  connectIn(envConfig: unknown): Promise<void> {
    return this.connect(mcpServersIn(envConfig));
  }

  private open(server: McpServerConfig): Promise<McpConnection> {
    const key = serverKey(server);
    const current = this.connections.get(key);
    if (current?.alive) return Promise.resolve(current);
    const pending = this.opening.get(key);
    if (pending) return pending;
    // a dead connection's process (if any is left) is reaped in the background
    if (current) void current.close();
    if (!this.exitHooked) process.on('exit', this.onExit);
    this.exitHooked = true;
    const opened = McpConnection.open(server)
      .then((connection) => {
        this.connections.set(key, connection);
        return connection;
      })
      .finally(() => this.opening.delete(key));
    this.opening.set(key, opened);
    return opened;
  }

  /** The connection of an opened server (alive or dead), for an env's constructor and its calls. */
  connected(server: McpServerConfig): McpConnection {
    const connection = this.connections.get(serverKey(server));
    if (!connection) throw new Error(`${serverLabel(server)} is not connected (agentic connects the servers an env config names before it builds the env)`);
    return connection;
  }

  /** Closes every connection (stdio servers exit); a later connect opens them afresh. */
  async close(): Promise<void> {
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(open.map((connection) => connection.close()));
    process.off('exit', this.onExit);
    this.exitHooked = false;
  }

  /** The processes of the stdio servers running now. */
  pids(): number[] {
    return [...this.connections.values()].flatMap((connection) => (connection.pid === null ? [] : [connection.pid]));
  }
}
