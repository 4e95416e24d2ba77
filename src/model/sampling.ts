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
  /**
   * A temperature of its own for the tokens that begin a tagged span's content, e.g. the answer's
   * first token (generating_args.answer_temperature: exploring which answer, not how to write
   * it). Needs a decode function.
   */
  opening?: OpeningTemperature;
}

/**
 * The tokens sampled once `open` has appeared, up to and including the one that shows the first
 * character past `open` + `tagEnd`. With `<answer` and `>`: the token that begins the answer,
 * whether or not the tokenizer merges the tag's `>` into it.
 */
export interface OpeningTemperature {
  open: string;
  tagEnd: string;
  temperature: number;
}

/** Whether the next token after `text` still begins the content: the text since the last `open` is a prefix of `tagEnd`. */
export function beginsContent(text: string, opening: Pick<OpeningTemperature, 'open' | 'tagEnd'>): boolean {
  const at = text.lastIndexOf(opening.open);
  return at >= 0 && opening.tagEnd.startsWith(text.slice(at + opening.open.length));
}

/** The temperature the next token after `text` is sampled at (params.temperature but where an opening applies). */
export function temperatureAfter(text: string, params: SamplingParams): number {
  return params.opening && beginsContent(text, params.opening) ? params.opening.temperature : params.temperature;
}

/** The temperature of a sampled token's log-prob where no opening applies: 1 where sampleToken decodes greedily. */
export function logProbTemperature(params: SamplingParams): number {
  return params.doSample && params.temperature > 0 ? params.temperature : 1;
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

/**
 * Tokens more than this many nats below the best (after temperature) are left out of top-k and
 * top-p sorting: together they hold less than vocab * e^-30 of the mass (under 1e-7 for Qwen's
 * 151k ids), far below float32 resolution, and skipping them keeps a large vocabulary cheap.
 */
const NEGLIGIBLE_NATS = 30;

/** Scratch for the scaled logits, reused across calls (sampling runs per token per sequence). */
let scratch = new Float64Array(0);

export function sampleToken(logits: Float32Array, params: SamplingParams, rng: Rng): Sampled {
  const greedy = !params.doSample || params.temperature === 0;
  const temperature = greedy ? 1 : params.temperature;
  const vocab = logits.length;
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (logits[i]! > max) max = logits[i]!;
  // Scaled logits relative to the max, and their log-normaliser.
  if (scratch.length < vocab) scratch = new Float64Array(vocab);
  const scaled = scratch;
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
  if ((params.topK > 0 && params.topK < vocab) || params.topP < 1) {
    const order = leadingTokens(scaled, vocab, logZ, params);
    candidates = params.topK > 0 ? order.slice(0, params.topK) : order;
    if (params.topP < 1) {
      // The nucleus is measured against what is left after top-k, else the whole vocabulary.
      let total = 0;
      if (params.topK > 0) for (const i of candidates) total += Math.exp(scaled[i]!);
      else total = sum;
      let mass = 0;
      let keep = 0;
      while (keep < candidates.length) {
        mass += Math.exp(scaled[candidates[keep]!]!) / total;
        keep += 1;
        if (mass >= params.topP) break;
      }
      candidates = candidates.slice(0, keep);
    }
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

/** One alternative at a step: a token and its log-prob, as Sampled.logProb measures it. */
export interface Alternative {
  token: number;
  logProb: number;
}

/**
 * The `n` most likely tokens of a step (most likely first; ties: the lower id), with their
 * log-probs under softmax(logits / temperature) over the whole vocabulary, temperature 1 when
 * greedy: what sampleToken's log-prob measures, so the sampled token's entry is its log-prob.
 */
export function topAlternatives(logits: Float32Array, params: SamplingParams, n: number): Alternative[] {
  const temperature = !params.doSample || params.temperature === 0 ? 1 : params.temperature;
  const vocab = logits.length;
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < vocab; i++) sum += Math.exp((logits[i]! - max) / temperature);
  const logZ = Math.log(sum);
  const best: number[] = [];
  for (let i = 0; i < vocab; i++) {
    if (best.length === n && logits[i]! <= logits[best[n - 1]!]!) continue;
    let at = best.length;
    while (at > 0 && logits[best[at - 1]!]! < logits[i]!) at--;
    best.splice(at, 0, i);
    if (best.length > n) best.pop();
  }
  return best.map((token) => ({ token, logProb: (logits[token]! - max) / temperature - logZ }));
}

const BINS = 4096;
const binCounts = new Float64Array(BINS);
const binMass = new Float64Array(BINS);

/**
 * The most likely tokens, most likely first (ties: lower id first): at least the top-k, and at
 * least enough for the top-p mass. A histogram of log-probabilities finds how far down to go in
 * one pass, so only those tokens are sorted, not the whole vocabulary.
 */
function leadingTokens(scaled: Float64Array, vocab: number, logZ: number, params: SamplingParams): number[] {
  const bin = (s: number) => Math.min(BINS - 1, Math.floor((-s / NEGLIGIBLE_NATS) * BINS));
  binCounts.fill(0);
  binMass.fill(0);
  for (let i = 0; i < vocab; i++) {
    const s = scaled[i]!;
    if (s <= -NEGLIGIBLE_NATS) continue;
    const b = bin(s);
    binCounts[b] = binCounts[b]! + 1;
    binMass[b] = binMass[b]! + Math.exp(s - logZ);
  }
  // With top-k, top-p applies inside the k tokens afterwards, so k tokens are enough.
  const needCount = params.topK > 0 ? params.topK : 0;
  const needMass = params.topK > 0 ? 0 : params.topP;
  let cutoff = BINS - 1;
  for (let b = 0, count = 0, mass = 0; b < BINS; b++) {
    count += binCounts[b]!;
    mass += binMass[b]!;
    if (count >= needCount && mass >= needMass) {
      cutoff = b;
      break;
    }
  }
  const order: number[] = [];
  for (let i = 0; i < vocab; i++) if (scaled[i]! > -NEGLIGIBLE_NATS && bin(scaled[i]!) <= cutoff) order.push(i);
  order.sort((a, b) => scaled[b]! - scaled[a]! || a - b);
  return order;
}
