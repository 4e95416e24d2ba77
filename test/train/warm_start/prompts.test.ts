/**
 * The warm start promises the very prompts RL will use: its state rows (warm_start.state_questions,
 * warm_start.think) are held here, token for token, to the prompts an episode of the same seed
 * feeds the policy, for every env manager kind, first turns and later ones.
 *
 * The episode is the rollout's own (playEpisode) on the env reset with the seed of the warm start's
 * episode, answered by the env's random actions (RandomPolicy), so it passes through the states the
 * warm start's episode passed through; the observer records each prompt the policy is given.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../../../src/config/load';
import type { AgenticConfig } from '../../../src/config/schema';
import { hashSeed, Rng } from '../../../src/engine/rng';
import { checkDefinition } from '../../../src/host/registry';
import { PluginHost } from '../../../src/host/plugin_host';
import { defaultTokenizer } from '../../../src/model/default_tokenizer';
import { ChatFormat } from '../../../src/rollout/chat';
import { episodeLimits } from '../../../src/rollout/env_manager';
import { playEpisode } from '../../../src/rollout/episode';
import { RandomPolicy } from '../../../src/rollout/policy';
import { seatPlays } from '../../../src/rollout/seat_players';
import { playSeatedEpisode } from '../../../src/rollout/seated_episode';
import { defineEnv } from '../../../src/sdk/define';
import { GuardedEnv } from '../../../src/sdk/guarded_env';
import { generateRows } from '../../../src/train/warm_start/data';
import { scratch } from '../../helpers';

setDefaultTimeout(60_000);

const QUESTION = 'Which cell are you on?';
const GOAL = 5;

const Walk = z.strictObject({
  instruction: z.string().default('Walk right until you reach the goal.'),
  suffix: z.string().default(''),
  /** Function calling: the reset lists a tool for the chat template. */
  tools: z.boolean().default(false),
});

const MOVE_TOOL = {
  type: 'function' as const,
  function: { name: 'move_walker', description: 'Move one cell.', parameters: { type: 'object', properties: {} } },
};

/**
 * A walk along a row of cells towards the goal: each answer `left` or `right` moves, anything else
 * is not a valid action; the random moves follow the reset's seed, so an episode of a seed passes
 * through the same states whoever plays its random moves. Its state question and notes name the cell.
 */
const walkEnv = defineEnv({
  name: 'walk',
  description: 'Walk to the goal cell.',
  config: Walk,
  env: class {
    private cell = 0;
    private moves = Rng.fromSeed(0, 'walk');
    constructor(private readonly config: z.output<typeof Walk>) {}
    reset(seed: number) {
      this.moves = Rng.fromSeed(seed, 'walk');
      this.cell = this.moves.int(GOAL);
      const tools = this.config.tools ? { tools: [MOVE_TOOL] } : {};
      return { observation: this.view(), info: { instruction: this.config.instruction, suffix: this.config.suffix, ...tools } };
    }
    step(response: string) {
      const move = response.trim();
      const valid = move === 'left' || move === 'right';
      if (valid) this.cell = Math.max(0, this.cell + (move === 'right' ? 1 : -1));
      const done = this.cell === GOAL;
      return {
        observation: this.view(),
        reward: done ? 1 : 0,
        terminated: done,
        truncated: false,
        info: { metrics: { success: done, action_is_valid: valid }, suffix: this.config.suffix, actionDesc: valid ? `you went ${move}` : 'you stood still' },
      };
    }
    render() {
      return this.view();
    }
    close() {}
    sampleRandomAction() {
      return this.moves.choice(['left', 'right', 'right', 'jump']);
    }
    stateQuestions() {
      return [{ question: QUESTION, answer: String(this.cell) }];
    }
    stateNotes() {
      return `cell ${this.cell}`;
    }
    private view() {
      return `${'.'.repeat(this.cell)}@${'.'.repeat(GOAL - this.cell)}G`;
    }
  },
});

const chat = new ChatFormat(defaultTokenizer());
const decode = (ids: readonly number[]) => chat.tokenizer.decode(ids, { skipSpecialTokens: false });
const encode = (text: string) => chat.tokenizer.encode(text, { addSpecialTokens: false });

