import { afterAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { tf } from '../../src/engine/tf';
import { McpPool } from '../../src/sdk/mcp/pool';
import { MAIN } from '../helpers';
import { AGENTS, BUILTIN, calculatorYaml, collect, commandAgent, moduleAgent, rows, ScriptedPolicy } from './calculator_agents';
import { missing } from '../system_tools';
import { hostWith, worstLogProbGap } from './helpers';

/** The calculator served over MCP by a real `agentic mcp-tools` process (stdio). */
const MCP_CALCULATOR = `{mcp: {command: ${process.execPath}, args: [${MAIN}, mcp-tools, calculator]}}`;

/** The test's MCP connections, as a run's: its envs open the server in it, and it ends with the tests. */
const mcp = new McpPool();
const withMcp = () => hostWith().forRun({ mcp, pythonSandbox: 'bwrap' });

afterAll(() => mcp.close());

describe('an outside agent through the gateway', () => {
  test('the same task three ways, the same tokens: the built-in hermes env, the openai-client agent, and the calculator over MCP', async () => {
    const builtin = await collect(calculatorYaml(BUILTIN), new ScriptedPolicy());
    const agent = await collect(calculatorYaml(moduleAgent(join(AGENTS, 'openai_calculator.ts'))), new ScriptedPolicy());
    const overMcp = await collect(calculatorYaml(BUILTIN.replace('tools: [calculator]', `tools: [${MCP_CALCULATOR}]`)), new ScriptedPolicy(), withMcp());
    const agentOverMcp = await collect(
      calculatorYaml(moduleAgent(join(AGENTS, 'openai_calculator.ts')).replace('tools: [calculator]', `tools: [${MCP_CALCULATOR}]`)),
      new ScriptedPolicy(),
      withMcp(),
    );
    for (const batch of [agent, overMcp, agentOverMcp]) {
      for (const e of batch.episodes) expect(e.failure).toBeNull();
      expect(rows(batch)).toEqual(rows(builtin));
      expect(batch.episodes.every((e) => e.score === 1)).toBe(true);
    }
    expect(builtin.episodes.map((e) => e.turns.length)).toEqual([2, 2, 2, 2]);
    expect(agent.metrics['env/Calc/prefix_mismatch']).toBe(0);
  }, 60_000);

  test('the Vercel AI SDK agent streams its calls and gives the same token ids, masks and scores as the built-in env', async () => {
    const builtin = await collect(calculatorYaml(BUILTIN), new ScriptedPolicy());
    const agent = await collect(calculatorYaml(moduleAgent(join(AGENTS, 'ai_sdk_calculator.ts'))), new ScriptedPolicy());
    for (const e of agent.episodes) expect(e.failure).toBeNull();
    // every call of every episode asked for server-sent events
    expect(agent.episodes.map((e) => [e.metrics.gateway_calls, e.metrics.gateway_streamed])).toEqual(Array(4).fill([2, 2]));
    expect(rows(agent)).toEqual(rows(builtin));
    expect(agent.episodes.every((e) => e.score === 1)).toBe(true);
    expect(agent.metrics['env/Calc/prefix_mismatch']).toBe(0);
  }, 30_000);

  test.skipIf(missing('python'))(
    "the Python agent (a command, urllib) gives the same rows as the built-in env, with the env's tool definitions or its own",
    async () => {
      const builtin = await collect(calculatorYaml(BUILTIN), new ScriptedPolicy());
      const python = ['python3', join(AGENTS, 'python_calculator.py')];
      // AGENTIC_TOOLS holds the calculator's definition; without tools the agent sends its own copy
      const given = await collect(calculatorYaml(commandAgent(python, ', tools: [calculator]')), new ScriptedPolicy());
      const own = await collect(calculatorYaml(commandAgent(python)), new ScriptedPolicy());
      for (const batch of [given, own]) {
        for (const e of batch.episodes) expect(e.failure).toBeNull();
        expect(rows(batch)).toEqual(rows(builtin));
        expect(batch.episodes.every((e) => e.score === 1)).toBe(true);
      }
    },
    30_000,
  );

  test("with the real model, an openai-client agent's recorded log-probs are the model's own (<= 1e-4) and the masks cover exactly the sampled ids", async () => {
    const before = tf.memory().numTensors;
    const batch = await collect(calculatorYaml(moduleAgent(join(AGENTS, 'openai_calculator.ts'))));
    expect(tf.memory().numTensors).toBe(before);
    expect(batch.samples).toHaveLength(4);
    for (const [i, sample] of batch.samples.entries()) {
      const episode = batch.episodes[i]!;
      expect(episode.failure).toBeNull();
      expect(episode.turns.length).toBeGreaterThan(0);
      expect([...sample.inputIds]).toEqual(episode.turns.flatMap((t) => [...t.promptIds, ...t.responseIds]));
      const masked = [...sample.inputIds].filter((_, t) => sample.responseMask[t] === 1);
      expect(masked).toEqual(episode.turns.flatMap((t) => t.responseIds));
      expect(await worstLogProbGap(sample)).toBeLessThanOrEqual(1e-4);
    }
    expect(tf.memory().numTensors).toBe(before);
  }, 60_000);
});
