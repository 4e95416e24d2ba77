/**
 * Runs in its own process on webgpu (OpenGL ES on llvmpipe; tfjs has one engine per process):
 * the WGSL programs' cases, then generation on the GPU in the situations ../gpu_generate.test.ts
 * checks, printed as one JSON line. Where a check needs the full forward pass, it runs here too,
 * on webgpu's tfjs kernels.
 */
import { join } from 'node:path';
import { startBackend } from '../../../src/engine/backend';
import { Rng } from '../../../src/engine/rng';
import { tf } from '../../../src/engine/tf';
import { checkWeights, readModelConfig } from '../../../src/model/hf_folder';
import { DecodeBatch, disposeKv, generate, type GenerationRequest } from '../../../src/model/generate';
import { addAdapters, newAdapters } from '../../../src/model/lora_adapters';
import { Qwen2Model } from '../../../src/model/qwen2';
import { readCheckpoint } from '../../../src/model/safetensors';
import { SWIGLU } from '../../../src/engine/wgsl/programs';
import { WgslRunner } from '../../../src/engine/wgsl/runner';
import { onGpu } from '../../engine/wgsl/kernel_cases';
import { tinyConfig } from '../tiny';
import { PROMPTS, requests, SAMPLED, sharpModel, TOP_K } from './requests';

await startBackend('webgpu', { webgpuAdapter: 'opengles' });

/** Tokens and log-probs of each sequence, in request order. */
type Generated = Array<{ tokens: number[]; logProbs: number[] }>;

const strip = (results: Awaited<ReturnType<typeof generate>>): Generated => results.map(({ tokens, logProbs }) => ({ tokens, logProbs }));

/** The forward pass's log-softmax at every generated position of each sequence: what generation should have seen. */
async function forwardLogProbs(
  model: Qwen2Model,
  prompts: readonly number[][],
  generated: Generated,
): Promise<Array<{ argmax: number[]; logProbs: number[] }>> {
  const out = [];
  for (const [i, prompt] of prompts.entries()) {
    const { tokens } = generated[i]!;
    const ids = [...prompt, ...tokens.slice(0, -1)];
    const logSoftmax = tf.tidy(() => {
      const { hidden, present } = model.forward(tf.tensor2d(ids, [1, ids.length], 'int32'));
      tf.dispose(present.flatMap((p) => [p.k, p.v]));
      return tf.logSoftmax(model.logits(hidden));
    });
    const values = (await logSoftmax.data()) as Float32Array;
    logSoftmax.dispose();
    const vocab = model.config.vocab_size;
    const rows = tokens.map((_, s) => values.subarray((prompt.length - 1 + s) * vocab, (prompt.length + s) * vocab));
    out.push({
      argmax: rows.map((row) => row.indexOf(Math.max(...row))),
      logProbs: rows.map((row, s) => row[tokens[s]!]!),
    });
  }
  return out;
}

function fixtureModel(name: string): Qwen2Model {
  const folder = join(import.meta.dir, '../../fixtures', name);
  const config = readModelConfig(folder);
  return Qwen2Model.fromWeights(config, checkWeights(readCheckpoint(folder).tensors, config, name));
}

const tensorsBefore = tf.memory().numTensors;
const kernels = await onGpu();

// a batch the device rejects (here: it binds a destroyed buffer) is recorded once more; rejected twice, it fails with one line
const runner = new WgslRunner(4);
const [gate, up, gone] = [runner.storage(64), runner.storage(64), runner.storage(64)];
runner.destroy(gone);
let attempts = 0;
await runner.batch(() => {
  attempts++;
  runner.run(SWIGLU, [attempts === 1 ? gone : gate, up], [16], [1]);
});
let failure = '';
await runner
  .batch(() => runner.run(SWIGLU, [gone, up], [16], [1]))
  .catch((error: Error) => {
    failure = error.message;
  });
runner.dispose();
const retry = { attempts, failure };

const model = sharpModel(3);
const greedy = strip(await generate(model, requests(PROMPTS, 'greedy')));
const greedyForward = await forwardLogProbs(model, PROMPTS, greedy);
const sampled = strip(await generate(model, requests(PROMPTS, 'sampled')));
const topK = strip(await generate(model, requests(PROMPTS, 'topK')));
const alone = [];
for (const [i] of PROMPTS.entries()) alone.push(strip(await generate(model, requests(PROMPTS, 'sampled').slice(i, i + 1)))[0]!);

// 56 prompts of 40 ids: 2,240 rows, more than one pass of the prefill (2,048), one prompt split across passes
const many = Array.from({ length: 56 }, (_, i) => Array.from({ length: 40 }, (_, t) => (i * 7 + t * 3) % 37));
const manyTogether = strip(await generate(model, requests(many, 'sampled', 4)));
const manyAlone = [];
for (const i of [0, 51, 55]) manyAlone.push(strip(await generate(model, requests(many, 'sampled', 4).slice(i, i + 1)))[0]!);