function hostWithWalk(): PluginHost {
  const host = new PluginHost();
  host.registry.register(checkDefinition(walkEnv, 'test'), 'test');
  return host;
}

const EPISODES = 4;

/** A config whose warm start plays EPISODES episodes of the walk env through the entry `walk` describes. */
async function walkConfig(host: PluginHost, walk: string, warmStart: string): Promise<AgenticConfig> {
  const yaml = `
seed: 3
pretrain: agentic:nano
max_steps: 1
eval_steps: 0
sequence_length: 4096
rollout_batch_size: 4
val_batch_size: 2
custom_envs:
  Walk: {env_type: walk, max_steps: 6, max_tokens_per_step: 8, ${walk}}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Walk]}
val_env_manager: {num_env_groups: 2, group_size: 1, tags: [Walk]}
warm_start: {enabled: true, episodes: ${EPISODES}, worked_examples: 0, random_actions: false, ${warmStart}}
`;
  const dir = scratch({ 'config.yaml': yaml });
  return (await loadConfig({ configFile: join(dir, 'config.yaml'), overrides: [] }, host)).config;
}

/** A prompt the policy was given: this turn's new ids, and all it continues. */
interface Given {
  promptIds: readonly number[];
  contextIds: readonly number[];
}

/** The prompts of the rollout's episodes of the warm start's seeds, in the order its rows are made. */
async function episodePrompts(config: AgenticConfig, host: PluginHost): Promise<Given[]> {
  const custom = config.custom_envs.Walk!;
  const plugin = await host.resolveEnv(custom.env_type);
  const prompts: Given[] = [];
  for (let episode = 0; episode < EPISODES; episode++) {
    const env = new GuardedEnv(plugin, custom.env_config, host.envContext());
    const seed = hashSeed(config.seed, 'warm_start', 'states', 'Walk', episode);
    const task = { mode: 'train' as const, tag: 'Walk', envId: 0, groupId: 0, episodeId: episode, seed };
    await playEpisode(env, custom, task, episodeLimits(config, 'train'), new RandomPolicy(chat), chat, {
      beforeTurn: ({ promptIds, contextIds }) => void prompts.push({ promptIds, contextIds }),
    });
    await env.close();
  }
  return prompts;
}

/** A row's prompt: the ids before its learned response. */
function rowPrompt(row: Int32Array, mask: Uint8Array): number[] {
  return Array.from(row.subarray(0, mask.indexOf(1)));
}

/** A rendered prompt's messages (ChatML), by role: the last of each. */
function messages(text: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [, role, content] of text.matchAll(/<\|im_start\|>(\w+)\n([\s\S]*?)<\|im_end\|>/g)) found[role!] = content!;
  return found;
}

/** The same prompt with `question` on a line after its user message. */
function withQuestion(prompt: readonly number[]): number[] {
  const text = decode(prompt);
  const end = text.lastIndexOf('<|im_end|>');
  return encode(`${text.slice(0, end)}\n${QUESTION}${text.slice(end)}`);
}

/** The warm start's rows, `perState` to each state the episodes passed through, with the prompts given there. */
async function rowsAndPrompts(walk: string, warmStart: string, perState: number) {
  const host = hostWithWalk();
  const config = await walkConfig(host, walk, warmStart);
  const rows = await generateRows(config, host, chat);
  const given = await episodePrompts(config, host);
  expect(rows.ids.length).toBe(given.length * perState);
  return { rows, given };
}

