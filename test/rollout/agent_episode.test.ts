import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { AGENTS, BUILTIN, calculatorYaml, collect, commandAgent, moduleAgent, rows, ScriptedPolicy } from './calculator_agents';

describe('an outside agent through the gateway', () => {
  test('the openai-client agent and the built-in hermes env give the same token ids, masks and scores', async () => {
    const builtin = await collect(calculatorYaml(BUILTIN), new ScriptedPolicy());
    const agent = await collect(calculatorYaml(moduleAgent(join(AGENTS, 'openai_calculator.ts'))), new ScriptedPolicy());
    for (const e of agent.episodes) expect(e.failure).toBeNull();
    expect(builtin.episodes.map((e) => e.turns.length)).toEqual([2, 2, 2, 2]);
    expect(rows(agent)).toEqual(rows(builtin));
    expect(agent.episodes.every((e) => e.score === 1)).toBe(true);
    expect(agent.metrics['env/Calc/prefix_mismatch']).toBe(0);
  }, 30_000);

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

  test("the Python agent (a command, urllib) gives the same rows as the built-in env, with the env's tool definitions or its own", async () => {
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
  }, 30_000);
});
