import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load';
import { loadSuite } from '../../src/config/suites';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { PluginError } from '../../src/errors';
import { defineEnv } from '../../src/sdk/define';
import { PluginHost } from '../../src/host/plugin_host';
import { checkDefinition } from '../../src/host/registry';
import { savedEpisodeOf } from '../../src/render/episodes_file';
import { replayEpisode, ReplayError } from '../../src/render/replay';
import { ChatFormat } from '../../src/rollout/chat';
import { EnvManager } from '../../src/rollout/env_manager';
import { RandomPolicy } from '../../src/rollout/policy';
import type { Episode } from '../../src/rollout/types';
import { scratch } from '../helpers';
import { AGENTS, calculatorYaml, collect, moduleAgent, ScriptedPolicy } from '../rollout/calculator_agents';
import { configFrom, hostWith } from '../rollout/helpers';

// slippery ice: the replay has to reproduce the env's own seeded slips, not just the moves
const YAML = `
seed: 11
rollout_batch_size: 4
val_batch_size: 12
custom_envs:
  Lake:
    env_type: frozen_lake
    max_steps: 6
    max_tokens_per_step: 12
    env_config: {size: 4, is_slippery: true}
  Bandit:
    env_type: bandit
    max_steps: 1
    max_tokens_per_step: 16
train_env_manager: {num_env_groups: 4, group_size: 1, tags: [Lake]}
val_env_manager: {num_env_groups: 12, group_size: 1, tags: [Lake, Bandit], llm_proxy: {proxy_type: random}}
`;

const host = new PluginHost();
const { config } = await loadConfig({ configFile: join(scratch({ 'c.yaml': YAML }), 'c.yaml') }, host);

async function play(): Promise<Episode[]> {
  const chat = new ChatFormat(defaultTokenizer());
  const manager = await EnvManager.build('val', config, host);
  try {
    return (await manager.collect(12, new RandomPolicy(chat), chat)).episodes;
  } finally {
    await manager.close();
  }
}

const episodes = await play();
const lakes = episodes.filter((e) => e.tag === 'Lake');
const bandit = episodes.find((e) => e.tag === 'Bandit')!;
// the longest lake episode, so divergences can be placed mid-episode
const lake = lakes.reduce((a, b) => (b.turns.length > a.turns.length ? b : a));

