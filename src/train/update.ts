/**
 * The gradient updates of one training step: `ppo_epochs` passes over the batch in shuffled
 * mini-batches (per_device_train_batch_size x gradient_accumulation_steps rows), each mini-batch
 * an optimizer step whose gradients are summed over its micro-batches. An optimizer step whose
 * loss or gradient norm is not finite is skipped: weights and optimizer moments stay as they were.
 */
import { actorLoss, type ActorLossInput, type ActorLossOptions } from '../algo/actor_loss';
import { type LossAggMode, type LossNorms, PG_VARIANTS, type PgVariant, valueLoss } from '../algo/loss';
import { Rng } from '../engine/rng';
import { tf } from '../engine/tf';
import { AdamW, clipByGlobalNorm, disposeGradients, GradientAccumulator, lossAndGradients } from '../model/optim';
import type { Qwen2Model } from '../model/qwen2';
import { firstMasked, planMicroBatches, scoredHidden, shiftedIds, shiftedTemperatures, shiftedValues, type MicroBatch } from '../model/micro_batches';
import type { TrainBatch } from './batch';
import { hiddenStates } from '../model/scoring';

/** The columns of the step's batch (./batch.ts) each update reads. */
export type ActorRows = Pick<
  TrainBatch,
  'ids' | 'masks' | 'temperature' | 'oldLogProbs' | 'refLogProbs' | 'advantages' | 'isWeights' | 'klScope' | 'entropyScope' | 'episodeScores'
>;
export type CriticRows = Pick<TrainBatch, 'ids' | 'masks' | 'values' | 'returns'>;
export type TokenRows = Pick<TrainBatch, 'ids' | 'masks'>;

export interface UpdateSchedule {
  epochs: number;
  miniBatchRows: number;
  microBatchRows: number;
  gradientAccumulationSteps: number;
  sequenceLength: number;
  learningRate: number;
  /** 0 or null: no clipping. */
  maxGradNorm: number | null;
  /** Seeds the shuffles of this step's mini-batches. */
  shuffleSeed: readonly [number, ...Array<number | string>];
  /** Gradient checkpointing: recompute each block's activations in the backward pass (model_args.disable_gradient_checkpointing false). */
  recompute: boolean;
  /** Test seam: makes an optimizer step's loss NaN (the n-th of this update, 0-based). */
  poison?: (optimizerStep: number) => boolean;
}

export interface UpdateResult {
  metrics: Record<string, number>;
  optimizerSteps: number;
  skipped: number;
  /** How many of the last optimizer steps in a row were skipped (all of them when none was applied). */
  skippedAtEnd: number;
}

function miniBatches(rows: number, schedule: UpdateSchedule, epoch: number): number[][] {
  const order = Rng.fromSeed(...schedule.shuffleSeed, 'epoch', epoch).shuffle(Array.from({ length: rows }, (_, i) => i));
  const out: number[][] = [];
  for (let at = 0; at < order.length; at += schedule.miniBatchRows) out.push(order.slice(at, at + schedule.miniBatchRows));
  return out;
}

function normsOf(indices: readonly number[], masks: readonly Uint8Array[], schedule: UpdateSchedule): LossNorms {
  let tokens = 0;
  let sequences = 0;
  for (const i of indices) {
    const n = masks[i]!.reduce((a, b) => a + b, 0);
    tokens += n;
    if (n > 0) sequences++;
  }
  return { tokens, sequences, sumNormScale: schedule.sequenceLength * schedule.gradientAccumulationSteps };
}

/** Scalars by name: what a micro-batch's loss reports besides itself. */
type NamedScalars = Record<string, tf.Scalar>;

/** One micro-batch's loss and its statistics; `hidden` runs the model's forward pass (recomputing blocks when the schedule says so). */
type MicroLoss = (
  batch: MicroBatch,
  inputs: tf.Tensor2D,
  targets: Int32Array,
  norms: LossNorms,
  hidden: (model: Qwen2Model, inputs: tf.Tensor2D) => tf.Tensor3D,
) => { loss: tf.Scalar; stats: NamedScalars };

/** A micro-batch's statistics packed into one tensor, in the order of their names, so that they come back in one read. */
interface PackedStats {
  names: string[];
  values: tf.Tensor1D;
}

