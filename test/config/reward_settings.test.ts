import { checkPlugins } from '../../src/cli/start_up';
import { describe, expect, test } from 'bun:test';
import { loadConfig } from '../../src/config/load';
import { ConfigError } from '../../src/errors';
import { PluginHost } from '../../src/host/plugin_host';
import { defineEnv, defineReward, RewardReference, z } from '../../src/sdk';
import { ROOT, scratch } from '../helpers';

/** A tool_use config whose training env names `reward` (YAML flow text). */
const withReward = (reward: string) =>
  `custom_envs:\n  Q: {env_type: tool_use, env_config: {dataset: q.jsonl, reward: ${reward}}}\ntrain_env_manager: {num_env_groups: 1, group_size: 2, tags: [Q]}\nrollout_batch_size: 2\n`;
const load = (reward: string, overrides: string[] = []) => {
  const dir = scratch({ 'c.yaml': withReward(reward), 'q.jsonl': '{"question": "1+1?", "answer": "2"}\n' });
  return loadConfig({ cwd: dir, configFile: 'c.yaml', overrides }, new PluginHost(dir));
};
const failure = async (reward: string, overrides: string[] = []) => {
  const error = await load(reward, overrides).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as Error).message;
};

describe('rewards with settings in env configs', () => {
  test('a reward named by string works as before; one with settings is a mapping, kept as written', async () => {
    expect((await load('exact_match')).config.custom_envs.Q!.env_config.reward).toBe('exact_match');
    const { config } = await load('{name: llm_judge, base_url: "http://127.0.0.1:9/v1", parser: pass_fail}');
    expect(config.custom_envs.Q!.env_config.reward).toEqual({ name: 'llm_judge', base_url: 'http://127.0.0.1:9/v1', parser: 'pass_fail' });
  });

  test('a bad setting is one line at its full path', async () => {
    expect(await failure('{name: llm_judge, base_url: "http://127.0.0.1:9", max_tokens: 0}')).toBe(
      'custom_envs.Q.env_config.reward.max_tokens: must be > 0, got 0',
    );
    expect(await failure('{name: llm_judge, base_url: "http://127.0.0.1:9", max_token: 5}')).toBe(
      'custom_envs.Q.env_config.reward.max_token: unknown key (did you mean max_tokens?)',
    );
    expect(await failure('{name: llm_judge, base_url: "http://127.0.0.1:9", parser: stars}')).toStartWith(
      'custom_envs.Q.env_config.reward.parser: expected one of number, pass_fail, got "stars"',
    );
    expect(await failure('{name: llm_judge, base_url: "http://127.0.0.1:9", api_key_env: AGENTIC_TEST_NO_SUCH_KEY}')).toBe(
      'custom_envs.Q.env_config.reward.api_key_env: environment variable AGENTIC_TEST_NO_SUCH_KEY is not set',
    );
  });

  test('settings are set and overridden from the command line like other env_config keys', async () => {
    const { config } = await load('{name: llm_judge, base_url: "http://127.0.0.1:9"}', [
      'custom_envs.Q.env_config.reward.base_url=http://judge:8000',
      '+custom_envs.Q.env_config.reward.concurrency=2',
    ]);
    expect(config.custom_envs.Q!.env_config.reward).toEqual({ name: 'llm_judge', base_url: 'http://judge:8000', concurrency: 2 });
  });

  test('an unknown reward, settings for a reward that takes none, and a name alone where settings are needed', async () => {
    expect(await failure('{name: llm_judj, base_url: "http://x"}')).toBe(
      "custom_envs.Q.env_config.reward.name: unknown reward 'llm_judj' (did you mean llm_judge?)",
    );
    expect(await failure('{name: exact_match, strict: true}')).toBe('custom_envs.Q.env_config.reward.strict: unknown key');
    expect(await failure('llm_judge')).toBe(
      "custom_envs.Q.env_config.reward: reward 'llm_judge' needs settings; write it as {name: llm_judge, ...} (base_url: required (string))",
    );
  });

  test("an env of the user's own that declares its reward with RewardReference gets the same checks and a bound reward", async () => {
    const seen: unknown[] = [];
    const host = new PluginHost(ROOT);
    host.registry.register(
      defineReward({
        name: 'scaled',
        description: 'The answer length times a factor.',
        config: z.strictObject({ factor: z.number().positive().default(1) }),
        score: ({ response }, { factor }) => response.length * factor,
      }),
      'test',
    );
    host.registry.register(
      defineEnv({
        name: 'graded',
        description: 'Scores rewards from a list.',
        config: z.strictObject({ graders: z.array(RewardReference).default(['scaled']) }),
        env: class {
          constructor(config: { graders: RewardReference[] }, context: { reward(r: RewardReference): { score(i: unknown): unknown } }) {
            for (const grader of config.graders) seen.push(context.reward(grader).score({ response: 'abc', trajectory: [], row: {} }));
          }
          reset() {
            return { observation: '', info: { instruction: '' } };
          }
          step() {
            return { observation: '', reward: 0, terminated: true, truncated: false, info: { metrics: {} } };
          }
          render() {
            return null;
          }
          close() {}
          sampleRandomAction() {
            return '';
          }
        },
      }),
      'test',
    );
    const dir = scratch({
      'c.yaml':
        'custom_envs:\n  G: {env_type: graded, env_config: {graders: [scaled, {name: scaled, factor: 2}]}}\ntrain_env_manager: {num_env_groups: 1, group_size: 2, tags: [G]}\nrollout_batch_size: 2\n',
    });
    // the env is built (and so binds its rewards) at the command's start-up, right after its config loads
    await checkPlugins((await loadConfig({ cwd: dir, configFile: 'c.yaml' }, host)).config, host);
    expect(seen).toEqual([3, 6]);
    const bad = await loadConfig({ cwd: dir, configFile: 'c.yaml', overrides: ['custom_envs.G.env_config.graders.1.factor=-1'] }, host).catch(
      (e: Error) => e.message,
    );
    expect(bad).toBe('custom_envs.G.env_config.graders[1].factor: must be > 0, got -1');
  });
});
