import { describe, expect, test } from 'bun:test';
import { tf } from '../../src/engine/tf';
import { defineEnv } from '../../src/sdk/define';
import { z } from 'zod';
import { EnvManager, makePolicy } from '../../src/rollout/env_manager';
import { stateHash } from '../../src/rollout/episode_record';
import type { RolloutBatch, RolloutMode } from '../../src/rollout/types';
import type { AgenticConfig } from '../../src/config/schema';
import type { PluginHost } from '../../src/host/plugin_host';
import { chat, configFrom, hostWith, lakeYaml, model, tokenizer, worstLogProbGap } from './helpers';

async function rollout(config: AgenticConfig, host: PluginHost, mode: RolloutMode = 'train', manager?: EnvManager): Promise<RolloutBatch> {
  const own = manager ?? (await EnvManager.build(mode, config, host));
  const policy = makePolicy(config, mode, model, chat);
  try {
    return await own.collect(mode === 'train' ? config.rollout_batch_size : config.val_batch_size, policy, chat);
  } finally {
    await policy.close();
    if (!manager) await own.close();
  }
}

describe('trajectory-wise rollout (StarPO)', () => {
  test("masks cover exactly the sampled tokens, and their log-probs are the model's own (<= 1e-4)", async () => {
    const host = hostWith();
    const config = await configFrom(lakeYaml({ groups: 2, size: 2 }), host);
    const before = tf.memory().numTensors;
    const batch = await rollout(config, host);
    expect(tf.memory().numTensors).toBe(before);
    expect(batch.samples).toHaveLength(4);
    for (const [i, sample] of batch.samples.entries()) {
      const episode = batch.episodes[i]!;
      expect(episode.turns.length).toBeGreaterThan(0);
      // the row is the turns' ids in order, and the mask is on the response ids only
      const expected = episode.turns.flatMap((t) => [...t.promptIds, ...t.responseIds]);
      expect([...sample.inputIds]).toEqual(expected);
      const masked = [...sample.inputIds].filter((_, t) => sample.responseMask[t] === 1);
      expect(masked).toEqual(episode.turns.flatMap((t) => t.responseIds));
      for (const [k, turn] of episode.turns.entries()) {
        const bounds = sample.turns[k]!;
        expect(bounds.response - bounds.prompt).toBe(turn.promptIds.length);
        expect([...sample.responseMask.subarray(bounds.prompt, bounds.response)].every((m) => m === 0)).toBe(true);
        expect([...sample.responseMask.subarray(bounds.response, bounds.end)].every((m) => m === 1)).toBe(true);
      }
      expect(sample.inputIds.length).toBeLessThanOrEqual(config.sequence_length);
      // the score sits on the last sampled token and nowhere else
      const last = sample.responseMask.lastIndexOf(1);
      expect(sample.rewards[last]).toBeCloseTo(episode.score, 6);
      expect([...sample.rewards].filter((r) => r !== 0).length).toBeLessThanOrEqual(1);
      expect(await worstLogProbGap(sample)).toBeLessThanOrEqual(1e-4);
    }
  });

  test('later turns prefill only their new ids: the session keeps the keys and values of the earlier ones', async () => {
    const host = hostWith();
    const config = await configFrom(lakeYaml({ groups: 1, size: 2, maxSteps: 3 }), host);
    const manager = await EnvManager.build('train', config, host);
    const policy = makePolicy(config, 'train', model, chat);
    const batch = await manager.collect(2, policy, chat);
    const stats = policy.stats();
    await policy.close();
    await manager.close();
    const turns = batch.episodes.flatMap((e) => e.turns);
    expect(turns.length).toBeGreaterThan(2);
    // every request's prompt is the whole context so far; all but the first turn's was cached
    let context = 0;
    let fed = 0;
    for (const e of batch.episodes) {
      let sofar = 0;
      for (const t of e.turns) {
        context += sofar + t.promptIds.length;
        sofar += t.promptIds.length + t.responseIds.length;
      }
      fed += e.turns.reduce((n, t, i) => n + t.promptIds.length + (i > 0 ? 1 : 0), 0);
    }
    expect(stats.prefillTokens! + stats.reusedTokens!).toBe(context);
    expect(stats.prefillTokens).toBe(fed);
  });

  test('every env of a group starts from the same state; groups advance to fresh seeds, validation repeats its own', async () => {
    const host = hostWith();
    const config = await configFrom(lakeYaml({ groups: 4, size: 3, maxSteps: 1, tokens: 4 }), host, [
      'train_env_manager.llm_proxy.proxy_type=random',
      'val_env_manager.llm_proxy.proxy_type=random',
    ]);
    const train = await EnvManager.build('train', config, host);
    const first = await rollout(config, host, 'train', train);
    const second = await rollout(config, host, 'train', train);
    for (const batch of [first, second]) {
      for (let g = 0; g < 4; g++) {
        const group = batch.episodes.slice(g * 3, g * 3 + 3);
        expect(new Set(group.map((e) => e.groupId)).size).toBe(1);
        expect(new Set(group.map((e) => e.trajGroupId)).size).toBe(1);
        expect(new Set(group.map((e) => e.turns[0]!.observation)).size).toBe(1);
        expect(new Set(group.map((e) => e.seed)).size).toBe(1);
        expect(group.map((e) => e.envId)).toEqual([g * 3, g * 3 + 1, g * 3 + 2]);
      }
      expect(new Set(batch.episodes.map((e) => e.trajGroupId)).size).toBe(4);
    }
    expect(first.episodes.map((e) => e.episodeId)).toEqual(Array(12).fill(0));
    expect(second.episodes.map((e) => e.episodeId)).toEqual(Array(12).fill(1));
    expect(new Set([...first.episodes, ...second.episodes].map((e) => e.seed)).size).toBe(8);
    await train.close();
    const val = await EnvManager.build('val', config, host);
    const a = await rollout(config, host, 'val', val);
    const b = await rollout(config, host, 'val', val);
    expect(b.episodes.map((e) => e.seed)).toEqual(a.episodes.map((e) => e.seed));
    await val.close();
  });

  test('a batch larger than the envs plays several rounds of whole groups', async () => {
    const host = hostWith();
    const config = await configFrom(lakeYaml({ groups: 2, size: 2, maxSteps: 1 }), host, [
      'rollout_batch_size=12',
      'train_env_manager.llm_proxy.proxy_type=random',
    ]);
    const batch = await rollout(config, host);
    expect(batch.episodes).toHaveLength(12);
    expect(batch.episodes.map((e) => `${e.groupId}:${e.episodeId}`)).toEqual([
      '0:0',
      '0:0',
      '1:0',
      '1:0',
      '0:1',
      '0:1',
      '1:1',
      '1:1',
      '0:2',
      '0:2',
      '1:2',
      '1:2',
    ]);
  });

  test('batched greedy decoding gives the same trajectories as one env at a time', async () => {
    const host = hostWith();
    const yaml = lakeYaml({ groups: 3, size: 2, greedy: true, maxSteps: 2 });
    const together = await rollout(await configFrom(yaml, host), host);
    const alone = await rollout(await configFrom(yaml, host, ['max_running_requests=1']), host);
    expect(together.samples.map((s) => [...s.inputIds])).toEqual(alone.samples.map((s) => [...s.inputIds]));
    for (const [i, s] of together.samples.entries()) {
      const other = alone.samples[i]!;
      s.logProbs.forEach((lp, t) => expect(Math.abs(lp - other.logProbs[t]!)).toBeLessThanOrEqual(1e-5));
    }
  });

  test('the context budget ends an episode when the next prompt does not fit, and the row stays within it', async () => {
    const host = hostWith();
    // the first prompt is about 300 ids: one or two turns of up to 40 fit in 420
    const config = await configFrom(lakeYaml({ groups: 1, size: 2, sequenceLength: 420, maxSteps: 10, tokens: 40 }), host);
    const batch = await rollout(config, host);
    for (const [i, e] of batch.episodes.entries()) {
      expect(e.endReason).toBe('context_full');
      expect(e.turns.length).toBeGreaterThan(0);
      expect(e.metrics.context_full).toBe(1);
      expect(batch.samples[i]!.truncated).toBe(true);
      // each response got at most the room that was left
      let used = 0;
      for (const turn of e.turns) {
        used += turn.promptIds.length;
        expect(turn.responseIds.length).toBeLessThanOrEqual(Math.min(40, 420 - used));
        used += turn.responseIds.length;
      }
    }
    for (const s of batch.samples) expect(s.inputIds.length).toBeLessThanOrEqual(420);

    const tight = await configFrom(lakeYaml({ groups: 1, size: 2, sequenceLength: 100 }), host);
    const none = await rollout(tight, host);
    expect(none.episodes.map((e) => [e.endReason, e.turns.length])).toEqual([
      ['context_full', 0],
      ['context_full', 0],
    ]);
    expect(none.samples.map((s) => s.inputIds.length)).toEqual([0, 0]);
  });
});

