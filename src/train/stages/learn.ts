/**
 * Steps 9-10 of the step: the critic's update (gae), then actor_train's once global_step reaches
 * critic_warmup (with skip_zero_advantage_samples, on the rows with an advantage only, as credit
 * chose them), then the reading's rehearsal (warm_start.rehearsal_coef: one supervised
 * step on fresh reading rows).
 */
import { learningRateAt } from '../../model/optim';
import { rowCount, selectRows, type TrainBatch } from '../batch';
import { learningRateSchedule } from '../schedule';
import { updateActor, updateCritic, updateSupervised, type UpdateSchedule } from '../update';
import { rehearsalRows } from '../warm_start/data';
import type { StepContext } from './context';

type Role = 'actor_train' | 'critic';

export async function learn(batch: TrainBatch, ctx: StepContext): Promise<void> {
  const { config: c, roles, log, step } = ctx;
  if (roles.critic && roles.criticOptimizer) {
    const critic = roles.critic;
    const optimizer = roles.criticOptimizer;
    const result = await log.timed('critic_train', () =>
      updateCritic(critic, optimizer, batch, schedule(ctx, 'critic'), { valueClip: c.value_clip, aggMode: c.loss_agg_mode }),
    );
    log.add(result.metrics);
    ctx.noteSkipped('critic', result);
  }
  const actorRows = rowsToLearnFrom(batch, ctx);
  if (step >= c.critic_warmup && rowCount(actorRows) > 0) {
    const result = await log.timed('actor_train', () =>
      updateActor(roles.actor, roles.actorOptimizer, actorRows, schedule(ctx, 'actor_train'), {
        pgVariant: c.actor_train.pg_variant,
        policy: {
          clipLow: c.use_pg_clip_range ? c.pg_clip_low : c.pg_clip,
          clipHigh: c.use_pg_clip_range ? c.pg_clip_high : c.pg_clip,
          dualClip: c.dual_clip_loss ? 1 + 2 * c.pg_clip : null,
          aggMode: c.loss_agg_mode,
          topr: { positiveWeight: c.actor_train.topr_positive_weight, negativeWeight: c.actor_train.topr_negative_weight },
        },
        klLoss: c.use_kl_loss && c.kl_loss_coef > 0 && roles.reference ? { coef: c.kl_loss_coef, type: c.kl_loss_type } : null,
        entropyCoef: c.entropy_loss_coef,
      }),
    );
    log.add(result.metrics);
    // without a recompute the old log-probs are the sampler's: the gap before the first optimizer
    // step is generation's against training's forward pass, as a recompute would report it
    if (!batch.recomputedLogProbs) log.add({ 'actor/train_infer_logprob_gap': result.metrics['actor/logprob_gap_before_update']! });
    ctx.noteSkipped('actor', result);
  }
  if (step >= c.critic_warmup && c.warm_start.rehearsal_coef > 0) {
    const rehearsal = await log.timed('rehearsal', () => rehearse(ctx, learningRate(ctx, 'actor_train') * c.warm_start.rehearsal_coef));
    log.add(rehearsal.metrics);
    ctx.noteSkipped('rehearsal', rehearsal);
  }
}

/** The rows the actor learns from (credit chose them: learnFrom), with the reference's log-probs when it scored them after credit. */
function rowsToLearnFrom(batch: TrainBatch, ctx: StepContext): TrainBatch {
  const { learnFrom } = batch;
  if (!learnFrom) return batch;
  ctx.log.add({ 'actor/update_samples': learnFrom.rows.length });
  const rows = selectRows(batch, learnFrom.rows);
  return learnFrom.refLogProbs ? { ...rows, refLogProbs: learnFrom.refLogProbs } : rows;
}

/** The schedule moves with the steps that trained: a step that dropped every group does not advance it. */
function learningRate(ctx: StepContext, role: Role): number {
  return learningRateAt(ctx.version, learningRateSchedule(ctx.config, role));
}

function schedule(ctx: StepContext, role: Role): UpdateSchedule {
  const { config: c, step, poison } = ctx;
  const args = c[role].training_args;
  return {
    epochs: c.ppo_epochs,
    miniBatchRows: args.per_device_train_batch_size * args.gradient_accumulation_steps,
    microBatchRows: args.per_device_train_batch_size,
    gradientAccumulationSteps: args.gradient_accumulation_steps,
    sequenceLength: c.sequence_length,
    learningRate: learningRate(ctx, role),
    maxGradNorm: args.max_grad_norm ?? c.max_grad_norm,
    shuffleSeed: [c.seed, 'shuffle', role, step],
    recompute: !c[role].model_args.disable_gradient_checkpointing,
    poison: poison ? (update) => poison(step, role === 'critic' ? 'critic' : 'actor', update) : undefined,
  };
}

/** One supervised step of actor_train on this step's reading rows; its loss is the reading's NLL before the step. */
async function rehearse(ctx: StepContext, learningRate: number) {
  const { config: c, roles, step } = ctx;
  const rows = await rehearsalRows(c, ctx.host, ctx.chat, step);
  const args = c.actor_train.training_args;
  const result = await updateSupervised(roles.actor, roles.actorOptimizer, rows, {
    epochs: 1,
    miniBatchRows: rows.ids.length,
    microBatchRows: args.per_device_train_batch_size,
    gradientAccumulationSteps: 1,
    sequenceLength: c.sequence_length,
    learningRate,
    maxGradNorm: args.max_grad_norm ?? c.max_grad_norm,
    shuffleSeed: [c.seed, 'rehearsal', step],
    recompute: !c.actor_train.model_args.disable_gradient_checkpointing,
  });
  return {
    ...result,
    metrics: {
      'rehearsal/loss': result.metrics['sft/loss']!,
      'rehearsal/grad_norm': result.metrics['sft/grad_norm']!,
      'rehearsal/rows': rows.ids.length,
      'rehearsal/lr': learningRate,
    },
  };
}
