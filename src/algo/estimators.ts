/**
 * The advantage estimators by their `adv_estimator` name, verl's core_algos way: each entry is
 * the estimator's response-reward function (./rewards.ts, ./gigpo.ts), its advantage function
 * (./advantage.ts) and what it needs from the rest of the step. The config schema's list of names
 * and every decision that depends on the estimator (building a critic, playing greedy baselines,
 * refusing trajectory rows) read this table; no other file compares estimator names.
 */
import { agenticReinforce, type AdvantageEstimator, gae, reinforcePlusPlus, remax, returnsToGo, rloo } from './advantage';
import { gigpoRewards } from './gigpo';
import { roleConditionedScores } from './role_baselines';
import { clipValues } from './reward_norm';
import {
  normalizedScores,
  normalizedStepReturns,
  type ResponseRewardFunction,
  type ResponseRewards,
  type ResponseRewardSettings,
  type RewardRow,
  rawScores,
} from './rewards';

export interface EstimatorNeeds {
  /** A critic (value model) scores every token, and trains on the returns. */
  critic: boolean;
  /** A greedy rollout of each group gives its baseline (remax). */
  greedyBaseline: boolean;
  /** One training row per step (env_manager_cls: step). */
  stepRows: boolean;
  /** Raw scores: the estimator brings its own baseline, so reward_normalization is not applied. */
  rawScores: boolean;
}

export interface Estimator {
  responseRewards: ResponseRewardFunction;
  advantages: AdvantageEstimator;
  needs: EstimatorNeeds;
}

const NOTHING: EstimatorNeeds = { critic: false, greedyBaseline: false, stepRows: false, rawScores: false };

export const ESTIMATORS = {
  gae: { responseRewards: normalizedScores, advantages: gae, needs: { ...NOTHING, critic: true } },
  grpo: { responseRewards: normalizedScores, advantages: returnsToGo, needs: NOTHING },
  // ROLL's reinforce and grpo differ only by reward_normalization's config
  reinforce: { responseRewards: normalizedScores, advantages: returnsToGo, needs: NOTHING },
  reinforce_plus_plus: { responseRewards: rawScores, advantages: reinforcePlusPlus, needs: { ...NOTHING, rawScores: true } },
  rloo: { responseRewards: rawScores, advantages: rloo, needs: { ...NOTHING, rawScores: true } },
  remax: { responseRewards: rawScores, advantages: remax, needs: { ...NOTHING, rawScores: true, greedyBaseline: true } },
  gigpo: { responseRewards: gigpoRewards, advantages: returnsToGo, needs: { ...NOTHING, stepRows: true } },
  step_reinforce: { responseRewards: normalizedStepReturns, advantages: returnsToGo, needs: { ...NOTHING, stepRows: true } },
  agentic_reinforce: { responseRewards: normalizedScores, advantages: agenticReinforce, needs: NOTHING },
  // SPIRAL's role-conditioned advantage: the outcome less a running baseline per env tag and seat
  rae: { responseRewards: roleConditionedScores, advantages: returnsToGo, needs: { ...NOTHING, rawScores: true } },
} as const satisfies Record<string, Estimator>;

export type EstimatorName = keyof typeof ESTIMATORS;

/** The names, in the order the schema and docs list them. */
export const ESTIMATOR_NAMES = Object.keys(ESTIMATORS) as [EstimatorName, ...EstimatorName[]];

export function needsOf(name: EstimatorName): EstimatorNeeds {
  return ESTIMATORS[name].needs;
}

export interface ResponseRewardOptions extends ResponseRewardSettings {
  estimator: EstimatorName;
  rewardClip: number | null;
}

/** The estimator's response reward of each row, then reward_clip (critic/reward_clip_frac). */
export function responseRewards(rows: readonly RewardRow[], o: ResponseRewardOptions): ResponseRewards {
  const shaped = ESTIMATORS[o.estimator].responseRewards(rows, o);
  const clipped = clipValues(shaped.rewards, o.rewardClip);
  const metrics = { ...shaped.metrics };
  if (o.rewardClip !== null) metrics['critic/reward_clip_frac'] = clipped.clippedFraction;
  return { rewards: clipped.values, metrics };
}
