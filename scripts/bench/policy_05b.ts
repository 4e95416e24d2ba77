/**
 * A 0.5B-shaped policy on this machine: Qwen2.5-0.5B's config (hidden 896, 24 layers, 14 heads,
 * 2 kv heads, ffn 4864, vocabulary 151936, tied embeddings), random weights. Measures a training
 * step (forward, backward, AdamW) with full fine-tuning and with LoRA, each with and without
 * gradient checkpointing; generation; and what holding weights in bf16 would cost per use.
 *
 *   bun scripts/bench/policy_05b.ts [--out FILE] [--cases a,b] [--batch 1] [--seq 128] [--steps 2] [--backend wasm|cpu]
 *
 * Each case runs in a fresh process (so its peak memory is its own) and prints one JSON line;
 * the driver writes them all to FILE (default output/bench/policy_05b.json). Memory: the process's
 * peak RSS, the tfjs wasm heap (which only grows: its high-water mark) and tfjs's live bytes after
 * the step. Cases: lora and lora_keep (activations kept instead of recomputed), full and full_keep
 * (every weight: its weights, gradients and AdamW moments are 7.4 GiB, beyond the wasm heap's
 * 4 GiB, and the case says how it failed), generate, bf16. A case that dies is recorded with its
 * last error line.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describeBackend, startBackend } from '../../src/engine/backend';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { modelConfig } from '../../src/model/config';
import { generate, type GenerationRequest } from '../../src/model/generate';
import { expectedWeightShapes } from '../../src/model/hf_folder';
import { parseTarget } from '../../src/model/lora';
import { applyLora } from '../../src/model/lora_adapters';
import { AdamW, disposeGradients, lossAndGradients } from '../../src/model/optim';
import { Qwen2Model } from '../../src/model/qwen2';

const QWEN25_05B = {
  vocab_size: 151936,
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  max_position_embeddings: 32768,
  rope_theta: 1000000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
};

/** The parameters of that shape, counted from its tensors. */
const PARAMETERS = [...expectedWeightShapes(modelConfig(QWEN25_05B)).values()].reduce((n, shape) => n + shape.reduce((a, b) => a * b, 1), 0);

const CASES = ['lora', 'lora_keep', 'full', 'full_keep', 'generate', 'bf16'] as const;
type Case = (typeof CASES)[number];

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
}

const GIB = 1024 ** 3;
const gib = (bytes: number) => Math.round((bytes / GIB) * 100) / 100;

function memory() {
  const backend = tf.backend() as unknown as { wasm?: { HEAPU8: Uint8Array } };
  return {
    peak_rss_gib: gib(process.resourceUsage().maxRSS * 1024),
    wasm_heap_gib: backend.wasm ? gib(backend.wasm.HEAPU8.buffer.byteLength) : null,
    tfjs_live_gib: gib(tf.memory().numBytes),
  };
}

/** One train step's numbers: the first (warm-up) step and the mean of the next `steps`. */
async function trainCase(name: Case, batch: number, seq: number, steps: number) {
  const lora = name.startsWith('lora');
  const recompute = !name.endsWith('_keep');
  const config = modelConfig(QWEN25_05B);
  const model = Qwen2Model.random(config, { seed: 0 });
  if (lora) {
    const spec = { rank: 8, alpha: 16, targets: parseTarget('all-linear') };
    applyLora(model, { use: 'train', spec, folder: null, seed: 0 });
  }
  const optimizer = new AdamW(model.trainedVariables);
  const rng = Rng.fromSeed(0, 'bench');
  const ids = tf.tensor2d(
    Int32Array.from({ length: batch * seq }, () => rng.int(config.vocab_size)),
    [batch, seq],
    'int32',
  );
  const targets = Int32Array.from({ length: batch * seq }, () => rng.int(config.vocab_size));
  const step = async () => {
    const started = performance.now();
    const { loss, gradients } = lossAndGradients(
      () => tf.tidy(() => model.tokenStats(model.forward(ids, { recompute }).hidden, targets).logProbs.mean().neg() as tf.Scalar),
      model.trainedVariables,
    );
    optimizer.apply(gradients, 1e-5);
    await loss.data();
    tf.dispose([loss]);
    disposeGradients(gradients);
    return (performance.now() - started) / 1000;
  };
  const first = await step();
  let total = 0;
  for (let i = 0; i < steps; i++) total += await step();
  const seconds = steps > 0 ? total / steps : first;
  const result = {
    case: name,
    backend: tf.getBackend(),
    lora: lora ? { rank: 8, alpha: 16, target: 'all-linear' } : null,
    gradient_checkpointing: recompute,
    params: model.numParameters,
    trained_params: model.trainedVariables.reduce((n, v) => n + v.size, 0),
    batch,
    seq,
    first_step_s: Math.round(first * 100) / 100,
    step_s: Math.round(seconds * 100) / 100,
    train_tok_s: Math.round(((batch * seq) / seconds) * 10) / 10,
    steps_timed: steps,
    ...memory(),
  };
  tf.dispose(ids);
  optimizer.dispose();
  model.dispose();
  return result;
}

