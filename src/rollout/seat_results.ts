/**
 * How a policy did in a seated env's games (docs/multi_agent.md): per tag and opponent, and per
 * seat it played, its wins, draws and losses, each with its 95% Wilson interval, and its mean
 * payoff (its return) with a 95% percentile bootstrap interval seeded by the run's seed. Every
 * record of a seat the policy played counts once, so a self-play game counts twice (once a seat).
 */
import { bootstrapMeanInterval, type Interval, wilsonInterval } from '../algo/intervals';
import type { Episode } from './types';

export interface Rate extends Interval {
  rate: number;
  count: number;
}

export interface SeatResult {
  /** Games the policy played here (a self-play game once for each of its seats). */
  games: number;
  win: Rate;
  draw: Rate;
  loss: Rate;
  /** Not lost: a win or a draw. */
  not_loss: Rate;
  payoff: { mean: number } & Interval;
  /** Games that did not finish (a failure, the turn limit): counted in games, in none of the rates' counts. */
  unfinished: number;
}

/** Each tag's results against each opponent, `all` seats and then each seat the policy played: `{TicTacToeVsMinimax: {'vs minimax': {all: ..., O: ..., X: ...}}}`. */
export type SeatResults = Record<string, Record<string, Record<string, SeatResult>>>;

export function rate(count: number, n: number): Rate {
  return { rate: count / n, count, ...wilsonInterval(count, n) };
}

function seatResult(records: readonly Episode[], seed: number): SeatResult {
  const n = records.length;
  const count = (what: 'win' | 'draw' | 'loss') => records.filter((e) => e.seat!.outcome?.[e.seat!.index] === what).length;
  const [win, draw, loss] = [count('win'), count('draw'), count('loss')];
  const payoffs = records.map((e) => e.score);
  return {
    games: n,
    win: rate(win, n),
    draw: rate(draw, n),
    loss: rate(loss, n),
    not_loss: rate(win + draw, n),
    payoff: { mean: payoffs.reduce((a, b) => a + b, 0) / n, ...bootstrapMeanInterval(payoffs, seed) },
    unfinished: n - win - draw - loss,
  };
}

/** Whom a record's seat played against: the other seats' players ('vs minimax', 'vs policy' for self-play). */
export function opponentLabel(episode: Episode): string {
  const { players, index } = episode.seat!;
  return `vs ${[...new Set(players.filter((_, seat) => seat !== index))].join(', ')}`;
}

/** The results of the seated records among `episodes`; empty when there are none. */
export function seatResults(episodes: readonly Episode[], seed: number): SeatResults {
  const groups = new Map<string, Map<string, Episode[]>>();
  for (const episode of episodes) {
    if (!episode.seat) continue;
    const byOpponent = groups.get(episode.tag) ?? new Map<string, Episode[]>();
    const label = opponentLabel(episode);
    byOpponent.set(label, [...(byOpponent.get(label) ?? []), episode]);
    groups.set(episode.tag, byOpponent);
  }
  const results: SeatResults = {};
  for (const [tag, byOpponent] of groups) {
    results[tag] = {};
    for (const [label, records] of byOpponent) {
      const seats = [...new Set(records.map((e) => e.seat!.index))].sort((a, b) => a - b);
      const names = records[0]!.seat!.names;
      results[tag][label] = {
        all: seatResult(records, seed),
        ...Object.fromEntries(
          seats.map((seat) => [
            names[seat]!,
            seatResult(
              records.filter((e) => e.seat!.index === seat),
              seed,
            ),
          ]),
        ),
      };
    }
  }
  return results;
}

/** The games not lost against the opponent `label` (a label of opponentLabel), over every tag that played it; null where none did. */
export function notLostAgainst(results: SeatResults, label: string): Rate | null {
  const against = Object.values(results).flatMap((byOpponent) => byOpponent[label]?.all ?? []);
  const games = against.reduce((sum, r) => sum + r.games, 0);
  return games === 0
    ? null
    : rate(
        against.reduce((sum, r) => sum + r.not_loss.count, 0),
        games,
      );
}

/** One line per tag, opponent and seat: `TicTacToeVsMinimax vs minimax, all: 32 games, win 0.000 [0.000, 0.107], draw ..., loss ..., payoff -0.250 [-0.406, -0.094]`. */
export function seatResultLines(results: SeatResults): string[] {
  const f = (x: number) => x.toFixed(3);
  const r = (name: string, x: Rate) => `${name} ${f(x.rate)} [${f(x.low)}, ${f(x.high)}]`;
  return Object.entries(results).flatMap(([tag, byOpponent]) =>
    Object.entries(byOpponent).flatMap(([label, bySeat]) =>
      Object.entries(bySeat).map(([seat, s]) => {
        const unfinished = s.unfinished > 0 ? `, ${s.unfinished} unfinished` : '';
        return `${tag} ${label}, ${seat === 'all' ? 'both seats' : `as ${seat}`}: ${s.games} games, ${r('win', s.win)}, ${r('draw', s.draw)}, ${r('loss', s.loss)}, payoff ${f(s.payoff.mean)} [${f(s.payoff.low)}, ${f(s.payoff.high)}]${unfinished}`;
      }),
    ),
  );
}