const packStats = (stats: NamedScalars): PackedStats => ({ names: Object.keys(stats), values: tf.stack(Object.values(stats)) as tf.Tensor1D });

async function readStats(packed: PackedStats): Promise<Record<string, number>> {
  const values = await packed.values.data();
  return Object.fromEntries(packed.names.map((name, i) => [name, values[i]!]));
}

/**
 * The shared loop: epochs, shuffled mini-batches, micro-batches, the NaN guard, clipping and the
 * AdamW step. `microLoss` builds one micro-batch's loss and its statistics, which `onStats` gets
 * by name (with whether an optimizer step has changed the weights yet).
 */
async function runUpdate(
  model: Qwen2Model,
  optimizer: AdamW,
  rows: TokenRows,
  schedule: UpdateSchedule,
  microLoss: MicroLoss,
  onStats: (stats: Record<string, number>, weightsChanged: boolean) => void,
): Promise<{ gradNorms: number[]; optimizerSteps: number; skipped: number; skippedAtEnd: number; losses: number[] }> {
  const gradNorms: number[] = [];
  const losses: number[] = [];
  let optimizerSteps = 0;
  let skipped = 0;
  let skippedAtEnd = 0;
  let attempt = 0;
  const lengths = rows.ids.map((r) => r.length);
  // every loss here is over masked tokens only, so the prompts before them are fed, not scored
  const firsts = firstMasked(rows.masks);
  for (let epoch = 0; epoch < schedule.epochs; epoch++) {
    for (const indices of miniBatches(rows.ids.length, schedule, epoch)) {
      const norms = normsOf(indices, rows.masks, schedule);
      if (norms.tokens === 0) continue;
      const poisoned = schedule.poison?.(attempt++) ?? false;
      const accumulator = new GradientAccumulator();
      let total = 0;
      const micro = planMicroBatches(indices, lengths, model.config, { maxRows: schedule.microBatchRows, backward: true, firsts });
      for (const batch of micro) {
        const { inputs, targets } = shiftedIds(batch, rows.ids);
        let stats: PackedStats | null = null;
        const { loss, gradients } = lossAndGradients(() => {
          const out = microLoss(batch, inputs, targets, norms, (m, ids) => hiddenStates(m, ids, schedule.recompute));
          stats = packStats(out.stats);
          tf.keep(stats.values);
          return poisoned ? (tf.mul(out.loss, Number.NaN) as tf.Scalar) : out.loss;
        }, model.trainedVariables);
        accumulator.add(gradients);
        disposeGradients(gradients);
        const value = (await loss.data())[0]!;
        total += value;
        onStats(await readStats(stats!), optimizerSteps > 0);
        tf.dispose([loss, stats!.values, inputs]);
      }
      const summed = accumulator.take('sum');
      const clipped = await clipByGlobalNorm(summed, schedule.maxGradNorm ?? 0);
      disposeGradients(summed);
      if (!Number.isFinite(total) || !Number.isFinite(clipped.norm)) {
        skipped++;
        skippedAtEnd++;
      } else {
        optimizer.apply(clipped.gradients, schedule.learningRate);
        optimizerSteps++;
        skippedAtEnd = 0;
        gradNorms.push(clipped.norm);
        losses.push(total);
      }
      disposeGradients(clipped.gradients);
    }
  }
  return { gradNorms, optimizerSteps, skipped, skippedAtEnd, losses };
}

type UpdateRun = Awaited<ReturnType<typeof runUpdate>>;

/** ROLL's topr counts: the rows whose episode score is above 0, and the rest. */
function scoreSplit(scores: readonly number[]): Record<string, number> {
  const positive = scores.filter((s) => s > 0).length;
  return { 'actor/topr_positive_samples': positive, 'actor/topr_negative_samples': scores.length - positive };
}

