/**
 * Choosing the next token from one row of logits, on the host: temperature, top-k, top-p,
 * greedy. Each sequence brings its own seeded Rng, so what a sequence samples does not depend
 * on which other sequences share its batch.
 */
import type { Rng } from '../engine/rng';

export interface SamplingParams {
  /** 0 (or doSample false) decodes greedily. */
  temperature: number;
  /** Nucleus mass in (0, 1]; 1 turns it off. */
  topP: number;
  /** Keep the k most likely tokens; 0 turns it off. */
  topK: number;
  doSample: boolean;
}

export const GREEDY: SamplingParams = { temperature: 0, topP: 1, topK: 0, doSample: false };

export interface Sampled {
  token: number;
  /**
   * log p(token) under softmax(logits / temperature) over the whole vocabulary (temperature 1
   * when greedy), before top-k/top-p truncation: the quantity the trainer recomputes.
   */
  logProb: number;
}

export function sampleToken(logits: Float32Array, params: SamplingParams, rng: Rng): Sampled {
  const greedy = !params.doSample || params.temperature === 0;
  const temperature = greedy ? 1 : params.temperature;
  const vocab = logits.length;
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (logits[i]! > max) max = logits[i]!;
  // Scaled logits relative to the max, and their log-normaliser.
  const scaled = new Float64Array(vocab);
  let sum = 0;
  for (let i = 0; i < vocab; i++) {
    scaled[i] = (logits[i]! - max) / temperature;
    sum += Math.exp(scaled[i]!);
  }
  const logZ = Math.log(sum);
  const logProbOf = (token: number) => scaled[token]! - logZ;

  if (greedy) {
    let best = 0;
    for (let i = 1; i < vocab; i++) if (logits[i]! > logits[best]!) best = i;
    return { token: best, logProb: logProbOf(best) };
  }

  let candidates: number[] | null = null;
  if (params.topK > 0 && params.topK < vocab) candidates = topIndices(scaled, params.topK);
  if (params.topP < 1) {
    const order = candidates ?? topIndices(scaled, vocab);
    let mass = 0;
    let total = 0;
    for (const i of order) total += Math.exp(scaled[i]!);
    const kept: number[] = [];
    for (const i of order) {
      kept.push(i);
      mass += Math.exp(scaled[i]!) / total;
      if (mass >= params.topP) break;
    }
    candidates = kept;
  }

  const u = rng.float();
  if (candidates) {
    let total = 0;
    for (const i of candidates) total += Math.exp(scaled[i]!);
    let acc = 0;
    for (const i of candidates) {
      acc += Math.exp(scaled[i]!) / total;
      if (u < acc) return { token: i, logProb: logProbOf(i) };
    }
    const last = candidates[candidates.length - 1]!;
    return { token: last, logProb: logProbOf(last) };
  }
  let acc = 0;
  for (let i = 0; i < vocab; i++) {
    acc += Math.exp(scaled[i]! - logZ);
    if (u < acc) return { token: i, logProb: logProbOf(i) };
  }
  return { token: vocab - 1, logProb: logProbOf(vocab - 1) };
}

/** Indices of the k largest values, largest first; ties keep the lower index first. */
function topIndices(values: Float64Array, k: number): number[] {
  const indices = Array.from({ length: values.length }, (_, i) => i);
  indices.sort((a, b) => values[b]! - values[a]! || a - b);
  return indices.slice(0, k);
}