describe('step-wise rollout (GiGPO)', () => {
  test('one row per step: a fresh prompt with recent history, the step reward, and the observation hash', async () => {
    const host = hostWith();
    const config = await configFrom(lakeYaml({ groups: 2, size: 2, kind: 'step', maxSteps: 3 }), host, [
      'train_env_manager.llm_proxy.proxy_type=random',
      'custom_envs.Lake.history_length=1',
    ]);
    const batch = await rollout(config, host);
    const turns = batch.episodes.reduce((n, e) => n + e.turns.length, 0);
    expect(batch.samples).toHaveLength(turns);
    let at = 0;
    for (const episode of batch.episodes) {
      for (const [step, turn] of episode.turns.entries()) {
        const sample = batch.samples[at++]!;
        expect(sample.step).toBe(step);
        expect(sample.trajId).toBe(episode.trajId);
        expect(sample.stepReward).toBe(turn.reward);
        expect(sample.episodeScore).toBeCloseTo(episode.score, 9);
        expect(sample.stateHash).toBe(stateHash(turn.observation));
        const prompt = tokenizer.decode([...sample.inputIds.subarray(0, sample.promptLength)]);
        expect(prompt).toStartWith('<|im_start|>system\n');
        expect(prompt).toContain(turn.observation);
        expect(prompt).toContain(`Step ${step + 1}. Observation:`);
        if (step > 0) expect(prompt).toContain(`[step ${step}] observation:\n${episode.turns[step - 1]!.observation}`);
        if (step > 1) expect(prompt).not.toContain(`[step ${step - 1}]`);
        expect([...sample.inputIds.subarray(sample.promptLength)]).toEqual(turn.responseIds);
      }
    }
  });
});