const average = (values: readonly number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

/** Named statistics over the micro-batches an update saw: each one's sum, max and min. */
class Tally {
  count = 0;
  private readonly sums = new Map<string, number>();
  private readonly maxima = new Map<string, number>();
  private readonly minima = new Map<string, number>();

  add(stats: Record<string, number>): void {
    this.count++;
    for (const [name, value] of Object.entries(stats)) {
      this.sums.set(name, (this.sums.get(name) ?? 0) + value);
      this.maxima.set(name, Math.max(this.maxima.get(name) ?? -Infinity, value));
      this.minima.set(name, Math.min(this.minima.get(name) ?? Infinity, value));
    }
  }

  sum = (name: string): number => this.sums.get(name) ?? 0;
  max = (name: string): number => this.maxima.get(name) ?? -Infinity;
  min = (name: string): number => this.minima.get(name) ?? Infinity;
}

/** The sampled tokens of a micro-batch's rows. */
const sampledTokens = (batch: MicroBatch, masks: readonly Uint8Array[]) => batch.rows.reduce((n, r) => n + masks[r]!.reduce((a, b) => a + b, 0), 0);

/** actorLoss's inputs for one micro-batch: the policy's log-probs and entropy, and the batch's columns shifted like them. */
function actorInput(batch: MicroBatch, rows: ActorRows, o: ActorLossOptions, policy: { logProbs: tf.Tensor; entropy: tf.Tensor }): ActorLossInput {
  const shifted = (column: readonly (Float32Array | Uint8Array)[] | null | undefined) => (column ? shiftedValues(batch, column) : null);
  const refLogProbs = o.klLoss ? shifted(rows.refLogProbs) : null;
  const scores = PG_VARIANTS[o.pgVariant].scores
    ? tf.tensor2d(
        batch.rows.map((r) => rows.episodeScores[r]!),
        [batch.rows.length, 1],
      )
    : null;
  return {
    ...policy,
    oldLogProbs: shiftedValues(batch, rows.oldLogProbs),
    advantages: shiftedValues(batch, rows.advantages),
    mask: shiftedValues(batch, rows.masks),
    refLogProbs,
    weights: shifted(rows.isWeights),
    scores,
    klScope: refLogProbs ? shifted(rows.klScope) : null,
    entropyScope: shifted(rows.entropyScope),
  };
}

/**
 * The actor's metrics, ROLL's and verl's names (actor/...), from actorLoss's parts: the loss
 * terms per mini-batch (a micro-batch's are fractions of its mini-batch's), the statistics per
 * sampled token, and the log-prob gap over the tokens scored before the first optimizer step
 * (with the sampler's log-probs as the old ones: how far generation's numbers are from training's).
 */
function actorMetrics(all: Tally, beforeUpdate: Tally, tokens: number, run: UpdateRun, variant: PgVariant, scores: readonly number[]): Record<string, number> {
  const miniBatchesSeen = Math.max(1, run.optimizerSteps + run.skipped);
  const perMiniBatch = (name: string) => all.sum(name) / miniBatchesSeen;
  const perToken = (name: string) => (tokens === 0 ? 0 : all.sum(name) / tokens);
  const gapTokens = beforeUpdate.sum('tokens');
  return {
    'actor/pg_loss': perMiniBatch('pg_loss'),
    'actor/kl_loss': perMiniBatch('kl_loss'),
    'actor/entropy': perMiniBatch('entropy'),
    'actor/total_loss': average(run.losses),
    'actor/ratio_mean': perToken('ratio'),
    'actor/approxkl': perToken('approxkl'),
    'actor/policykl': perToken('policykl'),
    ...Object.fromEntries(variant.stats.map((name) => [`actor/${name}`, perToken(name)])),
    ...(variant.scores ? scoreSplit(scores) : {}),
    'actor/logprob_gap_before_update': gapTokens ? beforeUpdate.sum('logprob_gap') / gapTokens : 0,
    'actor/ratio_max': all.count ? all.max('ratio_max') : 1,
    'actor/ratio_min': all.count ? all.min('ratio_min') : 1,
  };
}

/** What every update reports of its optimizer steps, as <role>/<name>. */
function optimizerMetrics(role: string, run: UpdateRun, schedule: UpdateSchedule): Record<string, number> {
  return {
    [`${role}/grad_norm`]: average(run.gradNorms),
    [`${role}/lr`]: schedule.learningRate,
    [`${role}/optimizer_steps`]: run.optimizerSteps,
    [`${role}/skipped_steps`]: run.skipped,
  };
}

const counts = (run: UpdateRun) => ({ optimizerSteps: run.optimizerSteps, skipped: run.skipped, skippedAtEnd: run.skippedAtEnd });

/** actor_train's update: actorLoss (the pg_variant's policy loss, the KL loss, the entropy bonus) on every micro-batch. */
export async function updateActor(model: Qwen2Model, optimizer: AdamW, rows: ActorRows, schedule: UpdateSchedule, o: ActorLossOptions): Promise<UpdateResult> {
  const all = new Tally();
  const beforeUpdate = new Tally();
  let tokens = 0;
  const microLoss: MicroLoss = (batch, inputs, targets, norms, hiddenOf) => {
    tokens += sampledTokens(batch, rows.masks);
    const hidden = scoredHidden(batch, hiddenOf(model, inputs));
    const policy = model.tokenStats(hidden, targets, { temperature: shiftedTemperatures(batch, rows.temperature) });
    const { loss, parts } = actorLoss(actorInput(batch, rows, o, policy), o, norms);
    return { loss, stats: parts };
  };
  const run = await runUpdate(model, optimizer, rows, schedule, microLoss, (stats, weightsChanged) => {
    all.add(stats);
    if (!weightsChanged) beforeUpdate.add(stats);
  });
  return {
    metrics: { ...actorMetrics(all, beforeUpdate, tokens, run, PG_VARIANTS[o.pgVariant], rows.episodeScores), ...optimizerMetrics('actor', run, schedule) },
    ...counts(run),
  };
}

/**
 * Supervised fine-tuning (the warm start): the mean negative log-likelihood of the masked tokens of
 * each mini-batch, through the same mini-batch, clipping and NaN-guard loop as the RL updates.
 */
export async function updateSupervised(model: Qwen2Model, optimizer: AdamW, rows: TokenRows, schedule: UpdateSchedule): Promise<UpdateResult> {
  const microLoss: MicroLoss = (batch, inputs, targets, norms, hiddenOf) => {
    const mask = shiftedValues(batch, rows.masks);
    const hidden = scoredHidden(batch, hiddenOf(model, inputs));
    const { logProbs, entropy } = model.tokenStats(hidden, targets, { temperature: 1 });
    entropy.dispose();
    const nll = tf.neg(tf.sum(tf.mul(logProbs, mask))) as tf.Scalar;
    return { loss: tf.div(nll, norms.tokens) as tf.Scalar, stats: { nll, tokens: tf.sum(mask) as tf.Scalar } };
  };
  const all = new Tally();
  const run = await runUpdate(model, optimizer, rows, schedule, microLoss, (stats) => all.add(stats));
  const tokens = all.sum('tokens');
  return { metrics: { 'sft/loss': tokens === 0 ? 0 : all.sum('nll') / tokens, ...optimizerMetrics('sft', run, schedule) }, ...counts(run) };
}

/** The critic's update (gae). Metrics: critic/vf_loss, critic/vf_clipfrac, critic/vpred_mean, ... */
export async function updateCritic(
  critic: Qwen2Model,
  optimizer: AdamW,
  rows: CriticRows,
  schedule: UpdateSchedule,
  o: { valueClip: number | null; aggMode: LossAggMode },
): Promise<UpdateResult> {
  if (!rows.values) throw new Error('the critic update needs the old values');
  const oldValues = rows.values;
  const all = new Tally();
  let tokens = 0;
  const microLoss: MicroLoss = (batch, inputs, _targets, norms, hiddenOf) => {
    const mask = shiftedValues(batch, rows.masks);
    const old = shiftedValues(batch, oldValues);
    const returns = shiftedValues(batch, rows.returns);
    tokens += sampledTokens(batch, rows.masks);
    const hidden = scoredHidden(batch, hiddenOf(critic, inputs));
    return valueLoss(critic.values(hidden), old, returns, mask, o.valueClip, o.aggMode, norms);
  };
  const run = await runUpdate(critic, optimizer, rows, schedule, microLoss, (stats) => all.add(stats));
  return {
    metrics: {
      'critic/vf_loss': average(run.losses),
      'critic/vf_clipfrac': tokens ? all.sum('clipped') / tokens : 0,
      'critic/vpred_mean': tokens ? all.sum('prediction') / tokens : 0,
      'critic/grad_norm': average(run.gradNorms),
      'critic/lr': schedule.learningRate,
      'critic/skipped_steps': run.skipped,
    },
    ...counts(run),
  };
}
