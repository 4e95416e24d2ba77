import { describe, expect, test } from 'bun:test';
import { mcpServersIn, McpToolEntryShape, serverKey, serverLabel, toolEntries } from '../../../src/sdk/mcp/servers';
import { jsonSchemaCheck } from '../../../src/sdk/tool_schema';

describe('MCP servers in an env config', () => {
  test('tools: takes names, stdio servers and loopback HTTP servers; anything else names the key', () => {
    const tools = toolEntries(['calculator']);
    expect(tools.parse(undefined)).toEqual(['calculator']);
    const entries = [
      'calculator',
      { mcp: { command: 'agentic', args: ['mcp-tools'], env: { A: '1' }, cwd: '/tmp', start_timeout_s: 2.5 }, include: ['search'] },
      { mcp: { url: 'http://localhost:8000/mcp' } },
      { mcp: { url: 'http://[::1]:8000/mcp' } },
    ];
    expect(tools.parse(entries)).toEqual(entries);
    const problem = (entry: unknown) => {
      const parsed = tools.safeParse([entry]);
      return parsed.success ? null : `${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`;
    };
    expect(problem({ mcp: { url: 'https://127.0.0.1/mcp' } })).toBe(
      "0.mcp.url: 'https://127.0.0.1/mcp' is not an http:// URL (MCP servers over HTTP are reached on loopback only)",
    );
    expect(problem({ mcp: { url: 'http://10.0.0.2/mcp' } })).toContain('0.mcp.url: ');
    expect(problem({ mcp: { url: 'http://127.0.0.1/mcp', args: ['x'] } })).toBe(
      '0.mcp.args: args is for a stdio server (command); an HTTP server takes url only',
    );
    expect(problem({ mcp: {} })).toContain('give either command');
    expect(problem({ mcp: { command: 'x' }, include: [] })).toContain('0.include');
    expect(problem({ mcp: { command: 'x', port: 3 } })).toContain('port');
    expect(problem({ mcp: { command: 'x', start_timeout_s: 0 } })).toBe('0.mcp.start_timeout_s: Too small: expected number to be >0');
  });

  test('equal configs share a key whatever the order of env; labels name the program, not its folder', () => {
    const a = { command: '/usr/bin/agentic', args: ['mcp-tools'], env: { A: '1', B: '2' } };
    const b = { command: '/usr/bin/agentic', args: ['mcp-tools'], env: { B: '2', A: '1' } };
    expect(serverKey(a)).toBe(serverKey(b));
    expect(serverKey(a)).not.toBe(serverKey({ ...a, args: ['mcp-tools', 'calculator'] }));
    expect(serverKey(a)).toBe(serverKey({ ...a, start_timeout_s: 60 }));
    expect(serverLabel(a)).toBe("MCP server 'agentic mcp-tools'");
    expect(serverLabel({ url: 'http://127.0.0.1:1/mcp' })).toBe('MCP server http://127.0.0.1:1/mcp');
  });

  test('the servers an env config names, wherever they are', () => {
    const config = {
      tools: ['calculator', { mcp: { command: 'a' } }],
      nested: { more: [{ mcp: { url: 'http://127.0.0.1:1/mcp' }, include: ['x'] }] },
      mcp: 'not one',
    };
    expect(mcpServersIn(config)).toEqual([{ command: 'a' }, { url: 'http://127.0.0.1:1/mcp' }]);
    expect(McpToolEntryShape.safeParse({ mcp: 'not one' }).success).toBe(false);
  });
});

describe('arguments checked against a JSON schema', () => {
  test("zod's reading of the schema, problems as path: message", () => {
    const check = jsonSchemaCheck({ type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] });
    expect(check({ expression: '1+1' })).toEqual({ ok: true, args: { expression: '1+1' } });
    expect(check({ expression: 1 })).toEqual({ ok: false, problems: ['expression: Invalid input: expected string, received number'] });
  });

  test('a schema zod cannot read: an object with the required keys', () => {
    const check = jsonSchemaCheck({ type: 'object', properties: { a: { $ref: '#/nowhere' } }, required: ['a'] });
    expect(check({ a: 1 }).ok).toBe(true);
    expect(check({})).toEqual({ ok: false, problems: ['a: required'] });
    expect(check([1])).toEqual({ ok: false, problems: ['arguments: expected an object'] });
  });
});
