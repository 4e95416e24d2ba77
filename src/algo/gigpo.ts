/**
 * GiGPO (Feng et al., 2025, "Group-in-Group Policy Optimization for LLM Agent Training"), in one
 * place. Rows are step-wise (one per turn), and a row's response reward adds two relative
 * advantages:
 *
 *   episode part   the episode's score, normalised over the rows of its reward_normalization group
 *                  (so a longer trajectory weighs more, as in ROLL)
 *   step part      the step's discounted return (step_reward_gamma), normalised over the rows of
 *                  its anchor group: the steps of the same trajectory group that answered the same
 *                  observation (hashed). ROLL keys anchors by the observation hash alone, which
 *                  merges equal observations of different seeds; here they stay within their group.
 *
 *   reward = episode_reward_weight x episode part + step_reward_weight x step part
 *
 * That reward sits on the row's last sampled token, and the advantage is its return-to-go
 * (./advantage.ts returnsToGo), as in ROLL.
 */
import { creditGroup, groupKey, normalizeBy, type ResponseRewardFunction, stepReturns } from './rewards';
import { summaryStats } from './stats';

export const gigpoRewards: ResponseRewardFunction = (rows, o) => {
  const episodePart = normalizeBy(
    o,
    rows.map((r) => r.episodeScore),
    rows.map((row) => groupKey(row, o.grouping)),
    o.grouping === 'batch',
  );
  const anchors = rows.map((r) => `${creditGroup(r)}\u0000${r.stateHash ?? r.trajId}`);
  const stepPart = normalizeBy(o, stepReturns(rows, o), anchors, false);
  const rewards = episodePart.map((e, i) => o.episodeRewardWeight * e + o.stepRewardWeight * stepPart[i]!);
  const metrics = {
    ...summaryStats('critic/episode_rewards_norm', episodePart),
    ...summaryStats('critic/step_rewards_norm', stepPart),
    ...summaryStats('system/state_batch_size', [...countBy(anchors).values()]),
  };
  return { rewards, metrics };
};

function countBy(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}
