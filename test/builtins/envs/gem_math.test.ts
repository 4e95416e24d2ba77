import { describe, expect, test } from 'bun:test';
import gemMath from '../../../plugins/envs/gem_math';
import { mathAnswerCorrect } from '../../../plugins/envs/_gem/math_grade';
import { loadConfig } from '../../../src/config/load';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, StepResult } from '../../../src/sdk/types';
import { ROOT, scratch } from '../../helpers';
import { missing } from '../../system_tools';

const DAPO = 'test/fixtures/gem/dapo.jsonl';
const KEYS = { question_key: 'prompt', answer_key: 'solution' };
const PYTHON = [{ tool_id: 'python_code', tool_args: { timeout: 5 } }];

function mathEnv(config: Record<string, unknown>): Env {
  return new gemMath.env(gemMath.config.parse({ dataset_name: DAPO, ...KEYS, ...config }), new PluginHost(ROOT).envContext()) as Env;
}

/** The seed whose episode asks `question` (rows are picked by the seed). */
async function resetTo(env: Env, fragment: string): Promise<string> {
  for (let seed = 0; seed < 200; seed++) {
    const { observation } = await env.reset(seed);
    if (observation.includes(fragment)) return observation;
  }
  throw new Error(`no seed gives ${fragment}`);
}

