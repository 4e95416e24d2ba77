import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startBackend } from '../../src/engine/backend';
import { findBlas, type Blas } from '../../src/engine/blas';
import { blasInUse, useBlas } from '../../src/engine/kernels/matmul';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { DecodeBatch, generate, prefillChunks, type GenerationRequest } from '../../src/model/generate';
import { type LoraSpec, parseTarget } from '../../src/model/lora';
import { addAdapters, newAdapters } from '../../src/model/lora_adapters';
import { Qwen2Model } from '../../src/model/qwen2';
import { beginsContent, GREEDY, sampleToken, temperatureAfter, type SamplingParams } from '../../src/model/sampling';
import { ANSWER_OPENING } from '../../src/sdk/answer';
import { missing } from '../system_tools';
import { tinyConfig } from './tiny';

let model: Qwen2Model;

const systemBlas = findBlas('auto');
const noOpenBlas = missing('openblas');

/**
 * Generation runs on each engine: tfjs's cpu backend, wasm with XNNPACK's matmuls, and wasm with
 * the system BLAS (products in fixed tiles of rows, attention by cblas_sgemm per sequence).
 */
const ENGINES: Array<{ name: string; backend: 'cpu' | 'wasm'; blas: Blas | null; skip?: boolean }> = [
  { name: 'cpu', backend: 'cpu', blas: null },
  { name: 'wasm, XNNPACK', backend: 'wasm', blas: null },
  { name: 'wasm, system BLAS', backend: 'wasm', blas: systemBlas, skip: noOpenBlas },
];

/** Runs the describe's tests on `engine`'s backend and BLAS, with the tiny model built there. */
function onEngine(engine: (typeof ENGINES)[number]) {
  let before: Blas | null = null;
  beforeAll(async () => {
    await startBackend(engine.backend);
    before = blasInUse();
    useBlas(engine.blas);
    model = Qwen2Model.random(tinyConfig(), { seed: 21 });
    // random biases and norm weights (a fresh model has 0 and 1), so every path's use of them shows
    const perturbed = model.blocks.flatMap((b) => [b.inputNorm, b.postNorm, ...(b.bias ? [b.bias.q, b.bias.k, b.bias.v] : [])]);
    perturbed.forEach((w, i) => tf.tidy(() => w.assign(w.add(tf.randomNormal(w.shape, 0, 0.3, 'float32', i)))));
  });
  afterAll(() => {
    model.dispose();
    useBlas(before);
  });
}

const prompt = (seed: number, length: number) => {
  const rng = Rng.fromSeed(seed, 'prompt');
  return Array.from({ length }, () => rng.int(37));
};

function request(id: number, promptIds: number[], extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return { id, promptIds, sampling: GREEDY, maxNewTokens: 6, rng: Rng.fromSeed(id, 'sample'), ...extra };
}

/** `base` with LoRA adapters on q, v and down, their B non-zero so they change the outputs. */
function withLora(base: Qwen2Model): Qwen2Model {
  const spec: LoraSpec = { rank: 2, alpha: 4, targets: parseTarget('q_proj,v_proj,down_proj') };
  const adapters = newAdapters(
    spec,
    [...Array(base.config.num_hidden_layers)].map(() => ['q', 'v', 'down']),
    base,
    5,
  );
  addAdapters(base, spec, adapters);
  for (const layer of adapters) for (const a of Object.values(layer)) a.b.assign(tf.randomNormal(a.b.shape, 0, 0.3, 'float32', 7));
  return base;
}

/** Log-softmax rows of the full forward pass over `ids` (one sequence, no cache). */
async function referenceLogProbs(ids: number[]): Promise<number[][]> {
  const t = tf.tensor2d(Int32Array.from(ids), [1, ids.length], 'int32');
  const { hidden, present } = model.forward(t);
  const logits = model.logits(hidden);
  const lp = tf.logSoftmax(logits);
  const rows = (await lp.array()) as number[][][];
  tf.dispose([t, hidden, logits, lp, ...present.flatMap((p) => [p.k, p.v])]);
  return rows[0]!;
}

