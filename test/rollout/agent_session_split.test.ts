import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { dropFailedGroups } from '../../src/train/failed_groups';
import { scratch } from '../helpers';
import { calculatorYaml, collect, moduleAgent, ScriptedPolicy } from './calculator_agents';

/**
 * An agent that plays the calculator task with plain fetch, and on its first run rewrites its
 * history before the second call: its tool call comes back with words in front of it, which the
 * template renders otherwise than the ids sampled. Its other runs send the conversation back as it was.
 */
const REWRITER = `
let first = true;
export async function run(ctx: any) {
  const rewrite = first;
  first = false;
  const call = async (messages: unknown[]) => {
    const response = await fetch(ctx.baseUrl + '/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer ' + ctx.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ model: ctx.model, messages, tools: ctx.tools }),
    });
    if (!response.ok) throw new Error('HTTP ' + response.status + ': ' + (await response.text()).slice(0, 300));
    return (await response.json()).choices[0].message;
  };
  const messages: any[] = [{ role: 'system', content: 'Use the calculator.' }, { role: 'user', content: ctx.question }];
  const reply = await call(messages);
  const toolCall = reply.tool_calls[0];
  const output = await ctx.callTool(toolCall.function.name, JSON.parse(toolCall.function.arguments));
  messages.push(rewrite ? { ...reply, content: 'Let me compute.' } : reply, { role: 'tool', tool_call_id: toolCall.id, content: output });
  return { answer: (await call(messages)).content };
}`;

async function rewritten(onMismatch?: string) {
  const dir = scratch({ 'agent.ts': REWRITER });
  return collect(calculatorYaml(moduleAgent(join(dir, 'agent.ts')), { onMismatch }), new ScriptedPolicy());
}

describe("an outside agent's session that does not extend itself (gateway.on_mismatch)", () => {
  test('split (the default): two rows, each masked on its own sampled ids, counted in prefix_mismatch', async () => {
    const batch = await rewritten();
    const split = batch.episodes.filter((e) => e.metrics.prefix_mismatch === 1);
    expect(split).toHaveLength(1);
    expect(batch.episodes.map((e) => e.failure)).toEqual([null, null, null, null]);
    expect(batch.episodes.every((e) => e.score === 1)).toBe(true);
    expect(batch.metrics['env/Calc/prefix_mismatch']).toBe(0.25);
    expect(batch.metrics['gateway/prefix_mismatch']).toBe(1);
    expect(batch.samples).toHaveLength(5);
    const [before, after] = split[0]!.turns;
    expect(after!.opensRow).toBe(true);
    const rows = batch.samples.filter((s) => s.trajId === split[0]!.trajId);
    expect(rows).toHaveLength(2);
    for (const [row, turn] of [before!, after!].entries()) {
      const sample = rows[row]!;
      // the row after the split starts over with the call's whole prompt
      expect([...sample.inputIds]).toEqual([...turn.promptIds, ...turn.responseIds]);
      expect([...sample.inputIds].filter((_, t) => sample.responseMask[t] === 1)).toEqual(turn.responseIds);
      expect(sample.score).toBe(1);
    }
  }, 30_000);

  test("drop: the split episode's group leaves the update, the other group trains", async () => {
    const batch = await rewritten('drop');
    const marked = batch.episodes.filter((e) => e.untrained !== undefined);
    expect(marked.map((e) => e.untrained)).toEqual(["the agent's session split 1 time(s) (gateway.on_mismatch: drop)"]);
    const kept = dropFailedGroups({ batch, baselines: null, refLogProbs: null });
    expect(kept.metrics).toEqual({ 'rollout/dropped_groups': 1, 'rollout/dropped_samples': 3 });
    expect(kept.played.batch.samples).toHaveLength(2);
    expect(kept.played.batch.samples.every((s) => s.trajGroupId !== marked[0]!.trajGroupId)).toBe(true);
  }, 30_000);

  test('error: the call that rewrites the session is refused and its episode ends as env_failure', async () => {
    const batch = await rewritten('error');
    const failed = batch.episodes.filter((e) => e.failure !== null);
    expect(failed.map((e) => [e.endReason, e.failure])).toEqual([
      ['env_failure', 'agent: call 2 does not extend the conversation so far: the agent rewrote its history (gateway.on_mismatch: error)'],
    ]);
    // the refused call was not recorded: the episode holds the first call alone
    expect(failed[0]!.turns).toHaveLength(1);
    expect(batch.episodes.filter((e) => e.failure === null).every((e) => e.score === 1)).toBe(true);
  }, 30_000);
});
