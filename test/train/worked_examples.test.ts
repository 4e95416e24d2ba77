/**
 * Worked examples (warm_start.worked_examples): episodes played with the env's worked solution
 * through the rollout's own prompts, every one solved, at most 1000, and part of the fingerprint.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { PluginHost } from '../../src/host/plugin_host';
import { ChatFormat } from '../../src/rollout/chat';
import { EnvManager } from '../../src/rollout/env_manager';
import { SolutionPolicy } from '../../src/rollout/policy';
import { FINGERPRINT_FILE, warmStartFingerprint } from '../../src/train/warm_start/base_cache';
import { generateRows, workedRows } from '../../src/train/warm_start/data';
import { shortestSolution } from '../../plugins/envs/sokoban/solve';
import { roomOf } from '../../plugins/envs/sokoban/suite';
import { warmStart } from '../../src/train/warm_start/train_base';
import { ROOT, scratch } from '../helpers';
import { microPolicyFolder, shippedConfig } from './helpers';

setDefaultTimeout(60_000);

const chat = new ChatFormat(defaultTokenizer());
const trainQuestions = new Set(
  readFileSync(join(ROOT, 'plugins/datasets/arithmetic/train.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).question as string),
);

let folder = '';
beforeAll(async () => {
  folder = await microPolicyFolder();
});

const calculator = (overrides: string[] = []) => shippedConfig('calculator', [`pretrain=${folder}`, `output_dir=${scratch()}`, ...overrides]);
const decode = (ids: ArrayLike<number>) => chat.tokenizer.decode(Array.from(ids), { skipSpecialTokens: false });

describe('worked examples', () => {
  test("the shipped 1000 are played through the env and all score 1: one calculator call, then the calculator's output", async () => {
    const config = await calculator();
    expect(config.warm_start.worked_examples).toBe(1000);
    const seeded = {
      ...config,
      train_env_manager: { ...config.train_env_manager, group_size: 1, num_env_groups: 1 },
    };
    const envs = await EnvManager.build('train', seeded, new PluginHost());
    try {
      const batch = await envs.collect(1000, new SolutionPolicy(chat), chat);
      for (const episode of batch.episodes) {
        expect(episode.endReason).toBe('terminated');
        expect(episode.score).toBe(1);
        expect(episode.metrics).toMatchObject({ success: 1, num_tool_calls: 1, tool_errors: 0, action_is_valid: 1 });
        expect(episode.turns.map((t) => t.responseText)).toEqual([
          expect.stringMatching(/^calculator\(.+\)$/),
          `<answer>${episode.turns[1]!.observation}</answer>`,
        ]);
      }
    } finally {
      await envs.close();
    }
  });

  test("the rows are RL's prompts (step-wise: the question, then the bare output) with the solution learned; distinct training questions", async () => {
    const config = await calculator();
    const rows = await workedRows(config, new PluginHost(), chat);
    expect(rows.count).toEqual({ played: 1000, solved: 1000 });
    expect(rows.ids).toHaveLength(2000);
    const questions = new Set<string>();
    for (let r = 0; r < rows.ids.length; r++) {
      const ids = rows.ids[r]!;
      const mask = rows.masks[r]!;
      const first = mask.indexOf(1);
      expect(mask.slice(first).every((m) => m === 1)).toBe(true);
      const prompt = decode(ids.slice(0, first));
      const learned = decode(ids.slice(first));
      const user = /<\|im_start\|>user\n([\s\S]*)<\|im_end\|>\n<\|im_start\|>assistant\n$/.exec(prompt)![1]!;
      expect(Array.from(ids.slice(0, first))).toEqual(chat.firstTurn('Use the calculator.', user));
      if (learned.startsWith('calculator(')) {
        expect(learned).toMatch(/^calculator\(.+\)<\|im_end\|>$/);
        expect(trainQuestions.has(user)).toBe(true);
        questions.add(user);
      } else {
        expect(learned).toBe(`<answer>${user}</answer><|im_end|>`);
      }
    }
    // seeds of the warm start's own stream, one env per group: hardly any question twice (1000 distinct)
    expect(questions.size).toBeGreaterThan(950);
    expect(await workedRows(config, new PluginHost(), chat)).toEqual(rows);
  });

  test('trajectory-wise: one row per episode, both replies learned, the output in the context', async () => {
    // the first turn of a trajectory carries the env's instruction with its tool list: a longer context
    const config = await calculator(['warm_start.worked_examples=5', 'sequence_length=512']);
    const env = config.custom_envs.Arithmetic!;
    env.env_manager_cls = 'traj';
    env.agent_template = '{observation}';
    const rows = await workedRows(config, new PluginHost(), chat);
    expect(rows.ids).toHaveLength(5);
    for (let r = 0; r < 5; r++) {
      const learned = decode(Array.from(rows.ids[r]!).filter((_, t) => rows.masks[r]![t]));
      expect(learned).toMatch(/^calculator\(.+\)<\|im_end\|><answer>[\d.]+<\/answer><\|im_end\|>$/);
    }
  });

  test('at most 1000: one line naming the key', async () => {
    const error = await calculator(['warm_start.worked_examples=1001']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe('warm_start.worked_examples: must be <= 1000, got 1001');
  });

  test('an env without worked solutions is a one-line error', async () => {
    const config = await shippedConfig('bandit_grpo', [`pretrain=${folder}`, 'warm_start.demonstrations=solver', 'warm_start.worked_examples=4']);
    const error = await workedRows(config, new PluginHost(), chat).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'warm_start.worked_examples: env bandit (custom_envs.Bandit) has no solutionAction(), so it has no worked solution to give',
    );
  });

  test('the fingerprint covers the setting: a base is reused only for the same number of worked examples', async () => {
    const prints = await Promise.all([0, 100, 1000].map(async (n) => warmStartFingerprint(await calculator([`warm_start.worked_examples=${n}`]))));
    expect(new Set(prints).size).toBe(3);
    expect(warmStartFingerprint(await calculator())).toBe(prints[2]!);

    const out = scratch();
    const small = (n: number) =>
      calculator([
        `warm_start.worked_examples=${n}`,
        'warm_start.episodes=0',
        'warm_start.worked_repeats=1',
        'warm_start.epochs=1',
        `warm_start.output_dir=${out}/base`,
      ]);
    const info: string[] = [];
    const built = await warmStart(await small(6), new PluginHost(), { info: (line) => info.push(line) });
    expect(built).toMatchObject({ built: true, rows: 12 });
    expect(info[0]).toStartWith(
      'warm start: 6 worked examples (0 of the 6 played were not solved and are left out), 12 action rows from them and 0 random-action episodes',
    );
    expect(existsSync(join(out, 'base', FINGERPRINT_FILE))).toBe(true);
    expect((await warmStart(await small(6), new PluginHost(), { info: () => {} })).built).toBe(false);
    expect((await warmStart(await small(7), new PluginHost(), { info: () => {} })).built).toBe(true);
  });
});

describe('worked examples among random-action rows', () => {
  test('worked_repeats adds copies of the same worked rows, nothing else', async () => {
    const out = scratch();
    const base = (repeats: number, worked: number) =>
      calculator([
        `warm_start.worked_examples=${worked}`,
        'warm_start.episodes=64',
        `warm_start.worked_repeats=${repeats}`,
        'warm_start.epochs=1',
        `warm_start.output_dir=${out}/r${repeats}w${worked}`,
      ]);
    const rows = async (repeats: number, worked: number) => (await warmStart(await base(repeats, worked), new PluginHost(), { info: () => {} })).rows;
    const once = await rows(1, 4);
    // 4 worked examples are 8 rows (a call and an answer); two more copies of them add 16
    expect(await rows(3, 4)).toBe(once + 16);
  });
  test('random_actions: false learns none of the random actions: only the worked rows are left (no state questions asked)', async () => {
    const out = scratch();
    const config = await calculator([
      'warm_start.worked_examples=4',
      'warm_start.episodes=64',
      'warm_start.random_actions=false',
      'warm_start.worked_repeats=1',
      'warm_start.epochs=1',
      `warm_start.output_dir=${out}/base`,
    ]);
    expect((await warmStart(config, new PluginHost(), { info: () => {} })).rows).toBe(8);
  });
});

describe('worked examples with think notes (FrozenLake)', () => {
  const lake = (overrides: string[]) =>
    shippedConfig('agentic', [`pretrain=${folder}`, `output_dir=${scratch()}`, 'warm_start.episodes=64', 'warm_start.worked_repeats=1', ...overrides]);
  const learnedText = (rows: { ids: Int32Array[]; masks: Uint8Array[] }, r: number) => decode(Array.from(rows.ids[r]!).filter((_, t) => rows.masks[r]![t]));

  test('each solution move comes after the notes, all of it learned; every example is solved, on a seed stream of its own', async () => {
    const rows = await generateRows(await lake(['warm_start.worked_examples=8', 'warm_start.random_actions=false']), new PluginHost(), chat);
    expect(rows.worked).toEqual({ played: 8, solved: 8 });
    const notesThenMove = /^<think>goal [^<]+<\/think><answer>(Left|Down|Right|Up)<\/answer><\|im_end\|>$/;
    // the worked rows come first: learned whole; the random rows after them teach the notes alone
    const worked = rows.ids.findIndex((_, r) => !notesThenMove.test(learnedText(rows, r)));
    expect(worked).toBeGreaterThanOrEqual(8);
    for (let r = worked; r < rows.ids.length; r++) expect(learnedText(rows, r)).toMatch(/^<think>goal [^<]+<\/think><?$/);
    const again = await generateRows(await lake(['warm_start.worked_examples=8', 'warm_start.random_actions=false']), new PluginHost(), chat);
    expect(again.ids).toEqual(rows.ids);
  });

  test('beside worked examples, a random episode that reaches the goal is left out: the base sees no solutions but theirs', async () => {
    const host = new PluginHost();
    const random = await generateRows(await lake([]), host, chat);
    const worked = await generateRows(await lake(['warm_start.worked_examples=8', 'warm_start.episodes=0']), host, chat);
    const both = await generateRows(await lake(['warm_start.worked_examples=8']), host, chat);
    expect(both.ids.slice(0, worked.ids.length)).toEqual(worked.ids);
    const kept = both.ids.slice(worked.ids.length);
    // the same random episodes, less the rows of those that reached the goal
    expect(kept.length).toBeLessThan(random.ids.length);
    const keys = new Set(random.ids.map((ids) => ids.join()));
    for (const ids of kept) expect(keys.has(ids.join())).toBe(true);
  });
});

describe('solution labels on the random episodes (Sokoban)', () => {
  const rooms = (overrides: string[]) =>
    shippedConfig('sokoban_compact', [`pretrain=${folder}`, `output_dir=${scratch()}`, 'warm_start.episodes=24', 'warm_start.worked_examples=4', ...overrides]);
  /** The row's prompt (what comes before its first learned token) and what it learns. */
  const split = (rows: { ids: Int32Array[]; masks: Uint8Array[] }, r: number) => {
    const start = rows.masks[r]!.indexOf(1);
    return { prompt: decode(rows.ids[r]!.slice(0, start)), learned: decode(Array.from(rows.ids[r]!).filter((_, t) => rows.masks[r]![t])) };
  };
  // the room's six lines (the last runs on into the chat template's end of turn)
  const roomIn = (prompt: string) => roomOf({ room: prompt.split('\n').flatMap((line) => /^#[#_OX√PS]{4}#/.exec(line) ?? []) });

  test("each random state's row learns its notes, then the move of a shortest solution from there; the episodes play on as without labels", async () => {
    // sokoban_compact labels; the plain rows are the same config's without
    const plain = await generateRows(await rooms(['warm_start.solution_labels=false']), new PluginHost(), chat);
    const labelled = await generateRows(await rooms([]), new PluginHost(), chat);
    expect((await rooms([])).warm_start.solution_labels).toBe(true);
    expect(labelled.worked).toEqual(plain.worked);
    expect(labelled.ids).toHaveLength(plain.ids.length);
    const worked = labelled.ids.length - (await generateRows(await rooms(['warm_start.worked_examples=0']), new PluginHost(), chat)).ids.length;
    expect(worked).toBeGreaterThan(0);
    let moves = 0;
    for (let r = worked; r < labelled.ids.length; r++) {
      const { prompt, learned } = split(labelled, r);
      expect(prompt).toBe(split(plain, r).prompt);
      const solution = shortestSolution(roomIn(prompt));
      const notes = /^<think>box [^<]+<\/think>/.exec(learned)?.[0];
      expect(notes).toBeDefined();
      if (solution === null) expect(learned).toMatch(/^<think>box [^<]+<\/think><?$/);
      else {
        expect(learned).toBe(`${notes}<answer>${solution.firstMoves[0]}</answer><|im_end|>`);
        moves++;
      }
    }
    expect(moves).toBeGreaterThan(100);
    expect(warmStartFingerprint(await rooms([]))).not.toBe(warmStartFingerprint(await rooms(['warm_start.solution_labels=false'])));
  });

  test('without think, or on an env with no worked solution, a one-line error', async () => {
    const noThink = await rooms(['warm_start.solution_labels=true', 'warm_start.think=false']).catch((e: unknown) => e);
    expect((noThink as Error).message).toBe(
      "warm_start.solution_labels: the labels are the action rows of think (each state's notes, then the solution's move); set warm_start.think=true",
    );
    const config = await shippedConfig('agentic', [`pretrain=${folder}`, 'warm_start.solution_labels=true', 'warm_start.worked_examples=0']);
    const lake = config.custom_envs.FrozenLakeTrain!;
    const host = new PluginHost();
    // an entry as validation leaves it: env_config filled with the plugin's defaults
    const sokoban = (await host.resolveEnv('sokoban')).config.parse({}) as Record<string, unknown>;
    config.custom_envs.FrozenLakeTrain = { ...lake, env_type: 'sokoban', env_config: sokoban };
    expect((await generateRows(config, host, chat)).ids.length).toBeGreaterThan(0);
    config.custom_envs.FrozenLakeTrain = { ...lake, env_type: 'bandit', env_config: {} };
    const error = await generateRows(config, host, chat).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'warm_start.solution_labels: env bandit (custom_envs.FrozenLakeTrain) has no solutionAction(), so it has no worked solution to give',
    );
  });
});
