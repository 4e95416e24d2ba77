/**
 * One step's training batch, column by column: row i of every column is the rollout's sample i,
 * and every array column has one entry per row (so selectRows can take any subset of rows). Token
 * columns follow src/rollout/types.ts's alignment: `samplingLogProbs[i][t]` scores `ids[i][t]`
 * given the ids before it, and `masks[i][t]` is 1 exactly on the tokens the policy sampled.
 *
 * fromRollout builds the rollout's columns once; each stage of the step (./stages) reads columns
 * and returns the batch with its own added, in ROLL's order:
 *
 *   rollout   ids, masks, samplingLogProbs, the reward rows' ids and scores, versions,
 *             temperature, baselines (remax), sourceRefLogProbs (a source that scored them)
 *   score     refLogProbs, oldLogProbs, recomputedLogProbs, values        (./stages/score.ts)
 *   credit    thinkMasks, advantages, returns, learnFrom                  (./stages/credit.ts)
 *   losses    klScope, entropyScope, isWeights                            (./stages/credit.ts)
 *
 * and the update stage (./stages/learn.ts) trains on it.
 */
import type { RewardRow } from '../algo/rewards';
import { samplingTemperatures } from '../algo/think';
import type { AgenticConfig } from '../config/schema';
import type { Temperatures } from '../model/micro_batches';
import { logProbTemperature } from '../model/sampling';
import type { ChatFormat } from '../rollout/chat';
import { generatingArgs, samplingParams } from '../rollout/env_manager';
import type { RolloutBatch } from '../rollout/types';

type Rows = readonly Float32Array[];
type Masks = readonly Uint8Array[];

export interface RolloutColumns {
  ids: readonly Int32Array[];
  masks: Masks;
  /** The sampler's log-probs of the sampled tokens (0 off the mask). */
  samplingLogProbs: Rows;
  trajGroupIds: readonly string[];
  trajIds: readonly string[];
  /** A seated env's rows: the seat that played each (credit never mixes seats); null for one agent facing an env. */
  seats: readonly (string | null)[];
  tags: readonly string[];
  groupIds: readonly number[];
  /** Step-wise rows: the turn index; trajectory rows: null. */
  steps: readonly (number | null)[];
  /** What sits on the last response token: the episode score (traj), the step reward (step). */
  scores: readonly number[];
  episodeScores: readonly number[];
  /** Step-wise rows: the GiGPO anchor (hash of the observation answered); trajectory rows: null. */
  stateHashes: readonly (string | null)[];
  /** The policy version that played each row. */
  versions: readonly number[];
  /** What every log-prob of a row's tokens is divided by: the rollout's sampling temperatures. */
  temperature: Temperatures;
  /** remax: the greedy episode score of each row's group; null for other estimators. */
  baselines: readonly number[] | null;
  /** The reference's log-probs, when the rollout source scored them already (the async worker). */
  sourceRefLogProbs: Rows | null;
}

export interface ScoreColumns {
  /** The reference's log-probs before credit (null: no reference, or scored after credit). */
  refLogProbs: Rows | null;
  /** actor_train's, when the step recomputed them; null: the sampler's stand in. */
  recomputedLogProbs: Rows | null;
  /** The behaviour policy's log-probs of the PPO ratio: recomputed, else the sampler's. */
  oldLogProbs: Rows;
  /** The critic's values (gae). */
  values: Rows | null;
}

/**
 * The rows actor_train learns from (skip_zero_advantage_samples: those with an advantage), and the
 * reference's log-probs of them when it scored them after credit (null: refLogProbs holds them).
 */
export interface LearnFrom {
  rows: readonly number[];
  refLogProbs: Rows | null;
}

export interface CreditColumns {
  /** Where each row thinks (think tags), when a setting needs it. */
  thinkMasks: Masks | null;
  advantages: Rows;
  returns: Rows;
  /** null: actor_train learns from every row. */
  learnFrom: LearnFrom | null;
}

export interface LossColumns {
  /** Where the KL loss applies (kl_loss_tokens); null: every response token. */
  klScope: Masks | null;
  /** Where the entropy bonus applies (entropy_loss_tokens); null: every response token. */
  entropyScope: Masks | null;
  /** Importance weights of the policy loss (train_infer_correction.is_weight); null: none. */
  isWeights: Rows | null;
}

export type ScoredBatch = RolloutColumns & ScoreColumns;
export type CreditedBatch = ScoredBatch & CreditColumns;
export type TrainBatch = CreditedBatch & LossColumns;

/**
 * The temperatures a training rollout sampled at, which every log-prob of its tokens must divide
 * by too: one number, or per token where generating_args.answer_temperature gives each answer's
 * first token its own.
 */
function rolloutTemperatures(config: AgenticConfig, chat: ChatFormat, ids: readonly Int32Array[], masks: readonly Uint8Array[]): Temperatures {
  const sampling = samplingParams(generatingArgs(config, 'train'));
  if (!sampling.opening || !sampling.doSample) return logProbTemperature(sampling);
  return ids.map((row, i) => samplingTemperatures(row, masks[i]!, chat.responsePiece, sampling));
}

/** The rollout's columns, built once. `baselines`: remax's greedy score of each group. */
export function fromRollout(
  rollout: RolloutBatch,
  config: AgenticConfig,
  chat: ChatFormat,
  extra: { baselines: ReadonlyMap<string, number> | null; sourceRefLogProbs: Rows | null },
): RolloutColumns {
  const samples = rollout.samples;
  const ids = samples.map((s) => s.inputIds);
  const masks = samples.map((s) => s.responseMask);
  const baselines = extra.baselines;
  return {
    ids,
    masks,
    samplingLogProbs: samples.map((s) => s.logProbs),
    trajGroupIds: samples.map((s) => s.trajGroupId),
    trajIds: samples.map((s) => s.trajId),
    seats: samples.map((s) => s.seat),
    tags: samples.map((s) => s.tag),
    groupIds: samples.map((s) => s.groupId),
    steps: samples.map((s) => s.step),
    scores: samples.map((s) => s.score),
    episodeScores: samples.map((s) => s.episodeScore),
    stateHashes: samples.map((s) => s.stateHash),
    versions: samples.map((s) => s.policyVersion),
    temperature: rolloutTemperatures(config, chat, ids, masks),
    baselines: baselines ? samples.map((s) => baselines.get(s.trajGroupId) ?? 0) : null,
    sourceRefLogProbs: extra.sourceRefLogProbs,
  };
}

/** The rows as the reward functions read them. */
export function rewardRows(batch: RolloutColumns): RewardRow[] {
  return batch.ids.map((_, i) => ({
    trajGroupId: batch.trajGroupIds[i]!,
    trajId: batch.trajIds[i]!,
    tag: batch.tags[i]!,
    groupId: batch.groupIds[i]!,
    step: batch.steps[i]!,
    score: batch.scores[i]!,
    episodeScore: batch.episodeScores[i]!,
    stateHash: batch.stateHashes[i]!,
    seat: batch.seats[i]!,
  }));
}

export function rowCount(batch: Pick<RolloutColumns, 'ids'>): number {
  return batch.ids.length;
}

/** The rows at `indices`: every array column picked, everything else (a single temperature, null) kept. */
export function selectRows<B extends Pick<RolloutColumns, 'ids'>>(batch: B, indices: readonly number[]): B {
  const n = rowCount(batch);
  const picked: Record<string, unknown> = {};
  for (const [name, column] of Object.entries(batch)) {
    picked[name] = Array.isArray(column) && column.length === n ? indices.map((i) => column[i]) : column;
  }
  return picked as B;
}