describe('gem_math (roll_math, math:*)', () => {
  test('the question is the observation; the last \\boxed{} is graded: right 1, wrong 0, none 0 and invalid; the episode ends', async () => {
    const env = mathEnv({});
    expect(await resetTo(env, '17 times 23')).toBe('What is 17 times 23?');
    const right = (await env.step('17*23 = 391, not \\boxed{390}... so \\boxed{391}')) as StepResult;
    expect(right).toMatchObject({ reward: 1, terminated: true, info: { metrics: { success: true, action_is_valid: true, raw_reward: 1 } } });
    await resetTo(env, '17 times 23');
    const wrong = (await env.step('\\boxed{390}')) as StepResult;
    expect(wrong).toMatchObject({ reward: 0, terminated: true, info: { metrics: { success: false, action_is_valid: true } } });
    await resetTo(env, '17 times 23');
    const none = (await env.step('It is 391.')) as StepResult;
    expect(none).toMatchObject({ reward: 0, terminated: true, info: { action: null, metrics: { action_is_valid: false } } });
  });

  test("GEM's grading: fractions, decimals, tuples, units and \\text{} agree; unreduced fractions and other numbers do not", () => {
    expect(mathAnswerCorrect('\\dfrac{3}{4}', '\\frac{3}{4}')).toBe(true);
    expect(mathAnswerCorrect('0.75', '\\frac{3}{4}')).toBe(true);
    expect(mathAnswerCorrect('6/8', '\\frac{3}{4}')).toBe(false);
    expect(mathAnswerCorrect('(2,1)', '(2, 1)')).toBe(true);
    expect(mathAnswerCorrect('(1,2)', '(2, 1)')).toBe(false);
    expect(mathAnswerCorrect('391 \\text{ apples}', '391')).toBe(true);
    expect(mathAnswerCorrect('x = 5', '5')).toBe(true);
    expect(mathAnswerCorrect('1,000', '1000')).toBe(true);
    expect(mathAnswerCorrect('7', ['6', '7'])).toBe(true);
    expect(mathAnswerCorrect('392', '\\boxed{391}')).toBe(false);
  });

  test('a Hugging Face hub dataset_name is refused in one line naming the local file to give', () => {
    const parsed = gemMath.config.safeParse({ dataset_name: 'open-r1/DAPO-Math-17k-Processed', ...KEYS });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.message).toBe(
      'open-r1/DAPO-Math-17k-Processed is a Hugging Face hub dataset, which is not downloaded here; give a local .jsonl/.json file of {prompt, solution} rows (question_key/answer_key) as dataset_name=path/to/file.jsonl (or a folder ./data holding <split>.jsonl)',
    );
    expect(gemMath.config.safeParse({ dataset_name: 'data/train.parquet' }).error!.issues[0]!.message).toContain('parquet is not read here');
  });

  test('a row without the question_key field is a one-line error naming the file and line', () => {
    expect(() => mathEnv({ question_key: 'problem' })).toThrow(`${DAPO}:1: the row needs a non-empty 'problem' string (question_key); it has prompt, solution`);
  });

  test('a folder is read by split; a file names its own split', () => {
    const dir = scratch({ 'data/train.jsonl': '{"problem": "1+1?", "answer": "2"}\n' });
    const env = new gemMath.env(gemMath.config.parse({ dataset_name: './data', split: 'train' }), new PluginHost(dir).envContext()) as Env;
    expect((env.reset(0) as { observation: string }).observation).toBe('1+1?');
    expect(() => mathEnv({ split: 'test' })).toThrow("split 'test': dataset_name test/fixtures/gem/dapo.jsonl holds one split, 'dapo'");
  });

  test('an env manager reads the rows in epochs: every row once per epoch', async () => {
    const env = mathEnv({});
    const seen = [];
    for (let draw = 0; draw < 4; draw++) seen.push((await env.reset(0, { draw, streamSeed: 5 })).observation);
    expect(new Set(seen).size).toBe(4);
    expect(gemMath.epochRows!(gemMath.config.parse({ dataset_name: DAPO, ...KEYS }), new PluginHost(ROOT).envContext())).toBe(4);
  });

  test.skipIf(missing('sandbox'))(
    "python_code: a <code> block runs in the sandbox, its output comes back as GEM's 'Code execution result'; tool rewards and max_tool_uses as GEM's wrapper",
    async () => {
      const env = mathEnv({ tool_wrapper: { wrapper_args: { tool_reward: 0.05, tool_success_reward: 0.1, max_tool_uses: 1 }, tool_configs: PYTHON } });
      const first = await resetTo(env, '17 times 23');
      expect(first).toContain('<code>');
      const call = (await env.step('Let me compute. <code>print(17 * 23)</code>')) as StepResult;
      expect(call.observation).toStartWith('Code execution result: 391\n');
      expect(call.observation).toContain('Reached the maximum number of tool use.');
      expect(call).toMatchObject({ reward: 0.15000000000000002, terminated: false, info: { metrics: { tool_use_counter: 1, tool_success_counter: 1 } } });
      // the one use is spent: the next reply is graded, code or not
      const answer = (await env.step('<code>print(1)</code> so \\boxed{391}')) as StepResult;
      expect(answer).toMatchObject({ reward: 1, terminated: true, info: { metrics: { tool_use_counter: 1 } } });
    },
  );

  test.skipIf(missing('sandbox'))('python_code: a failing run shows its error and earns no success reward; a run past its timeout is cut', async () => {
    const env = mathEnv({
      tool_wrapper: {
        wrapper_args: { tool_success_reward: 0.1 },
        tool_configs: [{ tool_id: 'python_code', tool_args: { timeout: 1, keep_error_last_line: true } }],
      },
    });
    await resetTo(env, '17 times 23');
    const failed = (await env.step('<code>raise ValueError("no")</code>')) as StepResult;
    expect(failed.observation).toBe('Code execution result: ValueError: no\n');
    expect(failed).toMatchObject({ reward: 0, info: { metrics: { tool_use_counter: 1, tool_success_counter: 0 } } });
    const slow = (await env.step('```python\nimport time\ntime.sleep(5)\n```')) as StepResult;
    expect(slow.observation).toContain('timed out after 1 s');
    expect(slow.info.metrics.tool_success_counter).toBe(0);
  });

  test("ROLL's roll_math entry with tool_wrapper (beside env_config) validates; the python tool asks for the sandbox; code:* is refused in one line", async () => {
    const dir = scratch({
      'gem.yaml': [
        'pretrain: agentic:nano',
        'train_env_manager: {tags: [dapo], num_env_groups: 1, group_size: 1}',
        'custom_envs:',
        '  dapo:',
        '    env_type: roll_math',
        `    env_config: {dataset_name: ${ROOT}/${DAPO}, question_key: prompt, answer_key: solution, max_steps: 4}`,
        '    tool_wrapper:',
        '      wrapper_args: {tool_reward: 0, tool_success_reward: 0, max_tool_uses: 1}',
        '      tool_configs: [{tool_id: python_code, tool_args: {timeout: 5, sandbox_type: none, keep_error_last_line: false}}]',
      ].join('\n'),
    });
    const host = new PluginHost(dir);
    const { config } = await loadConfig({ cwd: dir, configFile: 'gem.yaml' }, host);
    expect(config.custom_envs.dapo!.env_config).toMatchObject({
      max_steps: 4,
      tool_wrapper: { wrapper_args: { max_tool_uses: 1 }, tool_configs: [{ tool_id: 'python_code' }] },
    });
    const { sandboxedPluginsUsed } = await import('../../../src/cli/sandbox_check');
    expect(await sandboxedPluginsUsed(config, host)).toEqual(['tool python_code in dapo']);
    await expect(
      loadConfig({ cwd: dir, configFile: 'gem.yaml', overrides: ['custom_envs.dapo.tool_wrapper.tool_configs=[{tool_id: shell}]'] }, host),
    ).rejects.toThrow('custom_envs.dapo.tool_wrapper.tool_configs[0].tool_id');
    await expect(
      loadConfig({ cwd: dir, configFile: 'gem.yaml', overrides: ['custom_envs.dapo.env_type=bandit', '~custom_envs.dapo.env_config'] }, host),
    ).rejects.toThrow("custom_envs.dapo.tool_wrapper: env 'bandit' takes no tool_wrapper");
    await expect(loadConfig({ cwd: dir, configFile: 'gem.yaml', overrides: ['custom_envs.dapo.env_type=code:CodeContest'] }, host)).rejects.toThrow(
      "custom_envs.dapo.env_type: env 'code:CodeContest': GEM's code envs grade by stdin/stdout tests",
    );
  });
});