describe('replayEpisode', () => {
  test("a rollout's episode replays exactly: same observations and rewards, one picture per state", async () => {
    expect(lake.turns.length).toBeGreaterThanOrEqual(2);
    const replay = await replayEpisode(config, host, lake);
    expect(replay.turns.map((t) => t.observation)).toEqual(lake.turns.map((t) => t.observation));
    expect(replay.turns.map((t) => t.reward)).toEqual(lake.turns.map((t) => t.reward));
    expect(replay.turns.map((t) => t.action)).toEqual(lake.turns.map((t) => t.action));
    expect(replay.finalObservation).toBe(lake.finalObservation);
    expect(replay.instruction).toBe(lake.instruction);
    expect(replay.endReason).toBe(lake.endReason);
    expect(replay.frames).toHaveLength(lake.turns.length + 1);
    // a 4x4 lake at 20 px a cell
    for (const frame of replay.frames!) expect([frame.width, frame.height, frame.data.length]).toEqual([80, 80, 80 * 80 * 3]);
    // the player moves (or falls, or reaches the goal) at least once, so not every picture is the same
    expect(new Set(replay.frames!.map((f) => Buffer.from(f.data).toString('base64'))).size).toBeGreaterThan(1);
  });

  test('captions name the turn, the action and the reward, and the score at the end', async () => {
    const replay = await replayEpisode(config, host, lake);
    expect(replay.captions).toHaveLength(replay.frames!.length);
    expect(replay.captions[0]).toBe(`start\nseed ${lake.seed}`);
    lake.turns.forEach((turn, i) => expect(replay.captions[i + 1]!.startsWith(`turn ${i + 1}: ${turn.action}\nreward ${turn.reward}`)).toBe(true));
    expect(replay.captions.at(-1)!.endsWith(`\nscore ${lake.score}`)).toBe(true);
  });

  test('an env that draws no picture replays with frames null and a full record', async () => {
    const replay = await replayEpisode(config, host, bandit);
    expect(replay.frames).toBeNull();
    expect(replay.turns.map((t) => t.reward)).toEqual(bandit.turns.map((t) => t.reward));
    expect(replay.endReason).toBe(bandit.endReason);
  });

  test('an episode saved with only its responses is filled in by the replay', async () => {
    const replay = await replayEpisode(config, host, { tag: lake.tag, seed: lake.seed, turns: lake.turns.map((t) => ({ responseText: t.responseText })) });
    expect(replay.turns.map((t) => t.observation)).toEqual(lake.turns.map((t) => t.observation));
    expect(replay.finalObservation).toBe(lake.finalObservation);
  });

  test('a replay that diverges is a one-line ReplayError naming the episode and the turn', async () => {
    const label = 'episode 3 (Lake, seed 1)';
    const cases: Array<[Parameters<typeof replayEpisode>[2], RegExp]> = [
      [
        { ...lake, turns: lake.turns.map((t, i) => (i === 1 ? { ...t, observation: 'a different board' } : t)) },
        /^episode 3 \(Lake, seed 1\): the replay diverges at turn 2: the observation differs from the recorded one \(line 1: recorded "a different board", replayed "/,
      ],
      [{ ...lake, turns: lake.turns.map((t, i) => (i === 0 ? { ...t, reward: t.reward + 0.5 } : t)) }, /diverges at turn 1: reward -?\d+(\.\d+)?, recorded /],
      [{ ...lake, finalObservation: 'elsewhere' }, /diverges at the end: the final observation differs/],
      [{ ...lake, seed: lake.seed + 1 }, /diverges at turn 1: the observation differs/],
      [{ tag: 'Nowhere', seed: 1, turns: [] }, /^episode 3 \(Lake, seed 1\): tag 'Nowhere' is not in custom_envs \(defined: Lake, Bandit\)$/],
    ];
    for (const [episode, message] of cases) {
      const error = await replayEpisode(config, host, episode, label).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplayError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
  });

  test('turns recorded after the env ended the episode, or an ending the replay does not reach, diverge', async () => {
    const ended = lakes.find((e) => e.endReason === 'terminated' && e.turns.length >= 2);
    expect(ended).toBeDefined();
    const extra = { ...ended!, turns: [...ended!.turns, { responseText: '<answer>Up</answer>' }], finalObservation: undefined, endReason: undefined };
    await expect(replayEpisode(config, host, extra)).rejects.toThrow(
      `the env ended the episode (terminated) after turn ${ended!.turns.length}, but ${ended!.turns.length + 1} turns are recorded`,
    );
    const cut = { ...ended!, turns: ended!.turns.slice(0, -1), finalObservation: undefined };
    await expect(replayEpisode(config, host, cut)).rejects.toThrow('the recording ended terminated, the replay with the episode still running');
  });
});

describe('replayEpisode with an env that fails', () => {
  // counts to three; the response "boom" makes step() throw, "draw-text" makes render('rgb') return text
  const counter = defineEnv({
    name: 'render_test_counter',
    description: 'test env',
    env: class {
      private n = 0;
      private mode = '';
      reset() {
        this.n = 0;
        return { observation: 'n = 0', info: { instruction: 'count' } };
      }
      step(response: string) {
        if (response === 'boom') throw new Error('boom');
        this.mode = response;
        this.n += 1;
        return { observation: `n = ${this.n}`, reward: 1, terminated: this.n >= 3, truncated: false, info: { metrics: {}, action: 'inc' } };
      }
      render(mode: 'text' | 'rgb') {
        if (mode === 'text') return `n = ${this.n}`;
        if (this.mode === 'draw-text') return 'not a picture';
        return { width: 2, height: 1, data: new Uint8Array(6).fill(this.n) };
      }
      close() {}
      sampleRandomAction() {
        return 'inc';
      }
    },
  });
  const failingHost = new PluginHost();
  failingHost.registry.register(checkDefinition(counter, 'test'), 'test');
  const yaml = `
custom_envs:
  Counter: {env_type: render_test_counter, max_steps: 5}
train_env_manager: {num_env_groups: 1, group_size: 1, tags: [Counter]}
val_env_manager: {num_env_groups: 1, group_size: 1, tags: [Counter]}
`;
  const loaded = loadConfig({ configFile: join(scratch({ 'c.yaml': yaml }), 'c.yaml') }, failingHost);

  test('a failure the recording also ended with is replayed up to it; any other failure is an error', async () => {
    const { config: c } = await loaded;
    const ok = await replayEpisode(c, failingHost, {
      tag: 'Counter',
      seed: 1,
      turns: [{ responseText: 'inc' }, { responseText: 'boom' }],
      endReason: 'env_failure',
    });
    expect(ok.endReason).toBe('env_failure');
    expect(ok.failure).toContain('step() threw: boom');
    expect(ok.turns.map((t) => t.reward)).toEqual([1, 0]);
    // pictures of the start and of turn 1; the failed turn has none, and neither has a caption
    expect(ok.frames!.map((f) => f.data[0])).toEqual([0, 1]);
    expect(ok.captions).toHaveLength(2);
    await expect(
      replayEpisode(c, failingHost, { tag: 'Counter', seed: 1, turns: [{ responseText: 'boom' }, { responseText: 'inc' }], endReason: 'env_failure' }),
    ).rejects.toThrow('episode (Counter, seed 1): the env failed on replay at turn 1: env Counter: step() threw: boom');
    await expect(replayEpisode(c, failingHost, { tag: 'Counter', seed: 1, turns: [{ responseText: 'boom' }] })).rejects.toThrow(ReplayError);
  });

  test('a failed episode saved with its reason shows as recorded where the replay fails otherwise; a timeout keeps its reason', async () => {
    const { config: c } = await loaded;
    const turns = [
      { responseText: 'boom', observation: 'n = 0', reward: 0 },
      { responseText: 'inc', observation: 'n = 0', reward: 1 },
    ];
    const failure = 'env Counter: a tool server went away';
    const shown = await replayEpisode(c, failingHost, { tag: 'Counter', seed: 1, turns, endReason: 'env_failure', failure, instruction: 'count' });
    expect(shown).toEqual({
      instruction: 'count',
      turns: turns.map((t) => ({ ...t, action: undefined, metrics: {}, metricsAgg: {} })),
      finalObservation: '',
      endReason: 'env_failure',
      failure,
      frames: null,
      captions: [],
    });
    // recorded as failed, replayed to its end: without the line a divergence, with it the recording
    const ended = { tag: 'Counter', seed: 1, turns: ['inc', 'inc', 'inc'].map((responseText) => ({ responseText })), endReason: 'env_failure' as const };
    await expect(replayEpisode(c, failingHost, ended)).rejects.toThrow(
      'the replay diverges at the end: the recording ended env_failure, the replay terminated',
    );
    expect((await replayEpisode(c, failingHost, { ...ended, failure })).failure).toBe(failure);
    const timeout = "the policy's response did not come within the episode budget of 5 s";
    const timedOut = await replayEpisode(c, failingHost, { tag: 'Counter', seed: 1, turns: [{ responseText: 'inc' }], endReason: 'timeout', failure: timeout });
    expect([timedOut.endReason, timedOut.failure, timedOut.frames?.length]).toEqual(['timeout', timeout, 2]);
  });

  test('a render that returns text for a picture is a one-line plugin error', async () => {
    const { config: c } = await loaded;
    const error = await replayEpisode(c, failingHost, { tag: 'Counter', seed: 1, turns: [{ responseText: 'draw-text' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginError);
    expect((error as Error).message).toStartWith('episode (Counter, seed 1): env Counter: render() returned a malformed result');
  });
});

describe("replaying an outside agent's episode", () => {
  test('the reset and the scoring of its answer are replayed, its model calls shown as recorded; a failed one shows as recorded, with its reason', async () => {
    const agentHost = hostWith();
    const yaml = calculatorYaml(moduleAgent(join(AGENTS, 'openai_calculator.ts')));
    const [played] = (await collect(yaml, new ScriptedPolicy(), agentHost)).episodes;
    // two model calls: the calculator's, then the answer
    expect(played!.turns).toHaveLength(2);
    const agentConfig = await configFrom(yaml, agentHost);
    const replay = await replayEpisode(agentConfig, agentHost, savedEpisodeOf(played!));
    expect(replay.turns.map((t) => [t.observation, t.responseText, t.reward])).toEqual(played!.turns.map((t) => [t.observation, t.responseText, t.reward]));
    expect([replay.endReason, replay.failure, replay.turns.at(-1)!.metrics.success]).toEqual(['terminated', null, true]);
    const wrong = savedEpisodeOf({ ...played!, turns: played!.turns.map((t, i) => (i === 1 ? { ...t, reward: 0 } : t)) });
    await expect(replayEpisode(agentConfig, agentHost, wrong)).rejects.toThrow('the replay diverges scoring the answer: reward 1, recorded 0');
    const failure = 'env Calc#0: runAgent() threw: lost my way';
    const failed = await replayEpisode(agentConfig, agentHost, savedEpisodeOf({ ...played!, endReason: 'env_failure', failure }));
    expect([failed.endReason, failed.failure, failed.turns.length]).toEqual(['env_failure', failure, 2]);
  }, 30_000);
});

describe('replaying a suite episode', () => {
  test('validation on a val_suite records the suite entry; the replay resets with it, the saved file keeps it', async () => {
    const suite = { ...config, val_suite: 'frozen_lake/v1', val_env_manager: { ...config.val_env_manager, tags: ['Lake'] } };
    const chat = new ChatFormat(defaultTokenizer());
    const manager = await EnvManager.build('val', suite, host);
    const played = await manager.collect(4, new RandomPolicy(chat), chat).finally(() => manager.close());
    const first = played.episodes[0]!;
    expect(first.suiteEpisode).toEqual(loadSuite('frozen_lake/v1').episodes[0]!);
    const replay = await replayEpisode(suite, host, first);
    expect(replay.turns.map((t) => t.observation)).toEqual(first.turns.map((t) => t.observation));
    expect(savedEpisodeOf(first).suiteEpisode).toEqual(first.suiteEpisode);
    // the seed alone draws another lake
    const { suiteEpisode: _, ...bySeed } = first;
    await expect(replayEpisode(suite, host, bySeed)).rejects.toThrow(ReplayError);
  });
});