/** Logits of the full forward pass over `ids` (one sequence, no cache). */
async function referenceLogits(ids: number[]): Promise<number[][]> {
  const t = tf.tensor2d(Int32Array.from(ids), [1, ids.length], 'int32');
  const { hidden, present } = model.forward(t);
  const logits = model.logits(hidden);
  const rows = (await logits.array()) as number[][][];
  tf.dispose([t, hidden, logits, ...present.flatMap((p) => [p.k, p.v])]);
  return rows[0]!;
}

async function expectMatchesFullForward(promptIds: number[], tokens: number[], logProbs: number[]) {
  const rows = await referenceLogProbs([...promptIds, ...tokens]);
  tokens.forEach((token, i) => {
    const row = rows[promptIds.length - 1 + i]!;
    const best = row.indexOf(Math.max(...row));
    expect(token).toBe(best);
    expect(logProbs[i]!).toBeCloseTo(row[token]!, 4);
  });
}

for (const engine of ENGINES)
  describe.skipIf(engine.skip ?? false)(`generation with a KV cache (${engine.name})`, () => {
    onEngine(engine);

    test('greedy tokens and log-probs equal the full forward pass, for prompts of different lengths', async () => {
      const before = tf.memory().numTensors;
      const prompts = [prompt(1, 3), prompt(2, 9), prompt(3, 5)];
      const results = await generate(
        model,
        prompts.map((p, i) => request(i, p)),
      );
      expect(tf.memory().numTensors).toBe(before);
      for (const [i, r] of results.entries()) {
        expect(r.tokens).toHaveLength(6);
        expect(r.finishReason).toBe('length');
        await expectMatchesFullForward(prompts[i]!, r.tokens, r.logProbs);
      }
    });

    test('sequences join and leave a running batch without changing each other', async () => {
      const before = tf.memory().numTensors;
      const alone = await generate(model, [request(7, prompt(7, 4), { maxNewTokens: 8 })]);
      const batch = new DecodeBatch(model);
      await batch.join([request(1, prompt(1, 6), { maxNewTokens: 3 }), request(2, prompt(2, 2), { maxNewTokens: 10 })]);
      const done = new Map<number, number[]>();
      for (let step = 0; batch.size > 0; step++) {
        if (step === 2) await batch.join([request(7, prompt(7, 4), { maxNewTokens: 8 }), request(8, prompt(8, 12), { maxNewTokens: 5 })]);
        if (step === 4) {
          const left = batch.leave(2);
          expect(left?.tokens.length).toBe(5);
          expect(left?.finishReason).toBe('left');
        }
        for (const r of await batch.step()) done.set(r.id as number, r.tokens);
      }
      batch.dispose();
      expect(tf.memory().numTensors).toBe(before);
      expect(done.get(7)).toEqual(alone[0]!.tokens);
      expect(done.get(1)).toHaveLength(3);
      expect(done.get(8)).toHaveLength(5);
      await expectMatchesFullForward(prompt(8, 12), done.get(8)!, (await generate(model, [request(8, prompt(8, 12), { maxNewTokens: 5 })]))[0]!.logProbs);
    });

    test('a continued sequence reuses its cached prefix and generates what a fresh prefill does', async () => {
      const before = tf.memory().numTensors;
      const first = prompt(4, 9);
      const [turn1] = await generate(model, [request(1, first, { keepCache: true })]);
      const cache = turn1!.cache!;
      expect(cache.ids).toEqual([...first, ...turn1!.tokens.slice(0, -1)]);
      expect(cache.kv[0]!.k.shape[2]).toBe(cache.ids.length);
      // the next turn: everything so far, the last token, and a few new ids
      const next = [...first, ...turn1!.tokens, ...prompt(5, 3)];
      const fresh = await generate(model, [request(2, next), request(3, prompt(6, 20))]);
      const reused = await generate(model, [request(2, next, { past: { length: cache.ids.length, kv: cache.kv } }), request(3, prompt(6, 20))]);
      const partly = await generate(model, [request(2, next, { past: { length: 4, kv: cache.kv } })]);
      tf.dispose(cache.kv.flatMap((l) => [l.k, l.v]));
      expect(tf.memory().numTensors).toBe(before);
      for (const got of [reused[0]!, partly[0]!]) {
        expect(got.tokens).toEqual(fresh[0]!.tokens);
        got.logProbs.forEach((lp, i) => expect(lp).toBeCloseTo(fresh[0]!.logProbs[i]!, 5));
      }
      expect(reused[1]!.tokens).toEqual(fresh[1]!.tokens);
      await expectMatchesFullForward(next, reused[0]!.tokens, reused[0]!.logProbs);
    });

    test('a cached prefix must leave at least one prompt id to feed', async () => {
      const [done] = await generate(model, [request(1, prompt(4, 5), { keepCache: true })]);
      const kv = done!.cache!.kv;
      await expect(generate(model, [request(2, prompt(4, 5), { past: { length: 5, kv } })])).rejects.toThrow('must be shorter than the prompt');
      tf.dispose(kv.flatMap((l) => [l.k, l.v]));
    });

    test('joining prompts are prefilled in chunks of one shape, within a bound on the attention scores', () => {
      const long = (id: number, n: number) => request(id, Array(n).fill(1));
      const chunks = prefillChunks([long(1, 1000), long(2, 10), long(3, 1000), long(4, 1000), long(5, 12), long(6, 10)], 4);
      // prompts of one length go together (no padding); 1000-id prompts fit 4 to a chunk of 2^24 scores (4 heads)
      expect(chunks.map((c) => c.map((r) => r.id))).toEqual([[1, 3, 4], [2, 6], [5]]);
      const many = prefillChunks(
        Array.from({ length: 10 }, (_, i) => long(i, 1000)),
        4,
      );
      expect(many.map((c) => c.length)).toEqual([4, 4, 2]);
      const past = { length: 3, kv: [] };
      const continued = prefillChunks([request(1, [1, 2, 3, 4, 5], { past }), request(2, [5, 4, 3, 2, 1]), request(3, [1, 1, 1, 1, 1], { past })], 4);
      expect(continued.map((c) => c.map((r) => r.id))).toEqual([[1, 3], [2]]);
    });

    test('sampling is reproducible per sequence, whatever shares the batch', async () => {
      const sampling: SamplingParams = { temperature: 1.3, topP: 0.9, topK: 20, doSample: true };
      const mine = () => request(5, prompt(5, 4), { sampling, maxNewTokens: 10, rng: Rng.fromSeed(99, 'mine') });
      const [alone] = await generate(model, [mine()]);
      const crowded = await generate(model, [request(1, prompt(1, 7), { sampling, maxNewTokens: 4 }), mine()]);
      expect(crowded[1]!.tokens).toEqual(alone!.tokens);
      expect(crowded[1]!.logProbs).toEqual(alone!.logProbs);
      // more rows than one tile of BLAS products, so the sequence sits in a full tile, then a partial one
      const crowd = await generate(model, [...Array.from({ length: 19 }, (_, i) => request(10 + i, prompt(10 + i, 3 + (i % 5)), { sampling })), mine()]);
      expect(crowd[19]!.tokens).toEqual(alone!.tokens);
      expect(crowd[19]!.logProbs).toEqual(alone!.logProbs);
    });

    test('stops at a stop token, a stop string, or the context length', async () => {
      const [free] = await generate(model, [request(1, prompt(1, 5), { maxNewTokens: 8 })]);
      const stopAt = free!.tokens[2]!;
      const [byToken] = await generate(model, [request(1, prompt(1, 5), { maxNewTokens: 8, stopTokenIds: [stopAt] })]);
      expect(byToken!.finishReason).toBe('stop_token');
      expect(byToken!.tokens).toEqual(free!.tokens.slice(0, free!.tokens.indexOf(stopAt) + 1));

      const decode = (ids: readonly number[]) => ids.map((t) => String.fromCharCode(97 + (t % 26))).join('');
      const target = decode(free!.tokens.slice(3, 5));
      const [byString] = await generate(model, [request(1, prompt(1, 5), { maxNewTokens: 8, stopStrings: [target] })], { decode });
      expect(byString!.finishReason).toBe('stop_string');
      expect(decode(byString!.tokens)).toContain(target);
      expect(byString!.tokens.length).toBeLessThanOrEqual(5);

      const [byContext] = await generate(model, [request(1, prompt(1, 5), { maxNewTokens: 50 })], { maxLength: 9 });
      expect(byContext!.finishReason).toBe('context');
      expect(5 + byContext!.tokens.length).toBe(9);
    });

    test('Qwen3, Llama 3 (scaled RoPE) and LoRA adapters generate what their full forward passes give', async () => {
      const qwen2 = model;
      const llama3Rope = { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 16 };
      const variants = [
        Qwen2Model.random(tinyConfig({ model_type: 'qwen3' }), { seed: 4 }),
        Qwen2Model.random(tinyConfig({ model_type: 'llama', rope_scaling: llama3Rope }), { seed: 5 }),
        withLora(Qwen2Model.random(tinyConfig(), { seed: 6 })),
      ];
      try {
        for (const variant of variants) {
          model = variant;
          const before = tf.memory().numTensors;
          const prompts = [prompt(11, 4), prompt(12, 9)];
          const results = await generate(
            model,
            prompts.map((p, i) => request(i, p)),
          );
          expect(tf.memory().numTensors).toBe(before);
          for (const [i, r] of results.entries()) await expectMatchesFullForward(prompts[i]!, r.tokens, r.logProbs);
        }
      } finally {
        model = qwen2;
        for (const variant of variants) variant.dispose();
      }
    });

    test('bad requests fail in one line', async () => {
      await expect(generate(model, [request(1, [])])).rejects.toThrow('generation 1: empty prompt');
      await expect(generate(model, [request(1, [1, 99])])).rejects.toThrow('token ids outside [0, 37)');
      await expect(generate(model, [request(1, [1], { stopStrings: ['x'] })])).rejects.toThrow('stop strings need a decode function');
      const opening: SamplingParams = { temperature: 1, topP: 1, topK: 0, doSample: true, opening: { open: 'c', tagEnd: 'g', temperature: 2 } };
      await expect(generate(model, [request(1, [1], { sampling: opening })])).rejects.toThrow('an opening temperature needs a decode function');
      await expect(generate(model, [request(1, [1]), request(1, [2])])).rejects.toThrow('generation 1: the id appears twice in one join');
      await expect(generate(model, [request(1, [1], { maxNewTokens: Number.NaN })])).rejects.toThrow('max_new_tokens must be an integer');
    });
  });

