/** SPIRAL's role-conditioned advantage (rae): a running baseline per env tag and seat. */
import { describe, expect, test } from 'bun:test';
import { responseRewards } from '../../src/algo/estimators';
import { RoleBaselines, roleKey, roleReturns } from '../../src/algo/role_baselines';
import type { RewardRow } from '../../src/algo/rewards';

/** A trajectory row of game `game`, seat `seat`, scoring `score`. */
const row = (game: number, seat: string | null, score: number, tag = 'Game'): RewardRow => ({
  trajGroupId: `${tag}_0_${game}_7`,
  trajId: `${tag}_0_${game}_7_0_s${seat}`,
  tag,
  groupId: 0,
  step: null,
  score,
  episodeScore: score,
  stateHash: null,
  seat,
});

const settings = { grouping: 'traj_group_id', method: 'mean', stepRewardGamma: 1, episodeRewardWeight: 1, stepRewardWeight: 1, rewardClip: null } as const;

describe('rae', () => {
  test("a row's reward is its outcome less its role's baseline before the step; unseen roles start at 0", () => {
    const rows = [row(0, 'O', 1), row(0, 'X', -1), row(1, 'O', 0), row(1, 'X', 0), row(2, null, 0.5, 'Lake')];
    const baselines = { 'Game/O': 0.4, 'Game/X': -0.4 };
    const { rewards } = responseRewards(rows, { ...settings, estimator: 'rae', roleBaselines: baselines });
    expect(rewards.map((r) => +r.toFixed(6))).toEqual([0.6, -0.6, -0.4, 0.4, 0.5]);
    expect(roleKey(rows[4]!)).toBe('Lake/-');
  });

  test("each role's baseline moves by rae_alpha towards the batch's mean return, each trajectory counted once", () => {
    // two step rows of one trajectory count once
    const stepRow = { ...row(3, 'O', 0), step: 1, episodeScore: 1 };
    const returns = roleReturns([row(0, 'O', 1), row(1, 'O', 0), stepRow, { ...stepRow, step: 2 }, row(0, 'X', -1)]);
    expect(returns).toEqual(
      new Map([
        ['Game/O', 2 / 3],
        ['Game/X', -1],
      ]),
    );
    const baselines = new RoleBaselines(0.9);
    baselines.update(returns);
    expect(baselines.values).toEqual({ 'Game/O': 2 / 3, 'Game/X': -1 });
    baselines.update(new Map([['Game/O', 0]]));
    expect(baselines.values['Game/O']).toBeCloseTo(0.6, 12);
    expect(new RoleBaselines(0.9, baselines.values).values).toEqual(baselines.values);
  });
});
