/**
 * The league (src/rollout/league.ts, `agentic eval --league`): the Bradley-Terry ratings on the
 * Elo scale, a round robin of policies in tic_tac_toe whose results are known (a player of the
 * first free cell beats one that answers gibberish from either seat), and the command's one-line
 * refusals and its JSON.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eloRatings, type LeaguePair, playLeague } from '../../src/rollout/league';
import type { Policy, TurnQuery, TurnReply } from '../../src/rollout/policy';
import { rate } from '../../src/rollout/seat_results';
import { agentic, scratch } from '../helpers';
import { saveModel } from '../../src/model/load';
import { chat, configFrom, hostWith, model, tokenizer } from './helpers';

/** A folder of the rollout tests' small random policy. */
async function microPolicyFolder(): Promise<string> {
  const folder = join(scratch(), 'micro');
  await saveModel(folder, model, tokenizer);
  return folder;
}

function pair(first: string, second: string, win: number, draw: number, loss: number): LeaguePair {
  const games = win + draw + loss;
  return { tag: 'Game', first, second, games, win: rate(win, games), draw: rate(draw, games), loss: rate(loss, games), unfinished: 0, seats: {} };
}

describe('Elo ratings (Bradley-Terry)', () => {
  test('even results rate alike, and a 3:1 score is about 191 points', () => {
    expect(eloRatings(['a', 'b'], [pair('a', 'b', 10, 0, 10)])).toEqual({ a: 1000, b: 1000 });
    const draws = eloRatings(['a', 'b'], [pair('a', 'b', 0, 20, 0)]);
    expect(draws.a).toBeCloseTo(1000, 9);
    // 298 to 99 and the prior's drawn game: a scores 3:1, and 400 log10(3) = 190.8 between them
    const elo = eloRatings(['a', 'b'], [pair('a', 'b', 298, 0, 99)]);
    expect(elo.a! - elo.b!).toBeCloseTo(400 * Math.log10(3), 6);
    expect((elo.a! + elo.b!) / 2).toBeCloseTo(1000, 9);
  });

  test('a transitive round robin ranks in order, and a clean sweep stays finite', () => {
    const elo = eloRatings(['a', 'b', 'c'], [pair('a', 'b', 8, 0, 2), pair('b', 'c', 8, 0, 2), pair('a', 'c', 10, 0, 0)]);
    expect(elo.a!).toBeGreaterThan(elo.b!);
    expect(elo.b!).toBeGreaterThan(elo.c!);
    expect(Number.isFinite(elo.a!) && Number.isFinite(elo.c!)).toBe(true);
  });
});

/** Answers by a rule on the prompt's free cells: the first one, or gibberish. */
class RulePolicy implements Policy {
  readonly remote = false;
  closed = false;
  constructor(readonly name: string) {}
  async respond(query: TurnQuery): Promise<TurnReply> {
    const prompt = tokenizer.decode([...query.promptIds], { skipSpecialTokens: false });
    const free = [...prompt.matchAll(/Available Moves: '\[(\d)\]'/g)].at(-1)?.[1];
    const tokens = [...tokenizer.encode(this.name === 'first-cell' ? `[${free}]` : 'no idea', { addSpecialTokens: false }), chat.stopTokenIds[0]!];
    return { tokens, logProbs: tokens.map(() => -0.5), finishReason: 'stop_token', failure: null };
  }
  cancel(): void {}
  stats() {
    return { generatedTokens: 0 };
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

const leagueYaml = `
seed: 5
sequence_length: 2048
val_batch_size: 8
custom_envs:
  Game:
    env_type: tic_tac_toe
    max_steps: 9
    max_tokens_per_step: 8
    seats: {X: minimax}
train_env_manager: {tags: [Game]}
val_env_manager: {num_env_groups: 8, group_size: 1, tags: [Game], generating_args: {max_new_tokens: 8, temperature: 0, do_sample: false}}
`;

test('a round robin plays every pair from both seats, and the better player wins and rates higher', async () => {
  const config = await configFrom(leagueYaml);
  const opened: RulePolicy[] = [];
  const entrant = (name: string) => ({
    name,
    open: () => {
      const policy = new RulePolicy(name);
      opened.push(policy);
      return policy;
    },
  });
  const result = await playLeague(config, hostWith(), chat, [entrant('gibberish'), entrant('first-cell')], ['Game'], 8);
  expect(result.pairs).toHaveLength(1);
  // the configured minimax seat is the pair's: gibberish meets first-cell, in each seat in half the games
  expect(result.pairs[0]).toMatchObject({ first: 'gibberish', second: 'first-cell', games: 8, unfinished: 0, seats: { O: 4, X: 4 } });
  expect(result.pairs[0]!.loss.count).toBe(8);
  expect(result.elo['first-cell']!).toBeGreaterThan(result.elo.gibberish! + 200);
  expect(opened.every((p) => p.closed)).toBe(true);
});

describe('agentic eval --league', () => {
  test('plays two model folders, prints the ratings and writes the JSON', async () => {
    const [a, b] = [await microPolicyFolder(), await microPolicyFolder()];
    const out = join(scratch(), 'league.json');
    const { code, stdout, stderr } = await agentic([
      'eval',
      '--config-name',
      'tic_tac_toe',
      '--league',
      `${a},${b}`,
      '--out',
      out,
      'val_batch_size=4',
      'val_env_manager.num_env_groups=4',
      'val_env_manager.tags=[TicTacToeVsMinimax]',
    ]);
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    expect(stdout).toContain('Elo (Bradley-Terry over TicTacToeVsMinimax; mean 1000; a draw half a win):');
    const json = JSON.parse(readFileSync(out, 'utf8'));
    expect(json.entrants).toEqual([a, b]);
    expect(json.pairs[0].games).toBe(4);
  });

  test('refuses a single entry, a folder that holds no model, and a config with no game of seats, in one line each', async () => {
    const folder = await microPolicyFolder();
    const refused = async (args: string[]) => {
      const { code, stderr } = await agentic(['eval', ...args]);
      expect(code).toBe(2);
      expect(stderr.trim().split('\n')).toHaveLength(1);
      return stderr.trim();
    };
    expect(await refused(['--config-name', 'tic_tac_toe', '--league', folder])).toContain('--league: name two or more');
    expect(await refused(['--config-name', 'tic_tac_toe', '--league', `${folder},${scratch()}`])).toContain('neither a checkpoint');
    expect(await refused(['--config-name', 'tic_tac_toe', '--league', `${folder},${folder},`])).toContain('a folder is named twice');
    expect(await refused(['--league', `${folder},${await microPolicyFolder()}`])).toBe(
      'error: --league: no tag val_env_manager plays (FrozenLake) is a game of seats; name one (val_env_manager.tags=[...])',
    );
  });
});
