/**
 * Steps 7-8 of the step: from outcomes to per-token credit. The estimator's response reward of
 * each row (./algo/estimators.ts), then token rewards with the KL penalty, the advantages, and
 * ROLL's whitening and clipping; with skip_zero_advantage_samples, the rows the actor learns from
 * (the reference scores them now when it waited for the advantages); then the columns the losses
 * read (where the KL loss and the entropy bonus apply, the importance weights of the train/infer gap).
 */
import { finishAdvantages, zeroAdvantageFraction, zeroAdvantageRows } from '../../algo/advantage';
import { ESTIMATORS, responseRewards } from '../../algo/estimators';
import { roleReturns } from '../../algo/role_baselines';
import { importanceWeights } from '../../algo/off_policy';
import { creditGroup, meanRowKl, tokenKl, tokenRewards } from '../../algo/rewards';
import { summaryStats } from '../../algo/stats';
import { answerTokenMask, dropThinkCredit, outsideAnswerTokenMask, outsideThinkTokenMask, thinkTokenMask } from '../../algo/think';
import { normalizationStatistics } from '../../config/schema';
import { type CreditedBatch, type LearnFrom, type ScoredBatch, type TrainBatch, rewardRows, selectRows } from '../batch';
import { referenceAfterCredit, type StepContext } from './context';
import { referenceLogProbs } from './score';

export async function credit(batch: ScoredBatch, ctx: StepContext): Promise<CreditedBatch> {
  const c = ctx.config;
  const { masks } = batch;
  // where each row thinks, read once for the settings that need it
  const needsThink = !c.think_credit || c.kl_loss_tokens === 'think';
  const thinkMasks = needsThink ? batch.ids.map((ids, i) => thinkTokenMask(ids, masks[i]!, ctx.pieceOf)) : null;
  const credited = await ctx.log.timed('adv', () => advantages(batch, thinkMasks, ctx));
  const { learnFrom, kl } = await rowsToLearnFrom(batch, credited.advantages, ctx);
  ctx.log.add(creditMetrics(batch, credited, kl ?? credited.tokens.meanKl, ctx));
  return { ...batch, thinkMasks, advantages: credited.advantages, returns: credited.returns, learnFrom };
}

/** From outcomes to advantages: response rewards, token rewards with the KL penalty (which moves the controller), the estimator, whitening and clipping. */
function advantages(batch: ScoredBatch, thinkMasks: CreditedBatch['thinkMasks'], ctx: StepContext) {
  const c = ctx.config;
  const { masks, refLogProbs, values } = batch;
  const rows = rewardRows(batch);
  const response = responseRewards(rows, {
    estimator: c.adv_estimator,
    roleBaselines: ctx.roleBaselines.values,
    grouping: c.reward_normalization.grouping,
    method: c.reward_normalization.method,
    statistics: normalizationStatistics(c.reward_normalization),
    stepRewardGamma: c.step_reward_gamma,
    episodeRewardWeight: c.episode_reward_weight,
    stepRewardWeight: c.step_reward_weight,
    rewardClip: c.reward_clip,
  });
  // rae's baselines move after the step's rewards are made from them
  if (c.adv_estimator === 'rae') ctx.roleBaselines.update(roleReturns(rows));
  const beta = ctx.kl.value;
  const tokens = tokenRewards(response.rewards, masks, batch.oldLogProbs, refLogProbs, {
    addTokenLevelKl: c.add_token_level_kl && refLogProbs !== null,
    klCoef: beta,
    klPenalty: c.kl_penalty,
    whitenRewards: c.whiten_rewards,
  });
  ctx.kl.update(tokens.meanKl, tokens.klRows);
  const estimated = ESTIMATORS[c.adv_estimator].advantages(
    {
      masks,
      tokenRewards: tokens.tokenRewards,
      values,
      groups: batch.trajGroupIds.map((trajGroupId, i) => creditGroup({ trajGroupId, seat: batch.seats[i]! })),
      baselines: batch.baselines,
    },
    { gamma: c.gamma, lambd: c.lambd },
  );
  const finished = finishAdvantages(estimated.advantages, masks, { whitenAdvantages: c.whiten_advantages, advantageClip: c.advantage_clip });
  const thinkTokens = c.think_credit ? null : dropThinkCredit(finished.advantages, thinkMasks!);
  return { advantages: finished.advantages, returns: estimated.returns, clippedFraction: finished.clippedFraction, response, tokens, beta, thinkTokens };
}