describe("the warm start's rows are the prompts RL plays", () => {
  test('step: with think, each state has its question row and its action row, whose prompt is the episode turn, token for token', async () => {
    const { rows, given } = await rowsAndPrompts('env_manager_cls: step, history_length: 0', 'think: true, state_questions: 1', 2);
    expect(given.length).toBeGreaterThan(EPISODES);
    given.forEach(({ promptIds, contextIds }, i) => {
      expect(contextIds).toEqual(promptIds);
      expect(rowPrompt(rows.ids[2 * i]!, rows.masks[2 * i]!)).toEqual(withQuestion(promptIds));
      expect(rowPrompt(rows.ids[2 * i + 1]!, rows.masks[2 * i + 1]!)).toEqual([...promptIds]);
    });
  });

  test('step_concat: each state question is asked on the very prompt of its turn, its history of earlier observations included', async () => {
    const { rows, given } = await rowsAndPrompts(
      'env_manager_cls: step_concat, history_length: 3, env_config: {suffix: "left or right?"}',
      'state_questions: 1',
      1,
    );
    expect(given.some(({ promptIds }) => /G\n[.@]/.test(decode(promptIds)))).toBe(true);
    given.forEach(({ promptIds }, i) => expect(rowPrompt(rows.ids[i]!, rows.masks[i]!)).toEqual(withQuestion(promptIds)));
  });

  test("traj: a first turn's row is the episode's first prompt, and a later turn's row the episode's whole chat so far, each with the question after the turn's user message", async () => {
    const { rows, given } = await rowsAndPrompts('env_manager_cls: traj', 'state_questions: 1', 1);
    let later = 0;
    given.forEach(({ promptIds, contextIds }, i) => {
      if (contextIds.length > promptIds.length) later++;
      const earlier = contextIds.slice(0, contextIds.length - promptIds.length);
      expect(rowPrompt(rows.ids[i]!, rows.masks[i]!)).toEqual([...earlier, ...withQuestion(promptIds)]);
    });
    expect(later).toBeGreaterThan(0);
  });

  test('traj with an empty instruction: the first turn opens on the user message, as the episode does', async () => {
    const { rows, given } = await rowsAndPrompts('env_manager_cls: traj, env_config: {instruction: ""}', 'state_questions: 1', 1);
    given.forEach(({ promptIds, contextIds }, i) => {
      if (contextIds.length !== promptIds.length) return;
      expect(messages(decode(promptIds)).user!.startsWith('\n')).toBe(false);
      expect(rowPrompt(rows.ids[i]!, rows.masks[i]!)).toEqual(withQuestion(promptIds));
    });
  });

  test("step with history_length 2: a later turn's row shows the steps the episode played, as its prompt does", async () => {
    const { rows, given } = await rowsAndPrompts('env_manager_cls: step, history_length: 2', 'state_questions: 1', 1);
    expect(given.some(({ promptIds }) => decode(promptIds).includes('[step 1]'))).toBe(true);
    given.forEach(({ promptIds }, i) => expect(rowPrompt(rows.ids[i]!, rows.masks[i]!)).toEqual(withQuestion(promptIds)));
  });

  test("step with {last_action_desc}: each turn's prompt says what the env said of the last step, and the think rows are those prompts", async () => {
    const { rows, given } = await rowsAndPrompts(
      'env_manager_cls: step, history_length: 0, agent_template: "{current_observation}\\nLast: {last_action_desc}"',
      'think: true, state_questions: 1',
      2,
    );
    const users = given.map(({ promptIds }) => messages(decode(promptIds)).user!);
    expect(users[0]).toEndWith('Last: (none yet)');
    expect(users.some((user) => /Last: you went (left|right)$/.test(user))).toBe(true);
    expect(users.some((user) => user.endsWith('Last: you stood still'))).toBe(true);
    given.forEach(({ promptIds }, i) => expect(rowPrompt(rows.ids[2 * i + 1]!, rows.masks[2 * i + 1]!)).toEqual([...promptIds]));
  });

  test("an env with tools: the rows list them as the episode's prompts do", async () => {
    const { rows, given } = await rowsAndPrompts('env_manager_cls: step, history_length: 0, env_config: {tools: true}', 'state_questions: 1', 1);
    expect(decode(given[0]!.promptIds)).toContain('move_walker');
    given.forEach(({ promptIds }, i) => expect(rowPrompt(rows.ids[i]!, rows.masks[i]!)).toEqual(withQuestion(promptIds)));
  });
});

