/**
 * Games of a seated env (seated_episode.ts) on tic_tac_toe: turn order, each seat's own rows and
 * masks, the credit of every seat's rewards, a bad answer costing only its seat, rotation, and the
 * credit groups that keep seats apart.
 */
import { describe, expect, test } from 'bun:test';
import type { AgenticConfig } from '../../src/config/schema';
import { tf } from '../../src/engine/tf';
import { groupKey, normalizedScores } from '../../src/algo/rewards';
import { EnvManager, makePolicy } from '../../src/rollout/env_manager';
import type { Policy, TurnQuery, TurnReply } from '../../src/rollout/policy';
import { seatPlays } from '../../src/rollout/seat_players';
import { creditSeatRewards, outcomeOfReturns } from '../../src/rollout/seated_episode';
import type { RolloutBatch, Turn } from '../../src/rollout/types';
import { rewardRows, fromRollout } from '../../src/train/batch';
import { savedEpisodeOf } from '../../src/render/episodes_file';
import { replayEpisode, ReplayError } from '../../src/render/replay';
import { notLostAgainst, rate, seatResultLines, seatResults } from '../../src/rollout/seat_results';
import ticTacToe from '../../plugins/envs/tic_tac_toe';
import { chat, configFrom, hostWith, model, tokenizer, worstLogProbGap } from './helpers';

/** Plays by a rule on the prompt's last "Available Moves" line: the first free cell, or gibberish on the turns listed. */
class FirstCellPolicy implements Policy {
  readonly name = 'first-cell';
  readonly remote = false;
  readonly asked: TurnQuery[] = [];
  constructor(private readonly gibberishOn: (query: TurnQuery) => boolean = () => false) {}
  async respond(query: TurnQuery): Promise<TurnReply> {
    this.asked.push(query);
    const prompt = tokenizer.decode([...query.promptIds], { skipSpecialTokens: false });
    const free = [...prompt.matchAll(/Available Moves: '\[(\d)\]'/g)].at(-1)?.[1];
    const text = this.gibberishOn(query) ? 'no idea' : `[${free}]`;
    const tokens = [...tokenizer.encode(text, { addSpecialTokens: false }), chat.stopTokenIds[0]!];
    return { tokens, logProbs: tokens.map(() => -0.5), finishReason: 'stop_token', failure: null };
  }
  cancel(): void {}
  stats() {
    return { generatedTokens: 0 };
  }
  async close(): Promise<void> {}
}

function gameYaml(options: { seats?: string; kind?: 'traj' | 'step'; groups?: number; size?: number; rotate?: boolean } = {}): string {
  const groups = options.groups ?? 2;
  const size = options.size ?? 2;
  return `
seed: 5
sequence_length: 2048
rollout_batch_size: ${groups * size}
val_batch_size: ${groups * size}
custom_envs:
  Game:
    env_type: tic_tac_toe
    env_manager_cls: ${options.kind ?? 'traj'}
    max_steps: 9
    max_tokens_per_step: 8
    ${options.seats ? `seats: ${options.seats}` : ''}
    rotate_seats: ${options.rotate ?? true}
train_env_manager: {num_env_groups: ${groups}, group_size: ${size}, tags: [Game], generating_args: {max_new_tokens: 8, temperature: 1, top_p: 1, top_k: 0}}
val_env_manager: {num_env_groups: ${groups}, group_size: ${size}, tags: [Game], generating_args: {max_new_tokens: 8, temperature: 1, top_p: 1, top_k: 0}}
`;
}

async function play(config: AgenticConfig, policy: Policy): Promise<RolloutBatch> {
  const manager = await EnvManager.build('train', config, hostWith());
  try {
    return await manager.collect(config.rollout_batch_size, policy, chat);
  } finally {
    await manager.close();
  }
}

const text = (ids: readonly number[]) => tokenizer.decode([...ids], { skipSpecialTokens: false });