describe("ROLL's StepConcatEnvManager (step_concat, for GEM's games)", () => {
  const gameYaml = (historyLength: number) => `
seed: 7
sequence_length: 1024
rollout_batch_size: 4
val_batch_size: 4
custom_envs:
  Guess:
    env_type: game:GuessTheNumber-v0
    env_manager_cls: roll.pipeline.agentic.env_manager.step_concat_env_manager.StepConcatEnvManager
    history_length: ${historyLength}
    max_steps: 4
    agent_system_template: Play.
    agent_template: "Observation:\\n{history}\\n{current_observation}"
    env_config: {min_number: 1, max_number: 1000, max_turns: 4}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Guess], llm_proxy: {proxy_type: random}}
val_env_manager: {num_env_groups: 2, group_size: 2, tags: [Guess]}
`;
  const userMessage = (sample: { inputIds: Int32Array; promptLength: number }) =>
    tokenizer
      .decode([...sample.inputIds.subarray(0, sample.promptLength)])
      .split('<|im_start|>user\n')[1]!
      .split('<|im_end|>')[0]!;

  test("each step row's prompt holds the earlier observations, then the current one and its suffix", async () => {
    const host = hostWith();
    const config = await configFrom(gameYaml(0), host);
    expect(config.custom_envs.Guess!.env_manager_cls).toBe('step_concat');
    const batch = await rollout(config, host);
    expect(batch.samples).toHaveLength(batch.episodes.reduce((n, e) => n + e.turns.length, 0));
    let at = 0;
    for (const episode of batch.episodes) {
      const seen = episode.turns.map((t) => t.observation);
      for (const [step, turn] of episode.turns.entries()) {
        const expected = `Observation:\n${seen.slice(0, step).join('\n')}\n${turn.observation}\nEnter your next guess.`;
        expect(userMessage(batch.samples[at++]!)).toBe(expected);
      }
    }
    expect(batch.episodes.some((e) => e.turns.length > 2)).toBe(true);
  });

  test("history_length k shows the last k - 1 earlier observations, as ROLL's history[-k:-1]", async () => {
    const host = hostWith();
    const batch = await rollout(await configFrom(gameYaml(2), host), host);
    const episode = batch.episodes.find((e) => e.turns.length > 2)!;
    const first = batch.samples.findIndex((s) => s.trajId === episode.trajId);
    const third = userMessage(batch.samples[first + 2]!);
    expect(third).toBe(`Observation:\n${episode.turns[1]!.observation}\n${episode.turns[2]!.observation}\nEnter your next guess.`);
    expect(third).not.toContain('You are playing Guess The Number');
  });
});

