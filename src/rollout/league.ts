/**
 * A round robin of policies in the seated games of the val env manager (`agentic eval --league`,
 * docs/multi_agent.md#a-league-of-checkpoints): every pair plays each game tag's episodes, the
 * first of the pair in one seat and the second in the others, the seats rotated from game to game
 * (so each plays every seat about as often); the result is each pair's wins, draws and losses with
 * 95% Wilson intervals, and a rating of every entrant on the Elo scale.
 *
 * The rating is the Bradley-Terry model's maximum-likelihood fit (a draw half a win), by Hunter's
 * minorization-maximization iteration, with one drawn game added to every pair as a prior so an
 * entrant that won or lost everything still gets a finite rating. An Elo difference d says the
 * model expects the stronger to score 1 / (1 + 10^(-d/400)) against the weaker; the ratings'
 * mean is 1000.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type AgenticConfig, PAST_PLAYER, POLICY_PLAYER } from '../config/schema';
import { runBackend } from '../config/validate';
import { describeBackend, startBackend } from '../engine/backend';
import { UsageError } from '../errors';
import type { PluginHost } from '../host/plugin_host';
import { type LoadedModel, loadModel } from '../model/load';
import { ChatFormat } from './chat';
import { EnvManager, generatingArgs, modelPolicy } from './env_manager';
import { evaluationEpisodes } from './evaluate';
import type { Policy } from './policy';
import { type Rate, rate } from './seat_results';
import type { Episode } from './types';

/** One policy of the league: a fresh Policy per batch of games (a model policy's keys and values are its own). */
export interface LeagueEntrant {
  name: string;
  open(): Policy;
}

/** The games of `first` against `second` on one tag, counted from `first`'s side. */
export interface LeaguePair {
  tag: string;
  first: string;
  second: string;
  games: number;
  win: Rate;
  draw: Rate;
  loss: Rate;
  /** Games that did not finish (a failure, the turn limit): in games, in none of the rates' counts. */
  unfinished: number;
  /** The games `first` played in each seat. */
  seats: Record<string, number>;
}

export interface LeagueResult {
  entrants: string[];
  /** The game tags played, and the games each pair played on each. */
  tags: string[];
  games_per_pair: number;
  pairs: LeaguePair[];
  /** Each entrant's rating (Bradley-Terry fit on the Elo scale, mean 1000), over every tag. */
  elo: Record<string, number>;
}

/** The val tags whose env has seats: the games a league plays. */
export async function leagueTags(config: AgenticConfig, host: PluginHost): Promise<string[]> {
  const tags: string[] = [];
  for (const tag of config.val_env_manager.tags) {
    const plugin = await host.resolveEnv(config.custom_envs[tag]!.env_type);
    if (plugin.seats) tags.push(tag);
  }
  return tags;
}

/**
 * `config` playing only `tag`, its first seat the policy's and the others past, rotated: the
 * league's first entrant answers as the policy and its second as the past seats.
 */
function pairingConfig(config: AgenticConfig, tag: string, seatNames: readonly string[]): AgenticConfig {
  const custom = config.custom_envs[tag]!;
  const seats = Object.fromEntries(seatNames.map((name, s) => [name, s === 0 ? POLICY_PLAYER : PAST_PLAYER]));
  return {
    ...config,
    custom_envs: { ...config.custom_envs, [tag]: { ...custom, seats, rotate_seats: true } },
    val_env_manager: { ...config.val_env_manager, tags: [tag], num_groups_partition: null },
  };
}

function pairResult(tag: string, first: string, second: string, records: readonly Episode[]): LeaguePair {
  const n = records.length;
  const count = (what: 'win' | 'draw' | 'loss') => records.filter((e) => e.seat!.outcome?.[e.seat!.index] === what).length;
  const [win, draw, loss] = [count('win'), count('draw'), count('loss')];
  const seats: Record<string, number> = {};
  for (const { seat } of records) seats[seat!.names[seat!.index]!] = (seats[seat!.names[seat!.index]!] ?? 0) + 1;
  return { tag, first, second, games: n, win: rate(win, n), draw: rate(draw, n), loss: rate(loss, n), unfinished: n - win - draw - loss, seats };
}

/** Every pair of `entrants` plays `games` games of each of `tags` (whole groups of val_env_manager.group_size). */
export async function playLeague(
  config: AgenticConfig,
  host: PluginHost,
  chat: ChatFormat,
  entrants: readonly LeagueEntrant[],
  tags: readonly string[],
  games: number,
  info: (line: string) => void = () => {},
): Promise<LeagueResult> {
  const pairs: LeaguePair[] = [];
  for (const tag of tags) {
    const spec = (await host.resolveEnv(config.custom_envs[tag]!.env_type)).seats!;
    const manager = await EnvManager.build('val', pairingConfig(config, tag, spec.names), host);
    try {
      for (const [i, first] of entrants.entries()) {
        for (const second of entrants.slice(i + 1)) {
          const policy = first.open();
          const opponent = second.open();
          try {
            const batch = await manager.collect(games, policy, chat, 0, { policyFor: () => opponent });
            const pair = pairResult(tag, first.name, second.name, batch.episodes);
            pairs.push(pair);
            info(leaguePairLine(pair));
          } finally {
            await policy.close();
            await opponent.close();
          }
        }
      }
    } finally {
      await manager.close();
    }
  }
  return {
    entrants: entrants.map((e) => e.name),
    tags: [...tags],
    games_per_pair: games,
    pairs,
    elo: eloRatings(
      entrants.map((e) => e.name),
      pairs,
    ),
  };
}

