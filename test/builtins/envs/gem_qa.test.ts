import { describe, expect, test } from 'bun:test';
import gemLogic from '../../../plugins/envs/gem_logic';
import gemMath from '../../../plugins/envs/gem_math';
import gemQa from '../../../plugins/envs/gem_qa';
import { checkEnv } from '../../../src/cli/plugins_check';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, EnvPlugin, StepResult } from '../../../src/sdk/types';
import { ROOT } from '../../helpers';

const HOTPOT = { dataset_name: './test/fixtures/gem/hotpotqa', split: 'train' };
const SEARCH = { wrapper_args: { tool_success_reward: 0.2, max_tool_uses: 2 }, tool_configs: [{ tool_id: 'search' }] };

function qaEnv(config: Record<string, unknown>): Env {
  return new gemQa.env(gemQa.config.parse({ ...HOTPOT, ...config }), new PluginHost(ROOT).envContext()) as Env;
}

async function resetTo(env: Env, fragment: string): Promise<string> {
  for (let seed = 0; seed < 200; seed++) {
    const { observation } = await env.reset(seed);
    if (observation.includes(fragment)) return observation;
  }
  throw new Error(`no seed gives ${fragment}`);
}

describe('gem_qa (roll_qa, qa:*)', () => {
  test("the question comes in GEM's prompt; the last <answer> is graded by exact match after normalisation", async () => {
    const env = qaEnv({});
    const observation = await resetTo(env, 'Marstinburg');
    expect(observation).toStartWith('For any question, always reason through your thought process using:');
    expect(observation).toEndWith('Question: Which river runs through Marstinburg?\n');
    expect(await env.step('<think>hmm</think><answer>Tubeck</answer> no: <answer>marhound river.</answer>')).toMatchObject({
      reward: 1,
      terminated: true,
      info: { metrics: { success: true, action_is_valid: true } },
    });
    await resetTo(env, 'Marstinburg');
    expect(await env.step('<answer>the Tubeck River</answer>')).toMatchObject({ reward: 0, terminated: true });
    await resetTo(env, 'Marstinburg');
    expect(await env.step('\\boxed{the Marhound River}')).toMatchObject({
      reward: 0,
      terminated: true,
      info: { action: null, metrics: { action_is_valid: false } },
    });
  });

  test('search: a <search> query runs BM25 over the built-in corpus and shows passages as GEM prints them; after max_tool_uses the reply is graded', async () => {
    const env = qaEnv({ tool_wrapper: SEARCH });
    const observation = await resetTo(env, 'Marstinburg');
    expect(observation).toContain('<search> your query here </search>');
    const found = (await env.step('<think>need facts</think><search>Marstinburg river</search>')) as StepResult;
    expect(found.observation).toStartWith('Doc 1(Title: ');
    expect(found.observation).toContain('Marhound');
    expect(found.observation.match(/^Doc \d\(Title: /gm)).toHaveLength(3);
    expect(found).toMatchObject({ reward: 0.2, terminated: false, info: { metrics: { tool_use_counter: 1, tool_success_counter: 1 } } });
    const second = (await env.step('<search>Marhound</search>')) as StepResult;
    expect(second.observation).toEndWith('Reached the maximum number of tool use. Please output final answer directly.');
    const graded = (await env.step('<search>more</search><answer>the Marhound River</answer>')) as StepResult;
    expect(graded).toMatchObject({ reward: 1, terminated: true, info: { metrics: { tool_use_counter: 2 } } });
  });

  test("env_config.max_steps truncates an episode that keeps calling tools; the tool's instruction follows the question", async () => {
    const env = qaEnv({ max_steps: 2, tool_wrapper: { ...SEARCH, wrapper_args: { max_tool_uses: null } } });
    await resetTo(env, 'Marstinburg');
    expect(await env.step('<search>a</search>')).toMatchObject({ truncated: false });
    expect(await env.step('<search>b</search>')).toMatchObject({ truncated: true, terminated: false, reward: 0 });
  });

  test("search_url (GEM's retrieval server) and an MCP server_url that is not on loopback are refused in one line", () => {
    const url = gemQa.config.safeParse({
      ...HOTPOT,
      tool_wrapper: { tool_configs: [{ tool_id: 'search', tool_args: { search_url: 'http://localhost:8000/retrieve' } }] },
    });
    expect(url.error!.issues[0]!.message).toContain("GEM's retrieval server (msgpack over HTTP) is not supported here");
    const placeholder = gemQa.config.safeParse({ ...HOTPOT, tool_wrapper: { tool_configs: [{ tool_id: 'mcp', tool_args: { server_url: 'xxx' } }] } });
    expect(placeholder.error!.issues[0]).toMatchObject({
      path: ['tool_wrapper', 'tool_configs', 0, 'tool_args', 'server_url'],
      message: "'xxx' is not a URL (expected one like http://127.0.0.1:8000/mcp)",
    });
    const remote = gemQa.config.safeParse({
      ...HOTPOT,
      tool_wrapper: { tool_configs: [{ tool_id: 'mcp', tool_args: { server_url: 'http://example.com/mcp' } }] },
    });
    expect(remote.error!.issues[0]!.message).toContain('is not on loopback');
    expect(gemQa.config.safeParse({ dataset_name: 'axon-rl/HotpotQA', split: 'train' }).error!.issues[0]!.message).toStartWith(
      'axon-rl/HotpotQA is a Hugging Face hub dataset, which is not downloaded here; give a local .jsonl/.json file of {problem, answer} rows',
    );
  });
});

describe('gem_logic (logic:RuleTaker-d*)', () => {
  test('question_key is question and the answer is read from the last \\boxed{}, as GEM registers RuleTaker', async () => {
    const env = new gemLogic.env(gemLogic.config.parse({ dataset_name: 'test/fixtures/gem/ruletaker.jsonl' }), new PluginHost(ROOT).envContext()) as Env;
    await resetTo(env, 'The cat is big');
    expect(await env.step('<answer>False</answer> \\boxed{true}')).toMatchObject({ reward: 1, terminated: true });
    await resetTo(env, 'The cat is big');
    expect(await env.step('<answer>True</answer>')).toMatchObject({ reward: 0, info: { metrics: { action_is_valid: false } } });
  });
});

describe('agentic plugins check', () => {
  const cases: Array<[string, EnvPlugin, Record<string, unknown>]> = [
    ['gem_math', gemMath as unknown as EnvPlugin, { dataset_name: 'test/fixtures/gem/dapo.jsonl', question_key: 'prompt', answer_key: 'solution' }],
    ['gem_qa', gemQa as unknown as EnvPlugin, { ...HOTPOT, tool_wrapper: SEARCH }],
    ['gem_logic', gemLogic as unknown as EnvPlugin, { dataset_name: 'test/fixtures/gem/ruletaker.jsonl' }],
  ];
  for (const [name, plugin, config] of cases) {
    test(`${name} passes every check; an unreadable answer ends the episode as an invalid action`, async () => {
      const report = await checkEnv(plugin, config, { context: new PluginHost(ROOT).envContext(), episodes: 4 });
      expect(report.checks.filter((c) => c.status === 'fail')).toEqual([]);
      expect(report.checks.find((c) => c.name === 'invalid_action')).toMatchObject({ status: 'pass' });
      expect(report.passed).toBe(true);
    });
  }
});