const Stuck = z.strictObject({ hang: z.boolean().default(false) });
const stuckEnv = defineEnv({
  name: 'stuck',
  description: 'Answers instantly, or never (hang: true).',
  config: Stuck,
  env: class {
    constructor(private readonly config: z.output<typeof Stuck>) {}
    reset(seed: number) {
      return { observation: `state ${seed % 100}`, info: { instruction: 'Say anything.' } };
    }
    step() {
      if (this.config.hang) return new Promise<never>(() => {});
      return { observation: 'done', reward: 1, terminated: true, truncated: false, info: { metrics: { success: true } } };
    }
    render() {
      return 'state';
    }
    close() {}
    sampleRandomAction() {
      return '<answer>ok</answer>';
    }
  },
});

describe('the straggler guard', () => {
  test('a hanging env is cut at its time budget, and the other envs finish without waiting for it', async () => {
    const host = hostWith(stuckEnv);
    const config = await configFrom(
      `
rollout_batch_size: 8
val_batch_size: 8
sequence_length: 400
custom_envs:
  Fine: {env_type: stuck, max_steps: 1, max_tokens_per_step: 8}
  Hung: {env_type: stuck, max_steps: 1, max_tokens_per_step: 8, episode_timeout_s: 1, env_config: {hang: true}}
train_env_manager: {num_env_groups: 4, group_size: 2, tags: [Fine, Hung]}
`,
      host,
    );
    const started = performance.now();
    const batch = await rollout(config, host);
    const seconds = (performance.now() - started) / 1000;
    expect(seconds).toBeLessThan(10);
    const fine = batch.episodes.filter((e) => e.tag === 'Fine');
    const hung = batch.episodes.filter((e) => e.tag === 'Hung');
    expect(fine.map((e) => e.endReason)).toEqual(['terminated', 'terminated', 'terminated', 'terminated']);
    expect(Math.max(...fine.map((e) => e.seconds))).toBeLessThan(1);
    for (const e of hung) {
      expect(e.endReason).toBe('timeout');
      expect(e.failure).toContain('step() did not finish');
      expect(e.seconds).toBeGreaterThanOrEqual(0.99);
    }
    expect(batch.metrics['env/Hung/timed_out']).toBe(1);
    expect(batch.metrics['env/Fine/timed_out']).toBe(0);
    expect(batch.metrics['env/Fine/success']).toBe(1);
  });
});