// a sequence that joins a running batch after five steps, and one that leaves it early
const batch = new DecodeBatch(model);
const [first, second] = requests(PROMPTS, 'sampled');
const staggered: Record<string, Generated[number]> = {};
const keep = (results: Awaited<ReturnType<DecodeBatch['step']>>) => {
  for (const r of results) staggered[String(r.id)] = { tokens: r.tokens, logProbs: r.logProbs };
};
keep(await batch.join([first!, requests(PROMPTS, 'sampled')[2]!]));
for (let step = 0; step < 5; step++) keep(await batch.step());
batch.leave(2);
keep(await batch.join([second!]));
while (batch.size > 0) keep(await batch.step());
batch.dispose();

// a cached prefix: the first prompt's cache, extended by more ids, against the whole prompt fed at once
const [withCache] = await generate(model, [{ ...requests(PROMPTS, 'greedy')[0]!, keepCache: true }]);
const extended = [...withCache!.cache!.ids, withCache!.tokens.at(-1)!, 3, 9];
const [reused] = await generate(model, [{ ...requests([extended], 'greedy')[0]!, past: { length: withCache!.cache!.ids.length, kv: withCache!.cache!.kv } }]);
disposeKv(withCache!.cache!.kv);
const [whole] = await generate(model, requests([extended], 'greedy'));

// buffers and tensors over 100 decode steps of a batch that sequences keep joining and leaving
const counts: Array<{ step: number; tensors: number; tfjsBuffers: number; gpu: { buffers: number; bytes: number } }> = [];
const running = new DecodeBatch(model);
const backend = tf.backend() as unknown as { bufferManager: { getNumUsedBuffers(): number } };
let next = 0;
const newcomer = (): GenerationRequest => ({ ...requests(PROMPTS, 'sampled', 7)[next % PROMPTS.length]!, id: next++, rng: Rng.fromSeed(5, next) });
await running.join([newcomer(), newcomer(), newcomer()]);
for (let step = 1; step <= 100; step++) {
  const done = await running.step();
  if (done.length > 0 || running.size < 3) await running.join(Array.from({ length: 3 - running.size }, newcomer));
  if (step === 10 || step === 100)
    counts.push({ step, tensors: tf.memory().numTensors, tfjsBuffers: backend.bufferManager.getNumUsedBuffers(), gpu: running.gpuMemory });
}
running.dispose();

// LoRA adapters on every projection (B made non-zero), a wide query group, Qwen3's q/k norms, and Llama's tied head
const lora = sharpModel(4);
const spec = { rank: 4, alpha: 8, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
const all = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const;
addAdapters(
  lora,
  spec,
  newAdapters(
    spec,
    lora.blocks.map(() => [...all]),
    lora,
    9,
  ),
);
lora.adapters.forEach((adapters, layer) => {
  for (const p of all) tf.tidy(() => adapters[p]!.b.assign(tf.randomNormal(adapters[p]!.b.shape, 0, 0.2, 'float32', layer * 10 + all.indexOf(p))));
});
const families: Record<string, { generated: Generated; forward: Awaited<ReturnType<typeof forwardLogProbs>> }> = {};
for (const [name, m] of [
  ['lora', lora],
  // eight query heads on one kv head: an attention workgroup serves all eight
  ['group8', sharpModel(5, tinyConfig({ hidden_size: 32, num_attention_heads: 8, num_key_value_heads: 1 }))],
  ['qwen3', fixtureModel('qwen3_tiny')],
  ['llama', fixtureModel('llama_tiny')],
] as const) {
  const prompts = PROMPTS.map((p) => p.map((id) => id % m.config.vocab_size));
  const generated = strip(await generate(m, requests(prompts, 'greedy')));
  families[name] = { generated, forward: await forwardLogProbs(m, prompts, generated) };
  m.dispose();
}
model.dispose();

// written whole before exiting: process.exit would cut a long line short in the pipe
await Bun.write(
  Bun.stdout,
  `${JSON.stringify({
    kernels,
    retry,
    greedy,
    greedyForward,
    sampled,
    topK,
    alone,
    manyTogether: [0, 51, 55].map((i) => manyTogether[i]),
    manyAlone,
    staggered,
    reused: reused!.tokens,
    whole: whole!.tokens,
    reusedLogProbs: reused!.logProbs,
    wholeLogProbs: whole!.logProbs,
    counts,
    families,
    leftTensors: tf.memory().numTensors - tensorsBefore,
    settings: { SAMPLED, TOP_K },
  })}\n`,
);
process.exit(0);
