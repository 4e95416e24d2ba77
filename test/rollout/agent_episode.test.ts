import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { AGENTS, BUILTIN, calculatorYaml, collect, moduleAgent, rows, ScriptedPolicy } from './calculator_agents';

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
});