async function generateCase(sequences: number, prompt: number, newTokens: number) {
  const config = modelConfig(QWEN25_05B);
  const model = Qwen2Model.random(config, { seed: 0 });
  const rng = Rng.fromSeed(0, 'bench-gen');
  const requests = (): GenerationRequest[] =>
    Array.from({ length: sequences }, (_, i) => ({
      id: i,
      promptIds: Array.from({ length: prompt }, () => rng.int(config.vocab_size)),
      sampling: { temperature: 1, topP: 1, topK: 0, doSample: true },
      maxNewTokens: newTokens,
      rng: Rng.fromSeed(i, 'bench-sample'),
    }));
  await generate(
    model,
    requests()
      .slice(0, 1)
      .map((r) => ({ ...r, maxNewTokens: 2 })),
  );
  const started = performance.now();
  const results = await generate(model, requests());
  const seconds = (performance.now() - started) / 1000;
  const generated = results.reduce((n, r) => n + r.tokens.length, 0);
  model.dispose();
  return {
    case: 'generate',
    backend: tf.getBackend(),
    sequences,
    prompt,
    new_tokens: newTokens,
    generated,
    seconds: Math.round(seconds * 100) / 100,
    gen_tok_s: Math.round((generated / seconds) * 10) / 10,
    ...memory(),
  };
}

/**
 * Holding a frozen weight in bf16 on a backend that computes in float32 means widening it before
 * every use. For the largest projection ([896, 4864], gate/up): widening on the host (16 bits
 * shifted into a float32) and uploading, against the matMul that uses it, in a training pass
 * (256 rows) and a decode step (16 rows).
 */
async function bf16Case() {
  const [inputs, outputs] = [896, 4864];
  const rng = Rng.fromSeed(0, 'bf16');
  const weights = Float32Array.from({ length: inputs * outputs }, () => rng.normal() * 0.02);
  const halves = new Uint16Array(weights.length);
  const bits = new Uint32Array(weights.buffer);
  for (let i = 0; i < halves.length; i++) halves[i] = bits[i]! >>> 16;
  const widen = () => {
    const wide = new Uint32Array(halves.length);
    for (let i = 0; i < halves.length; i++) wide[i] = halves[i]! << 16;
    return tf.tensor2d(new Float32Array(wide.buffer), [inputs, outputs]);
  };
  const time = async (fn: () => tf.Tensor, runs: number) => {
    const warm = fn();
    await warm.data();
    warm.dispose();
    const started = performance.now();
    let last: tf.Tensor | null = null;
    for (let i = 0; i < runs; i++) {
      last?.dispose();
      last = fn();
    }
    await last!.data();
    last!.dispose();
    return (performance.now() - started) / runs;
  };
  const w = tf.tensor2d(weights, [inputs, outputs]);
  const rows = (n: number) => tf.randomNormal([n, inputs], 0, 1, 'float32', n);
  const [train, decode] = [rows(256), rows(16)];
  const widenMs = await time(widen, 10);
  const trainMs = await time(() => tf.matMul(train, w), 10);
  const decodeMs = await time(() => tf.matMul(decode, w), 20);
  tf.dispose([w, train, decode]);
  return {
    case: 'bf16',
    backend: tf.getBackend(),
    matrix: [inputs, outputs],
    widen_upload_ms: Math.round(widenMs * 100) / 100,
    matmul_256_rows_ms: Math.round(trainMs * 100) / 100,
    matmul_16_rows_ms: Math.round(decodeMs * 100) / 100,
    weights_gib_f32: gib(PARAMETERS * 4),
    weights_gib_bf16: gib(PARAMETERS * 2),
  };
}

async function runCase(name: Case): Promise<Record<string, unknown>> {
  // 1 x 128: kept activations of 2 x 128 fill the 4 GiB wasm heap (the step never ends)
  const batch = Number(flag('batch', '1'));
  const seq = Number(flag('seq', '128'));
  const engine = describeBackend(await startBackend(flag('backend', 'wasm') as 'wasm' | 'cpu'));
  if (name === 'generate') return { ...(await generateCase(Number(flag('sequences', '8')), 32, Number(flag('new', '32')))), engine };
  if (name === 'bf16') return { ...(await bf16Case()), engine };
  return { ...(await trainCase(name, batch, seq, Number(flag('steps', '2')))), engine };
}

const only = flag('case', '');
if (only) {
  console.log(JSON.stringify(await runCase(only as Case)));
  process.exit(0);
}
const chosen = flag('cases', CASES.join(',')).split(',') as Case[];
const out = resolve(flag('out', 'output/bench/policy_05b.json'));
// the shape flags go to every case's process
const passed: string[] = [];
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--cases' || process.argv[i] === '--out') i++;
  else passed.push(process.argv[i]!);
}
const results: Array<Record<string, unknown>> = [];
for (const name of chosen) {
  const child = Bun.spawn([process.execPath, import.meta.path, '--case', name, ...passed], { stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  const line = stdout.trim().split('\n').at(-1) ?? '';
  // a failed case says why: the last error line it printed (a wasm heap that ran out, say)
  const why = stderr.split('\n').findLast((l) => l.includes('Error')) ?? stderr.trim().split('\n').at(-1) ?? '';
  const result = code === 0 && line.startsWith('{') ? JSON.parse(line) : { case: name, failed: `exit ${code}: ${why.trim().slice(0, 300)}` };
  console.error(JSON.stringify(result));
  results.push(result);
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ shape: QWEN25_05B, machine: `${navigator.hardwareConcurrency} cores`, results }, null, 2)}\n`);
console.error(`wrote ${out}`);