describe('an opening temperature', () => {
  onEngine(ENGINES[0]!);
  // each id is a letter: an opening at 'c' covers the next token, or the next two when the first is 'g'
  const decode = (ids: readonly number[]) => ids.map((t) => String.fromCharCode(97 + (t % 26))).join('');
  const params: SamplingParams = { temperature: 0.8, topP: 1, topK: 0, doSample: true, opening: { open: 'c', tagEnd: 'g', temperature: 2.5 } };

  test("beginsContent: after the last `<answer`, until a character past the tag's `>` shows", () => {
    expect(beginsContent('xx', ANSWER_OPENING)).toBe(false);
    expect(beginsContent('<think>a</think><answer', ANSWER_OPENING)).toBe(true);
    expect(beginsContent('<think>a</think><answer>', ANSWER_OPENING)).toBe(true);
    expect(beginsContent('<answer>R', ANSWER_OPENING)).toBe(false);
    expect(beginsContent('<answer>Right</', ANSWER_OPENING)).toBe(false);
    expect(beginsContent('<answer>a</answer><answer', ANSWER_OPENING)).toBe(true);
  });

  test("the tokens that begin the content are sampled at the opening's temperature, and each log-prob is at its token's", async () => {
    const prompts = [prompt(1, 4), prompt(2, 6), prompt(3, 3), prompt(4, 5)];
    const results = await generate(
      model,
      prompts.map((p, i) => request(i, p, { sampling: params, maxNewTokens: 24 })),
      { decode },
    );
    const seen = new Set<number>();
    for (const [i, r] of results.entries()) {
      const rows = await referenceLogits(prompts[i]!.concat(r.tokens));
      r.tokens.forEach((token, k) => {
        const temperature = temperatureAfter(decode(r.tokens.slice(0, k)), params);
        seen.add(temperature);
        const z = rows[prompts[i]!.length - 1 + k]!.map((v) => v / temperature);
        const max = Math.max(...z);
        const logZ = max + Math.log(z.reduce((a, v) => a + Math.exp(v - max), 0));
        expect(r.logProbs[k]!).toBeCloseTo(z[token]! - logZ, 4);
      });
    }
    expect(seen).toEqual(new Set([0.8, 2.5]));
  });
});

