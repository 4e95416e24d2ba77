/**
 * `agentic mcp-tools`, as an outside MCP client and as a run see it: the SDK's Client lists and
 * calls the served tools; `agentic play` with the calculator served over MCP plays as with the
 * built-in one and leaves no server behind; bad flags and bad server configs are one line.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { basename, join } from 'node:path';
import { agentic, lines, MAIN, processesWith, ROOT, scratch } from '../helpers';

const CALL = '<tool_call>{"name": "calculator", "arguments": {"expression": "2*4 + 9*6"}}</tool_call>';
const PLAY = ['play', 'Arithmetic', '--config-name', 'tool_use', 'seed=5'];

describe('agentic mcp-tools over stdio, to an MCP client', () => {
  const client = new Client({ name: 'test', version: '1' });
  afterAll(() => client.close());

  test('lists the built-in tools with their descriptions and JSON schemas; calls answer, errors are isError with one line', async () => {
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, 'mcp-tools', 'calculator', 'search', '--tool-timeout-ms', '5000'],
        cwd: ROOT,
        stderr: 'ignore',
      }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['calculator', 'search']);
    expect(tools[0]!.description).toStartWith('Evaluate an arithmetic expression');
    expect(tools[0]!.inputSchema).toEqual({
      type: 'object',
      properties: { expression: { type: 'string', description: 'The expression to evaluate, e.g. (12 + 30) * 3 / 7' } },
      required: ['expression'],
    });
    expect(await client.callTool({ name: 'calculator', arguments: { expression: '1/3 + 1/6' } })).toMatchObject({ content: [{ type: 'text', text: '1/2' }] });
    expect(await client.callTool({ name: 'calculator', arguments: { expression: 7 } })).toEqual({
      content: [{ type: 'text', text: 'invalid arguments for calculator: expression: Invalid input: expected string, received number' }],
      isError: true,
    });
    expect(await client.callTool({ name: 'abacus', arguments: {} })).toEqual({
      content: [{ type: 'text', text: "there is no tool 'abacus'; the tools are: calculator, search" }],
      isError: true,
    });
  }, 20_000);
});

describe('agentic play with the calculator served by agentic mcp-tools', () => {
  const dir = scratch({ 'answers.txt': `${CALL}\n<answer>62</answer>\n` });
  // a time limit no other test uses marks this server's process
  const marker = String(20_000 + Math.floor(Math.random() * 10_000));
  const tools = `custom_envs.Arithmetic.env_config.tools=[{mcp: {command: '${process.execPath}', args: ['${MAIN}', mcp-tools, calculator, --tool-timeout-ms, '${marker}']}}]`;

  test('plays as with the built-in calculator, and its server exits with it', async () => {
    const script = ['--script', join(dir, 'answers.txt')];
    const [served, builtin] = await Promise.all([
      agentic([...PLAY, ...script, '--out', join(dir, 'served.json'), tools]),
      agentic([...PLAY, ...script, '--out', join(dir, 'builtin.json')]),
    ]);
    expect(served.stderr).not.toContain('error');
    expect(served.code).toBe(0);
    expect(served.stdout).toContain('--- tool calls (1)\n[1] calculator: ok\n62\n');
    expect(served.stdout).toContain('score: 1 (success)');
    expect(served.stdout).toBe(builtin.stdout);
    expect(processesWith('mcp-tools', marker)).toEqual([]);
  }, 30_000);
});

describe('agentic train with tools served over MCP', () => {
  test('trains a step and leaves no server behind', async () => {
    const marker = String(30_000 + Math.floor(Math.random() * 10_000));
    const tools = `custom_envs.Arithmetic.env_config.tools=[{mcp: {command: '${process.execPath}', args: ['${MAIN}', mcp-tools, calculator, --tool-timeout-ms, '${marker}']}}]`;
    const small = ['max_steps=1', 'eval_steps=0', 'rollout_batch_size=4', 'train_env_manager.num_env_groups=1', 'train_env_manager.group_size=4'];
    const tiny = ['pretrain=agentic:nano', 'warm_start.enabled=false', 'sequence_length=512', 'train_env_manager.generating_args.max_new_tokens=16'];
    const { code, stderr } = await agentic(['train', '--config-name', 'tool_use', `output_dir=${scratch()}`, ...tiny, ...small, tools]);
    expect({ code, stderr }).toMatchObject({ code: 0 });
    expect(stderr).toContain('done: 1 step');
    expect(processesWith('mcp-tools', marker)).toEqual([]);
  }, 60_000);
});

describe('one line, exit 2', () => {
  test.each([
    [['mcp-tools', 'calculator', 'abacus'], "error: unknown tool 'abacus'; the tools are: answer, calculator, python_executor, search"],
    [['mcp-tools', 'calcualtor'], "error: unknown tool 'calcualtor' (did you mean calculator?)"],
    [['mcp-tools', '--port', '8765', '--host', '0.0.0.0'], 'error: --host 0.0.0.0 is not a loopback address'],
    [['mcp-tools', '--host', '127.0.0.1'], 'error: --host needs --port'],
    [['mcp-tools', '--port', '70000'], "error: --port: expected an integer from 0 to 65535, got '70000'"],
    [['mcp-tools', '--python-sandbox', 'docker'], "error: --python-sandbox: expected bwrap or unconfined, got 'docker'"],
  ])('agentic %p', async (args, message) => {
    const { code, stderr } = await agentic(args);
    expect(code).toBe(2);
    expect(lines(stderr)).toHaveLength(1);
    expect(stderr).toStartWith(message);
  });

  test.each([
    ["[{mcp: {url: 'http://example.com/mcp'}}]", "custom_envs.Arithmetic.env_config.tools[0].mcp.url: 'http://example.com/mcp' is not on loopback"],
    ['[{mcp: {command: no-such-program-xyz}}]', "env 'tool_use' cannot be built: MCP server 'no-such-program-xyz' cannot start"],
    ["[{mcp: {command: bun, url: 'http://127.0.0.1:9/mcp'}}]", 'tools[0].mcp: give either command (a stdio server) or url (an HTTP server on loopback)'],
    ['[{mcp: {command: 7}}]', 'custom_envs.Arithmetic.env_config.tools[0].mcp.command: expected string, got 7'],
  ])('a bad MCP server in tools: %s', async (entry, message) => {
    const { code, stderr } = await agentic([...PLAY, '--policy', 'random', '--auto', `custom_envs.Arithmetic.env_config.tools=${entry}`]);
    expect(code).toBe(2);
    expect(lines(stderr)).toHaveLength(1);
    expect(stderr).toContain(message);
  });

  test('a command that never answers MCP fails the start within its start_timeout_s, and is not left running', async () => {
    // a Bun that sleeps reads no request and answers none; its argument marks it among this machine's processes
    const marker = `never-answers-${crypto.randomUUID()}`;
    const sleeper = 'await Bun.sleep(60000)';
    const entry = `[{mcp: {command: '${process.execPath}', args: ['-e', '${sleeper}', '${marker}'], start_timeout_s: 1}}]`;
    const { code, stderr } = await agentic([...PLAY, '--policy', 'random', '--auto', `custom_envs.Arithmetic.env_config.tools=${entry}`]);
    expect(code).toBe(2);
    expect(lines(stderr)).toEqual([
      `error: custom_envs.Arithmetic.env_config: env 'tool_use' cannot be built: MCP server '${basename(process.execPath)} -e ${sleeper} ${marker}' cannot start: it did not answer MCP's initialize within 1 s (mcp.start_timeout_s; is the command an MCP server over stdio?)`,
    ]);
    expect(processesWith(marker)).toEqual([]);
  });
});
