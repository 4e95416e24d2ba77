/**
 * The tools of an MCP server as AgentTools: named, described and shown to the policy as the
 * server lists them (its JSON schema as it is), arguments checked against that schema, calls
 * sent over the run's one connection to it (./pool.ts), looked up at each call so that a
 * reopened server serves the episodes after the one its death cost.
 */
import { jsonSchemaCheck, textParameterOf } from '../tool_schema';
import type { AgentTool, ListedTool, McpServers } from '../types';
import { serverLabel, type McpServerConfig, type McpToolEntry } from './servers';

/** The tools of an opened server that `entry` picks (all, or its `include` in that order); one line for a name it does not list. */
export function mcpTools(entry: McpToolEntry, servers: McpServers): AgentTool[] {
  const listed = servers.connected(entry.mcp).tools;
  if (!entry.include) return listed.map((tool) => mcpTool(servers, entry.mcp, tool));
  return entry.include.map((name) => {
    const tool = listed.find((t) => t.name === name);
    if (!tool) throw new Error(`include: ${serverLabel(entry.mcp)} lists no tool '${name}'; it lists: ${listed.map((t) => t.name).join(', ')}`);
    return mcpTool(servers, entry.mcp, tool);
  });
}

function mcpTool(servers: McpServers, server: McpServerConfig, listed: ListedTool): AgentTool {
  return {
    name: listed.name,
    description: listed.description,
    schema: listed.inputSchema,
    textParameter: textParameterOf(listed.inputSchema),
    terminal: false,
    check: jsonSchemaCheck(listed.inputSchema),
    call: (args, { signal }) => servers.connected(server).call(listed.name, args, signal),
  };
}
