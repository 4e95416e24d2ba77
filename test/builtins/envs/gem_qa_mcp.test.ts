/**
 * GEM's mcp tool_wrapper against a real MCP server: `agentic mcp-tools` over streamable HTTP on
 * loopback. A <tool_call> in GEM's form calls the server's calculator, its output comes back as
 * the observation with the wrapper's rewards, and the reply after it is graded.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import gemQa from '../../../plugins/envs/gem_qa';
import { PluginHost } from '../../../src/host/plugin_host';
import { McpPool } from '../../../src/sdk/mcp/pool';
import type { Env, StepResult } from '../../../src/sdk/types';
import { freePort } from '../../../src/util/free_port';
import { MAIN, ROOT } from '../../helpers';

const children: Array<{ kill(signal?: number): void }> = [];
/** The test's MCP connections, as a run's. */
const mcp = new McpPool();
afterAll(async () => {
  await mcp.close();
  for (const child of children) child.kill(9);
});

/** `agentic mcp-tools calculator --port`, once it answers. */
async function mcpTools(): Promise<string> {
  const port = await freePort();
  const child = Bun.spawn([process.execPath, MAIN, 'mcp-tools', 'calculator', '--port', String(port)], {
    cwd: ROOT,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let tries = 0; tries < 200; tries++) {
    if (await fetch(url, { method: 'GET' }).catch(() => null)) return url;
    await Bun.sleep(50);
  }
  throw new Error(`mcp-tools did not listen on ${url}`);
}

describe("GEM's mcp tool_wrapper with a real MCP server", () => {
  test("a <tool_call> runs the server's tool; its output is the observation; the reply after it is graded", async () => {
    const url = await mcpTools();
    const config = gemQa.config.parse({
      dataset_name: './test/fixtures/gem/hotpotqa',
      split: 'train',
      tool_wrapper: { wrapper_args: { tool_success_reward: 0.2, max_tool_uses: 1 }, tool_configs: [{ tool_id: 'mcp', tool_args: { server_url: url } }] },
    });
    await mcp.connectIn(config);
    const env = new gemQa.env(config, new PluginHost(ROOT, { mcp, pythonSandbox: 'bwrap' }).envContext()) as Env;
    const { observation } = await env.reset(0);
    expect(observation).toContain('calculator');
    const called = (await env.step('<tool_call>{"tool_name": "calculator", "tool_params": {"expression": "6 * 7"}}</tool_call>')) as StepResult;
    expect(called).toMatchObject({ reward: 0.2, terminated: false });
    expect(called.observation).toContain('42');
    expect(called.info.metrics).toMatchObject({ tool_use_counter: 1, tool_success_counter: 1 });
    const unknown = (await env.step('<tool_call>{"tool_name": "nope", "tool_params": {}}</tool_call><answer>x</answer>')) as StepResult;
    // max_tool_uses 1: the second reply is graded as the answer
    expect(unknown).toMatchObject({ terminated: true });
  });
});