describe('self-play: both seats the policy', () => {
  test("every game gives one record per seat, each holding only its seat's turns, in the env's turn order", async () => {
    const config = await configFrom(gameYaml(), hostWith());
    const batch = await play(config, new FirstCellPolicy());
    // 4 games, 2 records each, in batch order: game by game, seat O then seat X
    expect(batch.episodes).toHaveLength(8);
    for (let g = 0; g < 4; g++) {
      const [o, x] = [batch.episodes[2 * g]!, batch.episodes[2 * g + 1]!];
      expect([o.seat!.index, x.seat!.index]).toEqual([0, 1]);
      expect(o.trajGroupId).toBe(x.trajGroupId);
      expect(o.trajId).toBe(`${o.trajGroupId}_${o.envId}_s0`);
      expect(x.trajId).toBe(`${x.trajGroupId}_${x.envId}_s1`);
      // first free cell against first free cell: O takes 0, 2, 4, 6 and wins on the diagonal 2-4-6
      expect(o.seat!.moves.map((m) => `${m.seat}${m.responseText}`)).toEqual(['0[0]', '1[1]', '0[2]', '1[3]', '0[4]', '1[5]', '0[6]']);
      expect(o.turns.map((t) => t.responseText)).toEqual(['[0]', '[2]', '[4]', '[6]']);
      expect(x.turns.map((t) => t.responseText)).toEqual(['[1]', '[3]', '[5]']);
      expect([o.score, x.score]).toEqual([1, -1]);
      expect(o.seat!.outcome).toEqual(['win', 'loss']);
      expect([o.metrics.win, o.metrics.loss, x.metrics.win, x.metrics.loss]).toEqual([1, 0, 0, 1]);
      // each seat's first prompt is its own instruction; neither sees the other's
      expect(text(o.turns[0]!.promptIds)).toContain("you will be 'O'");
      expect(text(x.turns[0]!.promptIds)).toContain("you will be 'X'");
      expect(text(x.turns[0]!.promptIds)).toContain('Player 0 placed their symbol (O) in cell 0.');
      const row = (turns: readonly Turn[]) => text(turns.flatMap((t) => [...t.promptIds, ...t.responseIds]));
      expect(row(o.turns)).not.toContain("you will be 'X'");
      expect(row(x.turns)).not.toContain("you will be 'O'");
    }
    // the rows: one per record, the seat named on each
    expect(batch.samples.map((s) => s.seat)).toEqual(['O', 'X', 'O', 'X', 'O', 'X', 'O', 'X']);
    expect(new Set(batch.samples.map((s) => s.trajId)).size).toBe(8);
  });

  test("a model's seats are asked in their own sessions and streams, and each row's log-probs are the model's own", async () => {
    const config = await configFrom(gameYaml({ groups: 1, size: 2 }), hostWith());
    const before = tf.memory().numTensors;
    const policy = makePolicy(config, 'train', model, chat);
    const batch = await play(config, policy);
    await policy.close();
    expect(tf.memory().numTensors).toBe(before);
    // a seat whose opponent lost the game before its first turn has an empty row
    const rows = batch.samples.filter((s) => s.inputIds.length > 0);
    expect(rows.length).toBeGreaterThan(0);
    for (const sample of rows) expect(await worstLogProbGap(sample)).toBeLessThanOrEqual(1e-4);
  });

  test('the sessions, query ids and sampling streams name the seat', async () => {
    const config = await configFrom(gameYaml({ groups: 1, size: 1 }), hostWith());
    const policy = new FirstCellPolicy();
    await play(config, policy);
    expect(policy.asked.map((q) => q.session)).toEqual(['train:0:s0', 'train:0:s1', 'train:0:s0', 'train:0:s1', 'train:0:s0', 'train:0:s1', 'train:0:s0']);
    expect(policy.asked.map((q) => q.id).slice(0, 3)).toEqual(['train:0:0:s0:0', 'train:0:0:s1:0', 'train:0:0:s0:1']);
  });
});

describe('a bad answer', () => {
  test("costs only its seat: a retry, then the game; the other seat's reward is its win", async () => {
    const config = await configFrom(gameYaml({ groups: 1, size: 1 }), hostWith());
    // seat X answers gibberish twice on its first turn: the first is a retry, the second loses the game
    const batch = await play(config, new FirstCellPolicy((query) => query.session.endsWith(':s1')));
    const [o, x] = batch.episodes;
    expect(x!.turns.map((t) => t.metrics.action_is_valid)).toEqual([false, false]);
    expect(o!.turns).toHaveLength(1);
    expect([o!.score, x!.score]).toEqual([1, -1]);
    // the loss sits on X's last turn, the win on O's only one
    expect(x!.turns.map((t) => t.reward)).toEqual([0, -1]);
    expect(o!.turns.map((t) => t.reward)).toEqual([1]);
    expect(x!.seat!.outcome).toEqual(['win', 'loss']);
  });
});

