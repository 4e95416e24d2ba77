import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { EnvManager, makePolicy } from '../../src/rollout/env_manager';
import type { Policy, TurnQuery, TurnReply } from '../../src/rollout/policy';
import type { RolloutBatch } from '../../src/rollout/types';
import { functionCallText } from '../../src/sdk/function_calls';
import { loadRows } from '../../plugins/envs/tool_use/dataset';
import { ROOT } from '../helpers';
import { chat, configFrom, hostWith, model, tokenizer } from './helpers';

const OPENAI_AGENT = join(ROOT, 'examples/agents/openai_calculator.ts');
const ROWS = loadRows('arithmetic/train', ROOT);

/**
 * A policy that plays the calculator task by the book, whatever asks it: on a question it calls
 * the calculator with the row's expression, on a tool response it answers with the output. The
 * part under test is what carries its tokens (the env episode, the gateway), not a model.
 */
class ScriptedPolicy implements Policy {
  readonly name = 'scripted';
  readonly remote = false;
  async respond(query: TurnQuery): Promise<TurnReply> {
    const prompt = tokenizer.decode([...query.promptIds], { skipSpecialTokens: false });
    const lastTurn = prompt.slice(prompt.lastIndexOf('<|im_start|>user'));
    const output = /<tool_response>\n([\s\S]*?)\n<\/tool_response>/.exec(lastTurn)?.[1];
    const row = ROWS.find((r) => lastTurn.includes(r.question));
    const text = output !== undefined ? output : row ? functionCallText('calculator', { expression: row.expression }) : 'no idea';
    const tokens = [...tokenizer.encode(text, { addSpecialTokens: false }), chat.stopTokenIds[0]!].slice(0, query.maxNewTokens);
    return { tokens, logProbs: tokens.map(() => -0.5), finishReason: 'stop_token', failure: null };
  }
  cancel(): void {}
  stats() {
    return { generatedTokens: 0 };
  }
  async close(): Promise<void> {}
}

function calculatorYaml(env: string, extra = ''): string {
  return `
seed: 11
sequence_length: 1024
rollout_batch_size: 4
val_batch_size: 4
custom_envs:
  Calc:
    env_manager_cls: traj
    max_steps: 3
    max_tokens_per_step: 64
    agent_system_template: "Use the calculator."
    agent_template: "{observation}"
    episode_timeout_s: 60
${env}
${extra}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc], generating_args: {max_new_tokens: 64, temperature: 0, do_sample: false}}
val_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc], generating_args: {max_new_tokens: 64, temperature: 0, do_sample: false}}
`;
}

const BUILTIN = `    env_type: tool_use
    env_config: {dataset: arithmetic/train, tools: [calculator], reward: math_string_equal, agent_format: hermes, max_turns: 3}`;
const OPENAI = `    env_type: agent
    env_config: {agent: ${OPENAI_AGENT}, dataset: arithmetic/train, tools: [calculator], reward: math_string_equal}`;

async function collect(yaml: string, policy: Policy | null = null): Promise<RolloutBatch> {
  const host = hostWith();
  const config = await configFrom(yaml, host);
  const manager = await EnvManager.build('train', config, host);
  const own = policy ?? makePolicy(config, 'train', model, chat);
  try {
    return await manager.collect(4, own, chat);
  } finally {
    if (!policy) await own.close();
    await manager.close();
  }
}

function rows(batch: RolloutBatch) {
  return batch.samples.map((s) => ({ ids: [...s.inputIds], mask: [...s.responseMask], score: s.score }));
}

describe('an outside agent through the gateway', () => {
  test('the openai-client agent and the built-in hermes env give the same token ids, masks and scores', async () => {
    const builtin = await collect(calculatorYaml(BUILTIN), new ScriptedPolicy());
    const agent = await collect(calculatorYaml(OPENAI), new ScriptedPolicy());
    for (const e of agent.episodes) expect(e.failure).toBeNull();
    expect(builtin.episodes.map((e) => e.turns.length)).toEqual([2, 2, 2, 2]);
    expect(rows(agent)).toEqual(rows(builtin));
    expect(agent.episodes.every((e) => e.score === 1)).toBe(true);
    expect(agent.metrics['env/Calc/prefix_mismatch']).toBe(0);
  }, 30_000);
});
