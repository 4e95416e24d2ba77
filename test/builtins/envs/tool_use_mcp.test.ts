/**
 * tool_use with MCP servers in `tools:`: the real `agentic mcp-tools` serves the built-in tools
 * over stdio and over streamable HTTP, and the env shows and answers its calls exactly as with
 * the built-in tools. A server killed mid-call costs that episode (env_failure), and the next
 * episode reconnects.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import toolUse from '../../../plugins/envs/tool_use';
import { PluginHost } from '../../../src/host/plugin_host';
import { McpPool } from '../../../src/sdk/mcp/pool';
import { GuardedEnv, type GuardedReset, type GuardedStep } from '../../../src/sdk/guarded_env';
import { sandboxSupport } from '../../../src/sandbox/python';
import { freePort } from '../../../src/util/free_port';
import { MAIN, ROOT, scratch } from '../../helpers';

/** The test's MCP connections, as a run's: the envs open their servers in it. */
const mcp = new McpPool();
const ONE_ROW = scratch({ 'q.jsonl': '{"question": "What is 6 times 7?", "answer": "42"}\n' });
const SLOW_TOOL = `${ROOT}/test/fixtures/plugins/slow_tool.ts`;

const stdioServer = (...tools: string[]) => ({ command: process.execPath, args: [MAIN, 'mcp-tools', ...tools] });
const call = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

function guarded(tools: unknown[], extra: Record<string, unknown> = {}): GuardedEnv {
  const config = toolUse.config.parse({ dataset: 'q.jsonl', tools, ...extra });
  return new GuardedEnv(toolUse, config, new PluginHost(ONE_ROW, { mcp, pythonSandbox: 'bwrap' }).envContext(), {
    resetTimeoutMs: 30_000,
    stepTimeoutMs: 30_000,
  });
}

async function reset(env: GuardedEnv): Promise<GuardedReset & { failure: null }> {
  const result = await env.reset(0);
  if (result.failure) throw new Error(result.failure.reason);
  return result;
}