describe('sampleToken', () => {
  const logits = Float32Array.from([2, 1, 0.5, -1, 3]);
  test('greedy picks the largest logit and reports its log-softmax', () => {
    const { token, logProb } = sampleToken(logits, GREEDY, Rng.fromSeed(0));
    expect(token).toBe(4);
    const logZ = Math.log(Array.from(logits).reduce((s, v) => s + Math.exp(v), 0));
    expect(logProb).toBeCloseTo(3 - logZ, 6);
  });

  test('samples follow softmax(logits / T)', () => {
    const rng = Rng.fromSeed(1);
    const counts = new Array(5).fill(0);
    const n = 20000;
    for (let i = 0; i < n; i++) counts[sampleToken(logits, { temperature: 2, topP: 1, topK: 0, doSample: true }, rng).token]++;
    const z = Array.from(logits).map((v) => Math.exp(v / 2));
    const total = z.reduce((a, b) => a + b, 0);
    counts.forEach((c, i) => expect(Math.abs(c / n - z[i]! / total)).toBeLessThan(0.015));
  });

  test('top-k and top-p keep only the most likely tokens', () => {
    const rng = Rng.fromSeed(2);
    const seen = (params: SamplingParams) => {
      const s = new Set<number>();
      for (let i = 0; i < 2000; i++) s.add(sampleToken(logits, params, rng).token);
      return [...s].sort();
    };
    expect(seen({ temperature: 1, topP: 1, topK: 2, doSample: true })).toEqual([0, 4]);
    // p = [.24, .09, .05, .01, .61]: the smallest set reaching 0.8 is {4, 0}.
    expect(seen({ temperature: 1, topP: 0.8, topK: 0, doSample: true })).toEqual([0, 4]);
    expect(seen({ temperature: 1, topP: 0.5, topK: 0, doSample: true })).toEqual([4]);
  });

  test('on a large vocabulary, top-k and top-p keep exactly the tokens a full sort keeps', () => {
    const rng = Rng.fromSeed(3);
    const big = Float32Array.from({ length: 10000 }, () => rng.normal());
    const sorted = Array.from(big.keys()).sort((a, b) => big[b]! - big[a]! || a - b);
    const seen = (params: SamplingParams) => {
      const s = new Set<number>();
      for (let i = 0; i < 1500; i++) s.add(sampleToken(big, params, rng).token);
      return [...s].sort((a, b) => a - b);
    };
    expect(seen({ temperature: 1, topP: 1, topK: 4, doSample: true })).toEqual(sorted.slice(0, 4).sort((a, b) => a - b));
    // The nucleus by brute force: the shortest most-likely-first prefix holding 1% of the mass.
    const weights = sorted.map((i) => Math.exp(big[i]! - big[sorted[0]!]!));
    const total = weights.reduce((a, b) => a + b, 0);
    let mass = 0;
    let keep = 0;
    while (mass < 1e-2 * total) mass += weights[keep++]!;
    expect(keep).toBeGreaterThan(1);
    expect(seen({ temperature: 1, topP: 1e-2, topK: 0, doSample: true })).toEqual(sorted.slice(0, keep).sort((a, b) => a - b));
  });
});
