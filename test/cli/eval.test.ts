import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { optimalSuccess } from '../../plugins/envs/frozen_lake/optimum';
import { lakeOf } from '../../plugins/envs/frozen_lake/suite';
import { loadSuite } from '../../src/config/suites';
import { agentic, lines, scratch } from '../helpers';
import { microPolicyFolder } from '../train/helpers';
import { AGENT_REASON, failingAgentFolder } from './failing_agent';

const SMALL = ['val_batch_size=8', 'val_env_manager.num_env_groups=8', 'custom_envs.FrozenLake.max_steps=2', 'custom_envs.FrozenLake.max_tokens_per_step=8'];

function readJson(path: string) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

describe('agentic eval', () => {
  test('--policy random plays FrozenLake without a model: a table per tag and the same as JSON', async () => {
    const out = join(scratch(), 'eval.json');
    const { code, stdout, stderr } = await agentic(['eval', '--config-name', 'frozen_lake', '--policy', 'random', '--out', out, ...SMALL]);
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    const [header, row] = lines(stdout);
    expect(header).toMatch(/^tag +episodes +success +score mean +min +max +valid actions +actions +response tokens +failed$/);
    expect(row).toMatch(/^FrozenLake +8 +\d+\.\d%/);
    const json = readJson(out);
    expect(json).toMatchObject({ policy: 'random', model: null, episodes: 8 });
    expect(json.tags.FrozenLake.episodes).toBe(8);
    // random actions are always well formed
    expect(json.tags.FrozenLake.action_is_valid).toBe(1);
    expect(json.metrics['val/env/FrozenLake/action_is_valid']).toBe(1);
    expect(json.tags.FrozenLake.num_actions).toBeGreaterThan(0);
    expect(json.tags.FrozenLake.num_actions).toBeLessThanOrEqual(2);
  });

  test('the same seed plays the same episodes', async () => {
    const [a, b] = [join(scratch(), 'a.json'), join(scratch(), 'b.json')];
    await agentic(['eval', '--config-name', 'frozen_lake', '--policy', 'random', '--out', a, ...SMALL]);
    await agentic(['eval', '--config-name', 'frozen_lake', '--policy', 'random', '--out', b, ...SMALL]);
    expect(readJson(a).tags).toEqual(readJson(b).tags);
  });

  test("a random-init tiny model plays FrozenLake with val_env_manager's greedy decoding", async () => {
    const out = join(scratch(), 'eval.json');
    const { code, stdout, stderr } = await agentic([
      'eval',
      '--config-name',
      'frozen_lake',
      '--out',
      out,
      'val_batch_size=4',
      'val_env_manager.num_env_groups=4',
      'custom_envs.FrozenLake.max_steps=2',
      'custom_envs.FrozenLake.max_tokens_per_step=6',
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain('policy: agentic:tiny (random init, seed 42)');
    expect(lines(stdout)[1]).toMatch(/^FrozenLake +4 /);
    const json = readJson(out);
    expect(json).toMatchObject({ policy: 'model', episodes: 4, generating_args: { do_sample: false, temperature: 0 } });
    expect(json.model).toContain('agentic:tiny');
    // every turn answered within its 6-token budget
    expect(json.tags.FrozenLake.response_length).toBeGreaterThan(0);
    expect(json.tags.FrozenLake.response_length).toBeLessThanOrEqual(12);
  }, 60_000);

  test('bad flags are one-line errors', async () => {
    for (const [args, message] of [
      [['eval', '--policy', 'smart'], "--policy: expected one of model, random, got 'smart'"],
      [['eval', '--policy', 'random', '--out', '/proc/nope/eval.json'], '--out /proc/nope/eval.json: cannot write there'],
      [['eval', 'val_env_manager.llm_proxy.proxy_type=oracle'], 'val_env_manager.llm_proxy.proxy_type: expected one of policy, random, sglang, openai'],
    ] as const) {
      const { code, stderr, stdout } = await agentic([...args]);
      expect(code).toBe(2);
      expect(lines(stderr)).toHaveLength(1);
      expect(stderr).toContain(message);
      expect(stdout).toBe('');
    }
  });
});

describe('agentic eval on a pinned suite', () => {
  test('plays every episode of val_suite, --seeds N times, and reports success and score with 95% intervals, and the optimum', async () => {
    const out = join(scratch(), 'eval.json');
    const { code, stdout, stderr } = await agentic([
      'eval',
      '--config-name',
      'agentic',
      '--policy',
      'random',
      '--seeds',
      '2',
      '--out',
      out,
      'custom_envs.FrozenLake.max_steps=2',
    ]);
    expect(stderr).toContain('seed 43: playing 200 episodes of frozen_lake/v2');
    expect(code).toBe(0);
    const json = readJson(out);
    expect(json).toMatchObject({ suite: 'frozen_lake/v2', seeds: [42, 43], episodes: 400 });
    const { success, score } = json.held_out;
    expect(success.low).toBeLessThanOrEqual(success.rate);
    expect(success.high).toBeGreaterThanOrEqual(success.rate);
    expect(score.low).toBeLessThanOrEqual(score.mean);
    const f = (x: number) => x.toFixed(3);
    // two moves: the optimum is the share of maps whose goal is at most two steps from the start
    const optimum =
      loadSuite('frozen_lake/v2').episodes.filter((map) => {
        const lake = lakeOf(map);
        return optimalSuccess(lake, lake.start, 2, false) === 1;
      }).length / 200;
    expect(json.held_out.optimum).toBeCloseTo(optimum, 12);
    expect(json.held_out.of_optimum).toBeCloseTo(success.rate / optimum, 12);
    expect(stdout).toContain(
      `frozen_lake/v2: success ${f(success.rate)} [${f(success.low)}, ${f(success.high)}] (${success.successes}/400), score ${f(score.mean)} [${f(score.low)}, ${f(score.high)}], optimum ${f(optimum)}, of optimum ${f(success.rate / optimum)}`,
    );
  });

  test('--seeds N > 1 is refused for a model that decodes greedily: its passes would be copies', async () => {
    const { code, stderr } = await agentic(['eval', '--config-name', 'agentic', '--seeds', '3']);
    expect(code).toBe(2);
    expect(lines(stderr).at(-1)).toStartWith('error: --seeds 3: val_env_manager decodes greedily, so the passes would replay the same episodes the same way');
  });

  test('--seeds takes a whole number of passes', async () => {
    const { code, stderr } = await agentic(['eval', '--config-name', 'agentic', '--policy', 'random', '--seeds', '0']);
    expect(code).toBe(2);
    expect(lines(stderr)).toEqual(["error: --seeds: expected a whole number of passes, 1 or more, got '0'"]);
  });
});

describe('agentic eval of an outside agent that fails every other episode', () => {
  test('the table has a failed column and, under it, each kind with its count and first reason; eval.json keeps them', async () => {
    const dir = failingAgentFolder(await microPolicyFolder(), { everyOther: true });
    const { code, stdout, stderr } = await agentic(['eval', '-c', 'config.yaml', '--out', 'eval.json'], { cwd: dir });
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    const [header, row, reasons] = lines(stdout);
    expect(header).toEndWith('  failed');
    expect(row).toMatch(/^Calc +4 .* 50\.0%$/);
    expect(reasons).toStartWith('Calc: failed 2/4: env_failure 2 (env Calc#');
    expect(reasons).toEndWith(`: ${AGENT_REASON})`);
    const { failed, failures } = readJson(join(dir, 'eval.json')).tags.Calc;
    expect(failed).toBe(0.5);
    expect(failures.kinds[0].first).toEndWith(AGENT_REASON);
    expect(failures).toEqual({ failed: 2, episodes: 4, kinds: [{ kind: 'env_failure', count: 2, first: expect.stringMatching(/^env Calc#\d: /) }] });
  }, 60_000);
});

describe('repeated --checkpoint', () => {
  test('every value is kept, in order', async () => {
    const { repeatedOption } = await import('../../src/cli/eval');
    expect(repeatedOption(['--checkpoint', 'a', 'x=1', '--checkpoint=b', '--seeds', '2', '--', '--checkpoint', 'c'], 'checkpoint')).toEqual(['a', 'b']);
  });
});
