/**
 * A run folder whose outside agent fails, for the commands that must say why (train, eval,
 * render): config.yaml plays the agent env over `pretrain` in two groups of two, and agent.ts
 * calls the model once and then throws on every episode, or, `everyOther`, on every other one
 * (the others answer 42).
 */
import { scratch } from '../helpers';

export const AGENT_REASON = 'runAgent() threw: refusing to reverse stone';

export function failingAgentFolder(pretrain: string, options: { everyOther?: boolean; maxSteps?: number } = {}): string {
  return scratch({
    'agent.ts': `let played = 0;
export async function run(ctx: any) {
  const mine = played++;
  const response = await fetch(ctx.baseUrl + '/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + ctx.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ model: ctx.model, messages: [{ role: 'user', content: ctx.question }] }),
  });
  await response.text();
  if (${options.everyOther ? 'mine % 2 === 0' : 'mine >= 0'}) throw new Error('refusing to reverse stone');
  return { answer: '42' };
}`,
    'config.yaml': `
pretrain: ${pretrain}
max_steps: ${options.maxSteps ?? 5}
eval_steps: 0
sequence_length: 512
rollout_batch_size: 4
val_batch_size: 4
custom_envs:
  Calc:
    env_type: agent
    max_steps: 2
    max_tokens_per_step: 8
    env_config: {agent: agent.ts, dataset: arithmetic/train, reward: math_string_equal}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc]}
val_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc], generating_args: {max_new_tokens: 8}}
`,
  });
}
