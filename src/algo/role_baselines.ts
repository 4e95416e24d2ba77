/**
 * SPIRAL's role-conditioned advantage estimation (Liu et al., 2025, "SPIRAL: Self-Play on
 * Zero-Sum Games Incentivizes Reasoning via Multi-Agent Multi-Turn Reinforcement Learning"), the
 * `rae` estimator: a running baseline per game and role, here per env tag and seat, moved after
 * every step by an exponential average of that role's returns,
 *
 *   A = R - b[tag, seat]          (b as it was before this step's batch)
 *   b[tag, seat] <- alpha x b + (1 - alpha) x mean R of the batch's games of that role
 *
 * so a seat that wins more often by its position (TicTacToe's first mover) is not credited for
 * the position, and self-play's two seats never share a baseline. One agent facing an env has no
 * seat: its rows share one baseline per tag. The baselines are a run's state, saved in checkpoints.
 */
import { outcomeOf, outcomes, type ResponseRewardFunction, type RewardRow } from './rewards';

/** The role a row plays: its env tag and its seat (`-` for none). */
export function roleKey(row: Pick<RewardRow, 'tag' | 'seat'>): string {
  return `${row.tag}/${row.seat ?? '-'}`;
}

/** Each row's outcome less its role's baseline (0 for a role not seen yet): rae's response reward. */
export const roleConditionedScores: ResponseRewardFunction = (rows, o) => {
  const baselines = o.roleBaselines ?? {};
  return { rewards: outcomes(rows).map((outcome, i) => outcome - (baselines[roleKey(rows[i]!)] ?? 0)), metrics: {} };
};

/** Each role's mean return over the batch's episodes (each trajectory once, whatever its rows). */
export function roleReturns(rows: readonly RewardRow[]): Map<string, number> {
  const seen = new Set<string>();
  const sums = new Map<string, { total: number; count: number }>();
  for (const row of rows) {
    if (seen.has(row.trajId)) continue;
    seen.add(row.trajId);
    const key = roleKey(row);
    const sum = sums.get(key) ?? { total: 0, count: 0 };
    sum.total += outcomeOf(row);
    sum.count += 1;
    sums.set(key, sum);
  }
  return new Map([...sums].map(([key, { total, count }]) => [key, total / count]));
}

/** The running baselines of the roles (rae_alpha), from a checkpoint's values or none. */
export class RoleBaselines {
  private readonly baselines: Map<string, number>;

  constructor(
    private readonly alpha: number,
    initial: Readonly<Record<string, number>> = {},
  ) {
    this.baselines = new Map(Object.entries(initial));
  }

  get values(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.baselines);
  }

  /** Moves each role's baseline towards this batch's mean return; a role's first batch starts it there. */
  update(returns: ReadonlyMap<string, number>): void {
    for (const [key, mean] of returns) {
      const before = this.baselines.get(key);
      this.baselines.set(key, before === undefined ? mean : this.alpha * before + (1 - this.alpha) * mean);
    }
  }
}
