/** The models and generation requests ../gpu_generate.test.ts and its webgpu child both make, so the two sides generate alike. */
import { Rng } from '../../../src/engine/rng';
import { tf } from '../../../src/engine/tf';
import type { ModelConfig } from '../../../src/model/config';
import { Qwen2Model } from '../../../src/model/qwen2';
import type { GenerationRequest } from '../../../src/model/generate';
import { GREEDY, type SamplingParams } from '../../../src/model/sampling';
import { tinyConfig } from '../tiny';

/** Prompts of different lengths (one longer than a 16-position page), ids within the tiny vocabulary. */
export const PROMPTS: number[][] = [[1, 5, 9, 33, 2], [30, 7, 7], [12, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3], [8]];

export const SAMPLED: SamplingParams = { temperature: 0.9, topP: 1, topK: 0, doSample: true };
export const TOP_K: SamplingParams = { temperature: 0.9, topP: 1, topK: 5, doSample: true };

const SAMPLING = { greedy: GREEDY, sampled: SAMPLED, topK: TOP_K };

export function requests(prompts: readonly number[][], kind: keyof typeof SAMPLING, maxNewTokens = 12): GenerationRequest[] {
  return prompts.map((promptIds, id) => ({ id, promptIds, sampling: SAMPLING[kind], maxNewTokens, rng: Rng.fromSeed(21, 'generation', id) }));
}

/**
 * The tiny random model with its projections and embedding scaled up (std 0.02 -> 0.4): at the
 * initial scale attention is nearly uniform and the logits nearly flat, so an error in attention
 * or a norm would hide under 1e-4.
 */
export function sharpModel(seed: number, config: ModelConfig = tinyConfig()): Qwen2Model {
  const model = Qwen2Model.random(config, { seed });
  const norms = new Set([model.finalNorm, ...model.blocks.flatMap((b) => [b.inputNorm, b.postNorm])]);
  for (const v of model.variables) if (!norms.has(v)) tf.tidy(() => v.assign(v.mul(20)));
  return model;
}