type Credited = ReturnType<typeof advantages>;

/**
 * skip_zero_advantage_samples: the rows actor_train learns from (those with an advantage). When
 * the reference waited for them (referenceAfterCredit) it scores them now, and `kl`, their mean KL
 * against it, is critic/kl (null: the reward stage's KL over every row is).
 */
async function rowsToLearnFrom(
  batch: ScoredBatch,
  advantages: readonly Float32Array[],
  ctx: StepContext,
): Promise<{ learnFrom: LearnFrom | null; kl: number | null }> {
  const c = ctx.config;
  if (!c.skip_zero_advantage_samples) return { learnFrom: null, kl: null };
  const rows = zeroAdvantageRows(advantages, batch.masks).flatMap((silent, i) => (silent ? [] : [i]));
  const reference = ctx.roles.reference;
  if (!reference || !referenceAfterCredit(ctx) || rows.length === 0) return { learnFrom: { rows, refLogProbs: null }, kl: null };
  const picked = selectRows(batch, rows);
  const refLogProbs = picked.sourceRefLogProbs ?? (await ctx.log.timed('ref', () => referenceLogProbs(reference, picked)));
  return { learnFrom: { rows, refLogProbs }, kl: meanRowKl(tokenKl(picked.masks, picked.oldLogProbs, refLogProbs, c.kl_penalty), picked.masks) };
}

/** The stage's metrics, verl's and ROLL's names; `kl` is critic/kl (the mean KL of the old policy against the reference). */
function creditMetrics(batch: ScoredBatch, credited: Credited, kl: number, ctx: StepContext): Record<string, number> {
  const c = ctx.config;
  const { masks, refLogProbs, values } = batch;
  const metrics: Record<string, number> = {
    ...credited.response.metrics,
    ...maskedStats('critic/advantages', credited.advantages, masks),
    ...maskedStats('critic/returns', credited.returns, masks),
    ...(values ? maskedStats('critic/values', values, masks) : {}),
    ...summaryStats(
      'critic/rewards',
      credited.tokens.tokenRewards.map((r) => r.reduce((a, b) => a + b, 0)),
    ),
    'critic/kl': kl,
    'critic/kl_coef': c.add_token_level_kl && refLogProbs !== null ? credited.beta : 0,
  };
  if (c.advantage_clip !== null) metrics['critic/advantage_clip_frac'] = credited.clippedFraction;
  if (credited.thinkTokens !== null) {
    const responseTokens = masks.reduce((n, m) => n + m.reduce((a, b) => a + b, 0), 0);
    metrics['critic/think_token_frac'] = responseTokens ? credited.thinkTokens / responseTokens : 0;
  }
  // after the thinking's credit is dropped: what is left for the policy gradient
  metrics['critic/zero_advantage_frac'] = zeroAdvantageFraction(credited.advantages, masks);
  return metrics;
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
    entropyScope: entropyScope(batch, ctx),
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

/** The tokens the entropy bonus covers (entropy_loss_tokens); null: every response token. */
function entropyScope(batch: CreditedBatch, ctx: StepContext): readonly Uint8Array[] | null {
  switch (ctx.config.entropy_loss_tokens) {
    case 'all':
      return null;
    case 'answer':
      return batch.ids.map((ids, i) => answerTokenMask(ids, batch.masks[i]!, ctx.pieceOf));
    case 'outside_think':
      return batch.ids.map((ids, i) => outsideThinkTokenMask(ids, batch.masks[i]!, ctx.pieceOf));
  }
}

function maskedStats(prefix: string, rows: readonly Float32Array[], masks: readonly Uint8Array[]): Record<string, number> {
  return summaryStats(
    prefix,
    rows.flatMap((row, i) => Array.from(row).filter((_, t) => masks[i]![t])),
  );
}
