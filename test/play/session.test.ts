/**
 * One `agentic play` episode in process: the turns it records are the rollout's (same prompts,
 * same responses as playEpisode alone), a model's tensors do not pile up turn after turn, and a
 * person's responses are scored by the model when one is loaded.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { tf } from '../../src/engine/tf';
import { GivenPolicy, responseLogProbs } from '../../src/play/policies';
import { ANSWER_OPENING } from '../../src/sdk/answer';
import { ScriptSource } from '../../src/play/responses';
import { playSession, type PlaySetup } from '../../src/play/session';
import { GuardedEnv } from '../../src/sdk/guarded_env';
import { makePolicy } from '../../src/rollout/env_manager';
import { playEpisode, type TurnStart } from '../../src/rollout/episode';
import { RandomPolicy, type Policy, type TurnQuery } from '../../src/rollout/policy';
import { chat, configFrom, hostWith, lakeYaml, model } from '../rollout/helpers';

// model passes share the machine with the rest of the suite (its subprocesses included): time is
// for bun run bench, not for these tests
setDefaultTimeout(30_000);

const host = hostWith();
const config = await configFrom(lakeYaml({ groups: 1, size: 1, kind: 'traj', maxSteps: 4, tokens: 12 }), host);
const SAMPLED = { temperature: 1, topP: 1, topK: 0, doSample: true };
const pieceOf = chat.responsePiece;

function setup(policy: Policy, logProbs: PlaySetup['logProbs'], printed: string[], counts: number[]): PlaySetup {
  return {
    config,
    host,
    tag: 'Lake',
    chat,
    policy,
    policyLabel: 'test',
    logProbs,
    untimed: false,
    print: (text) => printed.push(text),
    afterTurn: () => counts.push(tf.memory().numTensors),
  };
}

test("playEpisode's observer sees exactly the ids the policy is given, and every step the env returns", async () => {
  const random = new RandomPolicy(chat);
  const asked: number[][] = [];
  const spy: Policy = {
    ...random,
    name: 'spy',
    respond: (query: TurnQuery) => (asked.push([...query.promptIds]), random.respond(query)),
    cancel: () => {},
    stats: () => random.stats(),
    close: () => random.close(),
  };
  const starts: TurnStart[] = [];
  const steps: unknown[] = [];
  const custom = config.custom_envs.Lake!;
  const env = new GuardedEnv(await host.resolveEnv(custom.env_type), custom.env_config, host.envContext());
  const task = { mode: 'val' as const, tag: 'Lake', envId: 0, groupId: 0, episodeId: 0, seed: 3 };
  const limits = { maxNewTokens: 64, sequenceLength: config.sequence_length, runSeed: 7, temperature: 1, topP: 1, onMismatch: 'split' as const };
  const episode = await playEpisode(env, custom, task, limits, spy, chat, {
    beforeTurn: (start) => void starts.push(start),
    afterTurn: (_, step) => void steps.push(step),
  });
  expect(starts.map((s) => [...s.contextIds])).toEqual(asked);
  expect(starts.map((s) => [...s.promptIds])).toEqual(episode.turns.map((t) => t.promptIds));
  expect(starts.map((s) => s.observation)).toEqual(episode.turns.map((t) => t.observation));
  expect(steps).toHaveLength(episode.turns.length);
  await env.close();
});

describe('playSession', () => {
  test("a model's turns leave the tensor count flat, and closing gives every tensor back", async () => {
    const before = tf.memory().numTensors;
    const counts: number[] = [];
    const printed: string[] = [];
    const { episode, record } = await playSession(setup(makePolicy(config, 'val', model, chat), 'sampled', printed, counts));
    expect(episode!.turns.length).toBeGreaterThan(1);
    expect(new Set(counts.slice(1)).size).toBe(1);
    expect(counts[0]).toBe(counts[1]!);
    expect(tf.memory().numTensors).toBe(before);
    expect(record.turns.map((t) => t.logProbs)).toEqual(episode!.turns.map((t) => t.logProbs));
    expect(printed.join('\n')).toContain('log-probs as the model sampled them');
  });

  test("a script's responses are scored by the model, without a tensor left behind", async () => {
    const before = tf.memory().numTensors;
    const counts: number[] = [];
    const lines = ['<answer>Up</answer>', 'no idea', '<answer>Left</answer>', '<answer>Down</answer>'];
    const source = new ScriptSource('script', lines, () => {});
    const policy = new GivenPolicy(source, chat, { score: (context, response) => responseLogProbs(model, context, response, SAMPLED, pieceOf) });
    const { episode } = await playSession(setup(policy, 'scored', [], counts));
    expect(new Set(counts).size).toBe(1);
    expect(tf.memory().numTensors).toBe(before);
    const turn = episode!.turns[0]!;
    expect(turn.responseText).toBe('<answer>Up</answer>');
    expect(turn.logProbs).toHaveLength(turn.responseIds.length);
    // the same ids a trajectory row holds, scored in one pass: the first turn's prompt, then the response
    const again = await responseLogProbs(model, turn.promptIds, turn.responseIds, SAMPLED, pieceOf);
    expect(turn.logProbs).toEqual(again);
    for (const logProb of turn.logProbs) expect(logProb).toBeLessThan(0);
    // with an answer temperature, only the token that begins the answer is scored at it
    const hot = await responseLogProbs(model, turn.promptIds, turn.responseIds, { ...SAMPLED, opening: { ...ANSWER_OPENING, temperature: 3 } }, pieceOf);
    const pieces = turn.responseIds.map(pieceOf);
    const changed = pieces.filter((_, i) => hot[i] !== again[i]);
    expect(changed).toHaveLength(1);
    expect(changed[0]).toContain('Up');
    expect(hot[0]).toBe(again[0]!);
  });

  test('records what playEpisode records, and stops cleanly when the responses run out', async () => {
    const source = new ScriptSource('script', ['<answer>Up</answer>'], () => {});
    const outcome = await playSession(setup(new GivenPolicy(source, chat, { score: null }), null, [], []));
    expect(outcome.episode).toBeNull();
    expect(outcome.stoppedAt).toBe(2);
    expect(outcome.record.turns).toHaveLength(1);
    expect(outcome.record.turns[0]).toMatchObject({ responseText: '<answer>Up</answer>', logProbs: null });
    expect(outcome.record.stopped).toBe('the responses ran out at turn 2');
    expect(outcome.record).not.toHaveProperty('endReason');
  });
});
