/**
 * The tools an env offers the policy, made from its `tools:` list: tool plugins by name, and the
 * tools of MCP servers (`{mcp: ...}` entries, connected in the run's pool before the env is built), as
 * one kind of thing, AgentTool. A plugin's arguments show as the JSON schema of its zod
 * `parameters`; an MCP tool's as the schema its server lists, unchanged.
 */
import { mcpTools } from './mcp/tools';
import type { ToolEntry } from './mcp/servers';
import { argumentsSchema, textParameterOf, zodProblems } from './tool_schema';
import type { PythonSandboxMode } from '../sandbox/modes';
import type { AgentTool, EnvContext, ToolArgsCheck, ToolPlugin } from './types';

/**
 * A tool plugin as an AgentTool: its arguments checked by its zod schema, called in this process
 * with the run's python_sandbox (`pythonSandbox`) in its ToolContext.
 */
export function pluginTool(plugin: ToolPlugin, pythonSandbox: PythonSandboxMode): AgentTool {
  const schema = argumentsSchema(plugin.parameters);
  return {
    name: plugin.name,
    description: plugin.description,
    schema,
    textParameter: textParameterOf(schema),
    terminal: plugin.terminal === true,
    check(args): ToolArgsCheck {
      const parsed = plugin.parameters.safeParse(args);
      return parsed.success ? { ok: true, args: parsed.data } : { ok: false, problems: zodProblems(parsed.error) };
    },
    // the call starts in a later microtask, so a tool that throws synchronously rejects like one that fails later
    call: (args, { signal }) => Promise.resolve().then(() => plugin.call(args as never, { signal, pythonSandbox })),
  };
}

/**
 * The tools of an env's `tools:` list, in its order (an MCP server's in the order it lists
 * them). Throws one line for an unknown plugin, a server not connected, an `include` name the
 * server does not list, or two tools of one name.
 */
export function toolsFromConfig(entries: readonly ToolEntry[], context: Pick<EnvContext, 'tool' | 'mcp' | 'pythonSandbox'>): AgentTool[] {
  const tools = entries.flatMap((entry) =>
    typeof entry === 'string' ? [pluginTool(context.tool(entry), context.pythonSandbox)] : mcpTools(entry, context.mcp),
  );
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) throw new Error(`tools lists '${tool.name}' twice (an MCP server's tools can be picked with include)`);
    seen.add(tool.name);
  }
  return tools;
}