describe('seats played by the env', () => {
  test('against minimax the policy never wins; rotation gives it both seats, and only its seat is recorded', async () => {
    const config = await configFrom(gameYaml({ seats: '{X: minimax}', groups: 2, size: 2 }), hostWith());
    const batch = await play(config, new FirstCellPolicy());
    expect(batch.episodes).toHaveLength(4);
    // group 0 gives the policy seat O, group 1 seat X (its game 0 rotated by its group id)
    expect(batch.episodes.map((e) => e.seat!.index)).toEqual([0, 0, 1, 1]);
    for (const e of batch.episodes) {
      expect(e.seat!.players[e.seat!.index]).toBe('policy');
      expect(e.metrics.win).toBe(0);
      expect(e.score).toBe(-1);
    }
    const spec = ticTacToe.seats!;
    const custom = config.custom_envs.Game!;
    const players = (groupId: number, episodeId: number, c = custom) => seatPlays(c, spec, { groupId, episodeId }).map((p) => p.player);
    expect(players(0, 0)).toEqual(['policy', 'minimax']);
    expect(players(0, 1)).toEqual(['minimax', 'policy']);
    expect(players(1, 1)).toEqual(['policy', 'minimax']);
    expect(players(0, 1, { ...custom, rotate_seats: false })).toEqual(['policy', 'minimax']);
  });
});

describe('credit', () => {
  test("a seat's reward goes to its latest turn at or before the move, before its first turn to its first", () => {
    const turn = () => ({ reward: 9 }) as Turn;
    const game = {
      seats: [{ turns: [turn(), turn()] }, { turns: [turn()] }] as never,
      moves: [
        { seat: 0, responseText: '', rewards: [0.5, 0.25] },
        { seat: 1, responseText: '', rewards: [0, 0] },
        { seat: 0, responseText: '', rewards: [1, -1] },
      ],
    };
    expect(creditSeatRewards(game)).toEqual([1.5, -0.75]);
    const [o, x] = (game.seats as unknown as { turns: Turn[] }[]).map((s) => s.turns.map((t) => t.reward));
    expect(o).toEqual([0.5, 1]);
    expect(x).toEqual([-0.75]);
    expect(outcomeOfReturns([1, -1])).toEqual(['win', 'loss']);
    expect(outcomeOfReturns([0, 0])).toEqual(['draw', 'draw']);
  });

  test("GRPO compares a seat's games only with that seat's: two seats give each the advantages it would have alone", async () => {
    const config = await configFrom(gameYaml({ groups: 1, size: 2 }), hostWith());
    const batch = await play(config, new FirstCellPolicy());
    const rows = rewardRows(fromRollout(batch, config, chat, { baselines: null, sourceRefLogProbs: null }));
    expect(new Set(rows.map((r) => groupKey(r, 'traj_group_id')))).toEqual(new Set([`${rows[0]!.trajGroupId}#O`, `${rows[0]!.trajGroupId}#X`]));
    expect(groupKey(rows[1]!, 'tags')).toBe('Game#X');
    const settings = { grouping: 'traj_group_id', method: 'mean', stepRewardGamma: 1, episodeRewardWeight: 1, stepRewardWeight: 1 } as const;
    const together = normalizedScores(rows, settings).rewards;
    const alone = (seat: string) =>
      normalizedScores(
        rows.filter((r) => r.seat === seat),
        settings,
      ).rewards;
    expect(together.filter((_, i) => rows[i]!.seat === 'O')).toEqual(alone('O'));
    expect(together.filter((_, i) => rows[i]!.seat === 'X')).toEqual(alone('X'));
    // one agent facing an env keeps its keys as they were
    expect(groupKey({ ...rows[0]!, seat: null }, 'traj_group_id')).toBe(rows[0]!.trajGroupId);
  });
});

