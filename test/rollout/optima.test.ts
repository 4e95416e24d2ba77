import { describe, expect, test } from 'bun:test';
import { optimalSuccess } from '../../plugins/envs/frozen_lake/optimum';
import { lakeOf } from '../../plugins/envs/frozen_lake/suite';
import { loadConfig } from '../../src/config/load';
import { loadSuite } from '../../src/config/suites';
import { PluginHost } from '../../src/host/plugin_host';
import { evaluate } from '../../src/rollout/evaluate';
import { heldOut, heldOutLine } from '../../src/rollout/held_out';
import { withOptima } from '../../src/rollout/optima';
import type { Episode } from '../../src/rollout/types';

const host = new PluginHost();
const config = async (name: string, overrides: string[] = []) => (await loadConfig({ configName: name, overrides }, host)).config;
const scored = (success: number, optimum?: number) => ({ metrics: { success }, score: success, ...(optimum === undefined ? {} : { optimum }) });

describe("the optimum in an evaluation's held-out result", () => {
  test('the mean optimum and the share of it reached; absent unless every episode has one', () => {
    const result = heldOut([scored(1, 1), scored(0, 0.5), scored(1, 1), scored(0, 0.5)], 1);
    expect(result.optimum).toBe(0.75);
    expect(result.of_optimum).toBeCloseTo(0.5 / 0.75, 12);
    expect(heldOutLine('frozen_lake/v2', result)).toContain(`, optimum 0.750, of optimum 0.667 (95% intervals: Wilson, bootstrap)`);
    const partial = heldOut([scored(1, 1), scored(0)], 1);
    expect('optimum' in partial || 'of_optimum' in partial).toBe(false);
    expect(heldOutLine('x', partial)).not.toContain('optimum');
    // nothing to reach: the optimum, without a share of it
    const unreachable = heldOut([scored(0, 0), scored(0, 0)], 1);
    expect(unreachable.optimum).toBe(0);
    expect(unreachable.of_optimum).toBeUndefined();
    expect(heldOutLine('x', unreachable)).toContain(', optimum 0.000 (95%');
  });

  test("agentic eval's result on slippery lakes of frozen_lake/v2: each episode's optimum from its map, their mean, success over it", async () => {
    const slippery = await config('agentic', [
      'val_suite=frozen_lake/v2',
      'val_env_manager.llm_proxy.proxy_type=random',
      'custom_envs.FrozenLake.env_config.is_slippery=true',
      'custom_envs.FrozenLake.max_steps=4',
    ]);
    const played = await evaluate(slippery, host, () => {}, 12);
    const episodes = played.batch.episodes;
    expect(episodes).toHaveLength(12);
    const optima = loadSuite('frozen_lake/v2')
      .episodes.slice(0, 12)
      .map((map) => {
        const lake = lakeOf(map);
        return optimalSuccess(lake, lake.start, 4, true);
      });
    expect(episodes.map((e) => e.optimum)).toEqual(optima);
    // slippery ice: some optimum below 1
    expect(optima.some((o) => o > 0 && o < 1)).toBe(true);
    const held = played.json.held_out;
    expect(held.optimum).toBeCloseTo(optima.reduce((a, b) => a + b, 0) / 12, 12);
    expect(held.of_optimum).toBeCloseTo(held.success!.rate / held.optimum!, 12);
    // episodes drawn by seed, without a suite, have their optimum too
    const drawn = await evaluate({ ...slippery, val_suite: null }, host, () => {}, 4);
    expect(drawn.batch.episodes.every((e) => typeof e.optimum === 'number')).toBe(true);
  }, 60_000);

  test('an env without optimalSuccess gives none, and the result reports none', async () => {
    const bandit = await config('bandit_grpo');
    const tag = bandit.val_env_manager.tags[0]!;
    const episodes = [0, 1].map((seed) => ({ tag, seed, metrics: { success: 1 }, score: 1 }) as unknown as Episode);
    const withNone = await withOptima(bandit, host, episodes);
    expect(withNone.every((e) => e.optimum === undefined)).toBe(true);
    expect(heldOut(withNone, 1).optimum).toBeUndefined();
  });
});