describe('the prices of wasted moves (ineffective_action_penalty, revisit_penalty)', () => {
  const yaml = lakeYaml({ groups: 4, size: 2, kind: 'step', maxSteps: 10 });
  const randomMoves = ['train_env_manager.llm_proxy.proxy_type=random', 'val_env_manager.llm_proxy.proxy_type=random'];

  test('prices each training turn whose move changed nothing, in its reward, its row and its episode score', async () => {
    const host = hostWith();
    const plain = await rollout(await configFrom(yaml, host, randomMoves), host);
    const priced = await rollout(await configFrom(yaml, host, [...randomMoves, 'ineffective_action_penalty=-1']), host);
    let ineffective = 0;
    let at = 0;
    for (const [e, episode] of plain.episodes.entries()) {
      const other = priced.episodes[e]!;
      // the same moves were played: only their price differs
      expect(other.turns.map((t) => t.responseText)).toEqual(episode.turns.map((t) => t.responseText));
      for (const [k, turn] of episode.turns.entries()) {
        const changedNothing = turn.metrics.action_is_effective === false;
        if (changedNothing) ineffective++;
        expect(other.turns[k]!.reward).toBeCloseTo(turn.reward - (changedNothing ? 1 : 0), 9);
        expect(priced.samples[at]!.stepReward).toBe(other.turns[k]!.reward);
        expect(priced.samples[at++]!.episodeScore).toBe(other.score);
      }
      expect(other.score).toBeCloseTo(
        other.turns.reduce((sum, t) => sum + t.reward, 0),
        9,
      );
    }
    // random moves on a 4x4 lake walk into its edge
    expect(ineffective).toBeGreaterThan(0);
    expect(priced.metrics['rollout/score/mean']).toBeLessThan(plain.metrics['rollout/score/mean']!);
  });

  test('revisit_penalty prices each training turn that led back to an observation its episode had shown', async () => {
    const host = hostWith();
    const plain = await rollout(await configFrom(yaml, host, randomMoves), host);
    const priced = await rollout(await configFrom(yaml, host, [...randomMoves, 'revisit_penalty=-0.5']), host);
    let revisits = 0;
    let movedBack = 0;
    for (const [e, episode] of plain.episodes.entries()) {
      const other = priced.episodes[e]!;
      expect(other.turns.map((t) => t.responseText)).toEqual(episode.turns.map((t) => t.responseText));
      for (const [k, turn] of episode.turns.entries()) {
        const next = episode.turns[k + 1]?.observation ?? episode.finalObservation;
        const earlier = episode.turns.slice(0, k + 1).map((t) => t.observation);
        const back = earlier.includes(next);
        if (back) revisits++;
        if (back && next !== turn.observation) movedBack++;
        expect(other.turns[k]!.reward).toBeCloseTo(turn.reward - (back ? 0.5 : 0), 9);
      }
      expect(other.score).toBeCloseTo(
        other.turns.reduce((sum, t) => sum + t.reward, 0),
        9,
      );
    }
    // random moves walk into the lake's edge (the same observation) and undo moves (an earlier one)
    expect(revisits).toBeGreaterThan(movedBack);
    expect(movedBack).toBeGreaterThan(0);
  });

  test("validation keeps the env's own scores", async () => {
    const host = hostWith();
    const plain = await rollout(await configFrom(yaml, host, randomMoves), host, 'val');
    const priced = await rollout(await configFrom(yaml, host, [...randomMoves, 'ineffective_action_penalty=-1', 'revisit_penalty=-1']), host, 'val');
    expect(priced.episodes.map((e) => e.score)).toEqual(plain.episodes.map((e) => e.score));
    expect(priced.episodes.some((e) => e.turns.some((t) => t.metrics.action_is_effective === false))).toBe(true);
  });

  test('an env that never reports action_is_effective is refused in one line', async () => {
    const host = hostWith(stuckEnv);
    const config = await configFrom(
      `
rollout_batch_size: 4
sequence_length: 400
ineffective_action_penalty: -1
custom_envs:
  Fine: {env_type: stuck, max_steps: 1, max_tokens_per_step: 8}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Fine], llm_proxy: {proxy_type: random}}
`,
      host,
    );
    expect(rollout(config, host)).rejects.toThrow("ineffective_action_penalty: custom_envs.Fine's env reports no action_is_effective");
  });
});