describe('config', () => {
  const refused = async (yaml: string, overrides: string[] = []) => {
    const error = await configFrom(yaml, hostWith(), overrides).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toContain('\n');
    return (error as Error).message;
  };

  test('seats name seats the env has, players it has, and at least one policy seat', async () => {
    expect(await refused(gameYaml({ seats: '{Y: minimax}' }))).toBe("custom_envs.Game.seats.Y: env 'tic_tac_toe' has seats O, X");
    expect(await refused(gameYaml({ seats: '{X: alphazero}' }))).toBe(
      "custom_envs.Game.seats.X: 'alphazero' plays no seat of env 'tic_tac_toe'; its players are policy, past, agent, random, minimax",
    );
    expect(await refused(gameYaml({ seats: '{O: random, X: minimax}' }))).toBe(
      "custom_envs.Game.seats: no seat is the policy's, so its games would train and score nothing; give one seat policy",
    );
    expect(await refused(gameYaml(), ['adv_estimator=remax'])).toContain("ReMax's greedy baselines replay an episode as one agent");
    expect(
      await refused(gameYaml(), ['warm_start.enabled=true', 'warm_start.demonstrations=solver', 'warm_start.think=true', 'warm_start.worked_examples=8']),
    ).toContain('a game of seats is won or lost, never solved');
  });

  test("past seats (the opponent pool) are the training run's, played in the trainer's thread", async () => {
    expect(await refused(gameYaml({ seats: '{O: past}' }))).toBe(
      'custom_envs.Game.seats.O: past (the opponent pool) plays training games only; give val_env_manager a tag whose opponents stay the same',
    );
    expect(await refused(gameYaml({ seats: '{O: past}' }), ['val_env_manager.tags=[]', 'async_generation_ratio=1'])).toBe(
      "custom_envs.Game.seats.O: past (the opponent pool) lives in the trainer's thread; play the rollouts there (async_generation_ratio=0)",
    );
    expect((await configFrom(gameYaml({ seats: '{O: past}' }), hostWith(), ['val_env_manager.tags=[]'])).custom_envs.Game!.seats).toEqual({ O: 'past' });
  });

  test('an env without seats takes none', async () => {
    const yaml = gameYaml().replace('env_type: tic_tac_toe', 'env_type: frozen_lake').replace('rotate_seats: true', 'seats: {O: policy}');
    expect(await refused(yaml)).toBe("custom_envs.Game.seats: env 'frozen_lake' has no seats (one agent plays it); leave seats out");
  });
});

describe('eval and render', () => {
  test('seat results count each seat the policy played, per opponent, with Wilson intervals', async () => {
    const config = await configFrom(gameYaml({ seats: '{X: minimax}', groups: 2, size: 2 }), hostWith());
    const batch = await play(config, new FirstCellPolicy());
    const results = seatResults(batch.episodes, 1);
    const all = results.Game!['vs minimax']!.all!;
    expect(all.games).toBe(4);
    expect([all.win.count, all.draw.count, all.loss.count]).toEqual([0, 0, 4]);
    expect(all.loss.low).toBeGreaterThan(0.4);
    expect(Object.keys(results.Game!['vs minimax']!)).toEqual(['all', 'O', 'X']);
    expect(seatResultLines(results)[0]).toMatch(/^Game vs minimax, both seats: 4 games, win 0\.000 \[0\.000, 0\.\d+\], draw /);
    // self-play counts a game once for each seat
    const selfPlay = seatResults((await play(await configFrom(gameYaml(), hostWith()), new FirstCellPolicy())).episodes, 1);
    expect(selfPlay.Game!['vs policy']!.all!.games).toBe(8);
    // an opponent's not-losing rate pools the tags that played it; one no tag played has none
    const twoTags = { Game: results.Game!, Again: { 'vs minimax': { all: { ...all, games: 6, not_loss: rate(3, 6) } } } };
    expect(notLostAgainst(twoTags, 'vs minimax')).toMatchObject({ rate: 0.3, count: 3 });
    expect(notLostAgainst(results, 'vs random')).toBeNull();
  });

  test("a saved record replays the whole game, both seats' moves, and its return is checked", async () => {
    const config = await configFrom(gameYaml({ groups: 1, size: 1 }), hostWith());
    const batch = await play(config, new FirstCellPolicy());
    const x = savedEpisodeOf(batch.episodes[1]!);
    const replay = await replayEpisode(config, hostWith(), x);
    expect(replay.turns.map((t) => t.responseText)).toEqual(['[0]', '[1]', '[2]', '[3]', '[4]', '[5]', '[6]']);
    expect(replay.frames).toHaveLength(8);
    expect(replay.captions[2]).toBe('move 2 (X: policy): [1]');
    expect(replay.captions.at(-1)).toEndWith('X scores -1');
    await expect(replayEpisode(config, hostWith(), { ...x, score: 1 })).rejects.toThrow(ReplayError);
  });
});