/** An `agentic mcp-tools ... --port` process, once it answers. */
async function httpServer(port: number, ...tools: string[]) {
  const child = Bun.spawn([process.execPath, MAIN, 'mcp-tools', ...tools, '--port', String(port)], {
    cwd: ROOT,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let tries = 0; tries < 200; tries++) {
    const answer = await fetch(url, { method: 'GET' }).catch(() => null);
    if (answer) return { child, url };
    await Bun.sleep(50);
  }
  child.kill();
  throw new Error(`mcp-tools did not listen on ${url}: ${await new Response(child.stderr).text()}`);
}

const children: Array<{ kill(signal?: number): void }> = [];
afterAll(async () => {
  await mcp.close();
  for (const child of children) child.kill(9);
});

/** The replies every comparison plays: a good call, a tool error, bad arguments, an unknown tool, several calls, the answer. */
const REPLIES = [
  call('calculator', { expression: '6 * 7' }),
  call('calculator', { expression: '1/0' }),
  call('calculator', { expression: 42 }),
  call('calculator', {}),
  call('abacus', { expression: '1' }),
  `${call('calculator', { expression: '2^5' })}\n${call('calculator', { expression: '(12 + 30) * 3 / 7' })}`,
  '<answer>42</answer>',
];

/** What a reply does to the episode: observation, reward, ending and metrics (not the timing). */
const outcome = (step: GuardedStep) => ({
  observation: step.observation,
  reward: step.reward,
  terminated: step.terminated,
  truncated: step.truncated,
  metrics: step.info.metrics,
  calls: step.info.tool_calls,
});

async function play(env: GuardedEnv): Promise<{ instruction: unknown; steps: unknown[] }> {
  const { info } = await reset(env);
  const steps = [];
  for (const reply of REPLIES) steps.push(outcome(await env.step(reply)));
  return { instruction: info.instruction, steps };
}

describe('tool_use with tools served by agentic mcp-tools', () => {
  let builtin: Awaited<ReturnType<typeof play>>;

  test('over stdio: the tool list the policy sees and every outcome equal the built-in calculator', async () => {
    builtin = await play(guarded(['calculator'], { max_turns: 10 }));
    const served = await play(guarded([{ mcp: stdioServer('calculator') }], { max_turns: 10 }));
    expect(served.instruction).toBe(builtin.instruction as string);
    expect(served.instruction as string).toContain('"parameters":{"type":"object","properties":{"expression":{"type":"string"');
    expect(served.steps).toEqual(builtin.steps);
  }, 30_000);

  test('over streamable HTTP on loopback: the same', async () => {
    const { child, url } = await httpServer(await freePort(), 'calculator');
    children.push(child);
    const served = await play(guarded([{ mcp: { url } }], { max_turns: 10 }));
    expect(served.instruction).toBe(builtin.instruction as string);
    expect(served.steps).toEqual(builtin.steps);
  }, 30_000);

  test('the default set renders as the built-ins, in order; include picks some', async () => {
    const { info } = await reset(guarded([{ mcp: stdioServer() }]));
    // without a usable bwrap (or without python3 at all), mcp-tools serves the default set without python_executor
    const usable = await sandboxSupport().then(
      (support) => support.problem === null,
      () => false,
    );
    const python = usable ? ['python_executor'] : [];
    const { info: listed } = await reset(guarded(['calculator', 'search', ...python]));
    expect(info.instruction).toBe(listed.instruction);
    const picked = await reset(guarded([{ mcp: stdioServer(), include: ['search'] }, 'calculator']));
    const named = await reset(guarded(['search', 'calculator']));
    expect(picked.info.instruction).toBe(named.info.instruction);
  }, 30_000);

  test('envs that name one server share one process', async () => {
    const before = mcp.pids().length;
    await Promise.all([reset(guarded([{ mcp: stdioServer('search') }])), reset(guarded([{ mcp: stdioServer('search') }]))]);
    await reset(guarded([{ mcp: stdioServer('search') }, 'calculator']));
    expect(mcp.pids()).toHaveLength(before + 1);
  }, 30_000);
});

describe('a server that dies costs the episode, not the run', () => {
  const server = { command: process.execPath, args: [MAIN, 'mcp-tools', 'calculator', 'slow', '--plugins', SLOW_TOOL] };

  test('stdio: kill -9 mid-call fails that episode (env_failure); the next episode restarts the server', async () => {
    const env = guarded([{ mcp: server }], { tool_timeout_ms: 20_000 });
    const others = new Set(mcp.pids());
    await reset(env);
    const [pid] = mcp.pids().filter((p) => !others.has(p));
    expect(pid).toBeNumber();
    const inFlight = env.step(call('slow', { ms: 10_000 }));
    await Bun.sleep(300);
    process.kill(pid!, 'SIGKILL');
    const failed = await inFlight;
    expect(failed.failure?.reason).toMatch(/step\(\) threw: MCP server '.*mcp-tools calculator slow.*' is gone/);
    expect(failed.info.metrics.env_failure).toBe(true);

    await reset(env);
    const [restarted] = mcp.pids().filter((p) => !others.has(p));
    expect(restarted).not.toBe(pid);
    const next = await env.step(call('calculator', { expression: '6 * 7' }));
    expect(next).toMatchObject({ observation: '<tool_response>\n42\n</tool_response>', failure: null });
  }, 30_000);

  test('HTTP: a server killed mid-call fails that episode; once it is back, the next episode reconnects', async () => {
    const port = await freePort();
    const first = await httpServer(port, 'calculator', 'slow', '--plugins', SLOW_TOOL);
    children.push(first.child);
    const env = guarded([{ mcp: { url: first.url } }], { tool_timeout_ms: 20_000 });
    await reset(env);
    const inFlight = env.step(call('slow', { ms: 10_000 }));
    await Bun.sleep(300);
    first.child.kill(9);
    const failed = await inFlight;
    expect(failed.failure?.reason).toContain(`MCP server ${first.url} is gone`);

    const second = await httpServer(port, 'calculator', 'slow', '--plugins', SLOW_TOOL);
    children.push(second.child);
    await reset(env);
    const next = await env.step(call('calculator', { expression: '6 * 7' }));
    expect(next).toMatchObject({ observation: '<tool_response>\n42\n</tool_response>', failure: null });
  }, 30_000);

  test('a call that runs over tool_timeout_ms is an error observation, as for a built-in tool', async () => {
    const env = guarded([{ mcp: server }], { tool_timeout_ms: 200 });
    await reset(env);
    const step = await env.step(call('slow', { ms: 5_000 }));
    expect(step).toMatchObject({ observation: '<tool_response>\nError: slow did not finish within 200 ms\n</tool_response>', failure: null });
  });
});