/** A config whose warm start plays EPISODES games of compact Kuhn Poker, each answer after its notes; `seats` as custom_envs gives them. */
async function pokerConfig(host: PluginHost, seats: string): Promise<AgenticConfig> {
  const yaml = `
seed: 3
pretrain: agentic:nano
max_steps: 1
eval_steps: 0
sequence_length: 160
rollout_batch_size: 4
val_batch_size: 2
custom_envs:
  Poker:
    {env_type: kuhn_poker, env_manager_cls: step, history_length: 0, max_steps: 4, max_tokens_per_step: 16, env_config: {prompt_style: compact},
     agent_system_template: "Play poker.", agent_template: "{env_instruction}\\n{current_observation}", ${seats}}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Poker]}
val_env_manager: {num_env_groups: 2, group_size: 1, tags: [Poker]}
warm_start: {enabled: true, episodes: ${EPISODES}, worked_examples: 0, random_actions: true, think: true}
`;
  const dir = scratch({ 'config.yaml': yaml });
  return (await loadConfig({ configFile: join(dir, 'config.yaml'), overrides: [] }, host)).config;
}

/** The prompts the rollout's games of the warm start's seeds give the policy's seats, with the seat, in the order of the moves. */
async function gamePrompts(config: AgenticConfig, host: PluginHost): Promise<(Given & { seat: number; episode: number })[]> {
  const custom = config.custom_envs.Poker!;
  const plugin = await host.resolveEnv(custom.env_type);
  const prompts: (Given & { seat: number; episode: number })[] = [];
  for (let episode = 0; episode < EPISODES; episode++) {
    const env = new GuardedEnv(plugin, custom.env_config, host.envContext());
    const seed = hashSeed(config.seed, 'warm_start', 'states', 'Poker', episode);
    const task = { mode: 'train' as const, tag: 'Poker', envId: 0, groupId: 0, episodeId: episode, seed };
    const plays = seatPlays(custom, plugin.seats!, { groupId: 0, episodeId: episode });
    await playSeatedEpisode(env, custom, task, episodeLimits(config, 'train'), new RandomPolicy(chat), chat, plays, {
      beforeTurn: ({ promptIds, contextIds, seat }) => void prompts.push({ promptIds, contextIds, seat: seat!, episode }),
    });
    await env.close();
  }
  return prompts;
}

describe("a seated env's warm start rows are each seat's prompts", () => {
  const rowsOfGames = async (seats: string) => {
    const host = new PluginHost();
    const config = await pokerConfig(host, seats);
    const rows = await generateRows(config, host, chat);
    const given = await gamePrompts(config, host);
    expect(rows.ids.length).toBe(given.length);
    return { rows, given };
  };
  /** A row's response as learned: the notes on its seat's card, then the move. */
  const response = (row: Int32Array, mask: Uint8Array) => decode(Array.from(row.subarray(mask.indexOf(1))));

  test("self-play: every decision of both seats is a row on its seat's own prompt, its notes naming that seat's card", async () => {
    const { rows, given } = await rowsOfGames('rotate_seats: true');
    expect(given.length).toBeGreaterThan(2 * EPISODES);
    given.forEach(({ promptIds, seat }, i) => {
      const prompt = decode(promptIds);
      expect(rowPrompt(rows.ids[i]!, rows.masks[i]!)).toEqual([...promptIds]);
      expect(messages(prompt).user).toStartWith(`One-card poker, three cards. You are P${seat}.`);
      const card = /Card ([JQK])$/.exec(messages(prompt).user!)![1]!;
      expect(response(rows.ids[i]!, rows.masks[i]!)).toMatch(new RegExp(`^<think>${card} (low|mid|high)</think>\\[(check|bet|call|fold)\\]`));
    });
  });

  test("a seat an env opponent plays answers as that opponent and gives no rows; the policy's seat rotates from game to game", async () => {
    const { rows, given } = await rowsOfGames('seats: {P0: nash}, rotate_seats: true');
    // rotation gives the policy P1 in even games and P0 in odd ones
    expect(given.map(({ seat, episode }) => seat === 1 - (episode % 2))).toEqual(given.map(() => true));
    expect(new Set(given.map(({ episode }) => episode)).size).toBe(EPISODES);
    given.forEach(({ promptIds, seat }, i) => {
      expect(rowPrompt(rows.ids[i]!, rows.masks[i]!)).toEqual([...promptIds]);
      expect(messages(decode(promptIds)).user).toStartWith(`One-card poker, three cards. You are P${seat}.`);
    });
  });
});
