/**
 * Shared set-up of the outside-agent tests: the calculator task as configs (the built-in hermes
 * env and outside agents), a policy that plays it by the book, and a batch collected from a config.
 */
import { join } from 'node:path';
import { EnvManager, makePolicy } from '../../src/rollout/env_manager';
import type { Policy, TurnQuery, TurnReply } from '../../src/rollout/policy';
import type { RolloutBatch } from '../../src/rollout/types';
import { functionCallText } from '../../src/sdk/function_calls';
import { loadRows } from '../../plugins/envs/tool_use/dataset';
import type { PluginHost } from '../../src/host/plugin_host';
import { ROOT } from '../helpers';
import { chat, configFrom, hostWith, model, tokenizer } from './helpers';

export const AGENTS = join(ROOT, 'examples/agents');
const ROWS = loadRows('arithmetic/train', ROOT);

/**
 * A policy that plays the calculator task by the book, whatever asks it: on a question it calls
 * the calculator with the row's expression, on a tool response it answers with the output. The
 * part under test is what carries its tokens (the env episode, the gateway), not a model.
 */
export class ScriptedPolicy implements Policy {
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

/** The calculator task in two groups of two, greedy, with `env` as the env's lines. */
export function calculatorYaml(env: string, options: { timeoutS?: number; maxSteps?: number; onMismatch?: string } = {}): string {
  return `
seed: 11
${options.onMismatch ? `gateway: {on_mismatch: ${options.onMismatch}}` : ''}
sequence_length: 1024
rollout_batch_size: 4
val_batch_size: 4
custom_envs:
  Calc:
    env_manager_cls: traj
    max_steps: ${options.maxSteps ?? 3}
    max_tokens_per_step: 64
    agent_system_template: "Use the calculator."
    agent_template: "{observation}"
    episode_timeout_s: ${options.timeoutS ?? 60}
${env}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc], generating_args: {max_new_tokens: 64, temperature: 0, do_sample: false}}
val_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc], generating_args: {max_new_tokens: 64, temperature: 0, do_sample: false}}
`;
}

/** The built-in env the outside agents are compared with. */
export const BUILTIN = `    env_type: tool_use
    env_config: {dataset: arithmetic/train, tools: [calculator], reward: math_string_equal, agent_format: hermes, max_turns: 3}`;

/** The agent env's lines for a module agent at `path` (offered the calculator) and `extra` env_config keys. */
export function moduleAgent(path: string, extra = ''): string {
  return `    env_type: agent
    env_config: {agent: ${path}, dataset: arithmetic/train, tools: [calculator], reward: math_string_equal${extra}}`;
}

/** The agent env's lines for a command agent (argv as a YAML flow list). */
export function commandAgent(argv: readonly string[], extra = ''): string {
  return `    env_type: agent
    env_config: {command: [${argv.join(', ')}], dataset: arithmetic/train, reward: math_string_equal${extra}}`;
}

/** One train batch of `yaml`'s rollout, played by `policy` (the config's own when null). */
export async function collect(yaml: string, policy: Policy | null = null, host: PluginHost = hostWith()): Promise<RolloutBatch> {
  const config = await configFrom(yaml, host);
  const manager = await EnvManager.build('train', config, host);
  const own = policy ?? makePolicy(config, 'train', model, chat);
  try {
    return await manager.collect(config.rollout_batch_size, own, chat);
  } finally {
    if (!policy) await own.close();
    await manager.close();
  }
}

/** What a batch trains on: each row's ids, mask and score. */
export function rows(batch: RolloutBatch) {
  return batch.samples.map((s) => ({ ids: [...s.inputIds], mask: [...s.responseMask], score: s.score }));
}
