/**
 * Steps 7-8 of the step: from outcomes to per-token credit. The estimator's response reward of
 * each row (./algo/estimators.ts), then token rewards with the KL penalty, the advantages, and
 * ROLL's whitening and clipping; then the columns the losses read (where the KL loss and the
 * entropy bonus apply, the importance weights of the train/infer gap).
 */
import { finishAdvantages, zeroAdvantageFraction } from '../../algo/advantage';
import { ESTIMATORS, responseRewards } from '../../algo/estimators';
import { importanceWeights } from '../../algo/off_policy';
import { tokenRewards } from '../../algo/rewards';
import { summaryStats } from '../../algo/stats';
import { answerTokenMask, dropThinkCredit, outsideAnswerTokenMask, thinkTokenMask } from '../../algo/think';
import { normalizationStatistics } from '../../config/schema';
import { type CreditedBatch, type ScoredBatch, type TrainBatch, rewardRows } from '../batch';
import type { StepContext } from './context';

export async function credit(batch: ScoredBatch, ctx: StepContext): Promise<CreditedBatch> {
  const c = ctx.config;
  const { masks } = batch;
  // where each row thinks, read once for the settings that need it
  const needsThink = !c.think_credit || c.kl_loss_tokens === 'think';
  const thinkMasks = needsThink ? batch.ids.map((ids, i) => thinkTokenMask(ids, masks[i]!, ctx.pieceOf)) : null;
  const credited = await ctx.log.timed('adv', () => advantages(batch, thinkMasks, ctx));
  ctx.log.add(credited.metrics);
  return { ...batch, thinkMasks, advantages: credited.advantages, returns: credited.returns };
}

function advantages(batch: ScoredBatch, thinkMasks: CreditedBatch['thinkMasks'], ctx: StepContext) {
  const c = ctx.config;
  const { masks, refLogProbs, values } = batch;
  const response = responseRewards(rewardRows(batch), {
    estimator: c.adv_estimator,
    grouping: c.reward_normalization.grouping,
    method: c.reward_normalization.method,
    statistics: normalizationStatistics(c.reward_normalization),
    stepRewardGamma: c.step_reward_gamma,
    episodeRewardWeight: c.episode_reward_weight,
    stepRewardWeight: c.step_reward_weight,
    rewardClip: c.reward_clip,
  });
  const beta = ctx.kl.value;
  const tokens = tokenRewards(response.rewards, masks, batch.oldLogProbs, refLogProbs, {
    addTokenLevelKl: c.add_token_level_kl && refLogProbs !== null,
    klCoef: beta,
    klPenalty: c.kl_penalty,
    whitenRewards: c.whiten_rewards,
  });
  ctx.kl.update(tokens.meanKl, tokens.klRows);
  const estimated = ESTIMATORS[c.adv_estimator].advantages(
    { masks, tokenRewards: tokens.tokenRewards, values, groups: batch.trajGroupIds, baselines: batch.baselines },
    { gamma: c.gamma, lambd: c.lambd },
  );
  const finished = finishAdvantages(estimated.advantages, masks, { whitenAdvantages: c.whiten_advantages, advantageClip: c.advantage_clip });
  const thinkTokens = c.think_credit ? null : dropThinkCredit(finished.advantages, thinkMasks!);
  const metrics: Record<string, number> = {
    ...response.metrics,
    ...maskedStats('critic/advantages', finished.advantages, masks),
    ...maskedStats('critic/returns', estimated.returns, masks),
    ...(values ? maskedStats('critic/values', values, masks) : {}),
    ...summaryStats(
      'critic/rewards',
      tokens.tokenRewards.map((r) => r.reduce((a, b) => a + b, 0)),
    ),
    'critic/kl': tokens.meanKl,
    'critic/kl_coef': c.add_token_level_kl && refLogProbs !== null ? beta : 0,
  };
  if (c.advantage_clip !== null) metrics['critic/advantage_clip_frac'] = finished.clippedFraction;
  if (thinkTokens !== null) {
    const responseTokens = masks.reduce((n, m) => n + m.reduce((a, b) => a + b, 0), 0);
    metrics['critic/think_token_frac'] = responseTokens ? thinkTokens / responseTokens : 0;
  }
  // after the thinking's credit is dropped: what is left for the policy gradient
  metrics['critic/zero_advantage_frac'] = zeroAdvantageFraction(finished.advantages, masks);
  return { advantages: finished.advantages, returns: estimated.returns, metrics };
}

/** The columns the losses read: the gap between the policy that sampled and the one that trains, and the scopes. */
export function lossColumns(batch: CreditedBatch, ctx: StepContext): TrainBatch {
  const c = ctx.config;
  const { masks } = batch;
  let isWeights: Float32Array[] | null = null;
  const correction = c.train_infer_correction.is_weight;
  if (batch.recomputedLogProbs && (correction.enabled || ctx.sampledElsewhere)) {
    const weighed = importanceWeights(batch.recomputedLogProbs, batch.samplingLogProbs, masks, {
      type: correction.weight_type,
      upperBound: correction.upper_bound,
    });
    ctx.log.add(weighed.metrics);
    if (correction.enabled) isWeights = weighed.weights;
  }
  return {
    ...batch,
    klScope: klScope(batch, ctx),
    entropyScope: c.entropy_loss_tokens === 'answer' ? batch.ids.map((ids, i) => answerTokenMask(ids, masks[i]!, ctx.pieceOf)) : null,
    isWeights,
  };
}

/** The tokens the KL loss covers (kl_loss_tokens); null: every response token. */
function klScope(batch: CreditedBatch, ctx: StepContext): readonly Uint8Array[] | null {
  switch (ctx.config.kl_loss_tokens) {
    case 'all':
      return null;
    case 'think':
      return batch.thinkMasks;
    case 'outside_answer':
      return batch.ids.map((ids, i) => outsideAnswerTokenMask(ids, batch.masks[i]!, ctx.pieceOf));
  }
}

function maskedStats(prefix: string, rows: readonly Float32Array[], masks: readonly Uint8Array[]): Record<string, number> {
  return summaryStats(
    prefix,
    rows.flatMap((row, i) => Array.from(row).filter((_, t) => masks[i]![t])),
  );
}