/** The model a league entry names: a checkpoint's actor (checkpoint-N/actor), or a model folder itself. */
function modelFolderOf(entry: string): string {
  const actor = join(entry, 'actor');
  if (existsSync(actor)) return actor;
  if (existsSync(join(entry, 'config.json')) || existsSync(join(entry, 'adapter_config.json'))) return entry;
  throw new UsageError(`--league ${entry}: neither a checkpoint (with an actor folder) nor a model folder (with config.json)`);
}

/**
 * The league of the models in `entries` (checkpoint or model folders, two or more) on the val
 * tags that are games of seats, each pair playing as many games as an evaluation plays episodes,
 * decoding as val_env_manager's generating_args say.
 */
export async function leagueOfFolders(
  config: AgenticConfig,
  host: PluginHost,
  entries: readonly string[],
  info: (line: string) => void,
): Promise<LeagueResult> {
  const tags = await leagueTags(config, host);
  if (tags.length === 0)
    throw new UsageError(
      `--league: no tag val_env_manager plays (${config.val_env_manager.tags.join(', ') || 'none'}) is a game of seats; name one (val_env_manager.tags=[...])`,
    );
  const folders = entries.map(modelFolderOf);
  const started = await startBackend(runBackend(config), { webgpuAdapter: config.webgpu_adapter, blas: config.blas });
  info(`league of ${entries.length} on ${describeBackend(started)}`);
  const models: LoadedModel[] = [];
  try {
    for (const folder of folders) models.push(await loadModel(folder, { seed: config.seed, trainable: false }));
    const vocab = models[0]!.tokenizer.vocabSize;
    const other = models.findIndex((m) => m.tokenizer.vocabSize !== vocab);
    if (other !== -1) throw new UsageError(`--league ${entries[other]}: its tokenizer is not ${entries[0]}'s; a league's policies read the same prompts`);
    const chat = new ChatFormat(models[0]!.tokenizer);
    const gen = generatingArgs(config, 'val');
    const entrants = models.map((m, i) => ({ name: entries[i]!, open: () => modelPolicy(config, gen, m.model, chat) }));
    return await playLeague(config, host, chat, entrants, tags, evaluationEpisodes(config), info);
  } finally {
    for (const m of models) m.model.dispose();
  }
}

/**
 * Bradley-Terry strengths by minorization-maximization (Hunter 2004), on the Elo scale with mean
 * 1000: a win scores 1, a draw 1/2, and every pair gets one drawn game as a prior. Unfinished games
 * score for neither.
 */
export function eloRatings(names: readonly string[], pairs: readonly LeaguePair[]): Record<string, number> {
  const n = names.length;
  const index = new Map(names.map((name, i) => [name, i]));
  const games = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const scores = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      games[i]![j] = 1;
      scores[i]! += 0.5;
    }
  }
  for (const pair of pairs) {
    const [a, b] = [index.get(pair.first)!, index.get(pair.second)!];
    const decided = pair.win.count + pair.draw.count + pair.loss.count;
    games[a]![b]! += decided;
    games[b]![a]! += decided;
    scores[a]! += pair.win.count + pair.draw.count / 2;
    scores[b]! += pair.loss.count + pair.draw.count / 2;
  }
  let strength = new Array<number>(n).fill(1);
  for (let iteration = 0; iteration < 1000; iteration++) {
    const next = strength.map((p, i) => scores[i]! / games[i]!.reduce((sum, g, j) => (j === i ? sum : sum + g / (p + strength[j]!)), 0));
    const logMean = next.reduce((sum, p) => sum + Math.log(p), 0) / n;
    const normalized = next.map((p) => p / Math.exp(logMean));
    const moved = Math.max(...normalized.map((p, i) => Math.abs(p - strength[i]!)));
    strength = normalized;
    if (moved < 1e-12) break;
  }
  return Object.fromEntries(names.map((name, i) => [name, 1000 + 400 * Math.log10(strength[i]!)]));
}

const percent = (r: Rate) => `${r.rate.toFixed(3)} [${r.low.toFixed(3)}, ${r.high.toFixed(3)}]`;

export function leaguePairLine(pair: LeaguePair): string {
  const unfinished = pair.unfinished > 0 ? `, ${pair.unfinished} unfinished` : '';
  return `${pair.tag}: ${pair.first} vs ${pair.second}, ${pair.games} games: win ${percent(pair.win)}, draw ${percent(pair.draw)}, loss ${percent(pair.loss)}${unfinished}`;
}

/** The ratings, strongest first. */
export function eloLines(result: LeagueResult): string[] {
  const ranked = Object.entries(result.elo).sort((a, b) => b[1] - a[1]);
  return [
    `Elo (Bradley-Terry over ${result.tags.join(', ')}; mean 1000; a draw half a win):`,
    ...ranked.map(([name, elo], i) => `  ${i + 1}. ${elo.toFixed(0).padStart(5)}  ${name}`),
  ];
}
