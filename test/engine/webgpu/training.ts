/**
 * Optimizer steps of the tiny model through the trainer's own update (src/train/update.ts): each
 * one the forward pass, the token log-prob loss, gradients summed over two micro-batches, clipping
 * by global norm and an AdamW step, as warm start and rehearsal take them.
 */
import type { AdamW } from '../../../src/model/optim';
import type { Qwen2Model } from '../../../src/model/qwen2';
import { updateSupervised, type TokenRows } from '../../../src/train/update';

/** Four rows of different lengths (so micro-batches are padded), each with a prompt that is fed, not scored. */
const ROWS: TokenRows = {
  ids: [
    [1, 5, 9, 33, 2, 30, 7],
    [7, 0, 12, 3, 4, 8],
    [2, 2, 17, 36, 11, 6],
    [30, 9, 1, 25, 14],
  ].map((row) => Int32Array.from(row)),
  masks: [
    [0, 0, 1, 1, 1, 1, 1],
    [0, 0, 0, 1, 1, 1],
    [0, 1, 1, 1, 1, 1],
    [0, 0, 1, 1, 1],
  ].map((row) => Uint8Array.from(row)),
};

/** Below the tiny model's gradient norms (about 1.5), so every step is clipped. */
const MAX_GRAD_NORM = 0.5;
/**
 * A rate of the trainer's size. AdamW divides each gradient component by its own size, so a
 * component far below its matrix's largest carries its backend's rounding into the update; small
 * steps keep those differences small beside the weights (at 1e-2 they reach 1.4e-4 of a weight).
 */
const LEARNING_RATE = 1e-3;

/** One optimizer step (the `step`-th: it seeds the shuffle); returns the gradient norm before clipping. */
export async function supervisedStep(model: Qwen2Model, optimizer: AdamW, step: number, recompute = false): Promise<number> {
  const result = await updateSupervised(model, optimizer, ROWS, {
    epochs: 1,
    miniBatchRows: ROWS.ids.length,
    microBatchRows: 2,
    gradientAccumulationSteps: 2,
    sequenceLength: 7,
    learningRate: LEARNING_RATE,
    maxGradNorm: MAX_GRAD_NORM,
    shuffleSeed: [11, step],
    recompute,
  });
  if (result.optimizerSteps !== 1) throw new Error(`step ${step}: ${result.skipped} optimizer steps skipped`);
  return result.metrics['sft/grad_norm']!;
}
