/**
 * The model-engine benchmark: training tokens/s (forward + backward + AdamW, all weights or LoRA
 * adapters) and generated tokens/s with the KV cache, at the shape of ../shared/bench/torch_peer.py
 * or Qwen2.5-0.5B's; achieved GFLOP/s against this backend's 1024^2 sgemm rate and against the
 * card's datasheet peaks (./gpu_peaks.ts); and the most memory tfjs held at once.
 */
import type { AdapterDescription } from '../engine/webgpu';
import { Rng } from '../engine/rng';
import { tf } from '../engine/tf';
import { AgenticError } from '../errors';
import { type ModelConfig, modelConfig } from '../model/config';
import { DecodeBatch, type GenerationRequest } from '../model/generate';
import { expectedWeightShapes } from '../model/hf_folder';
import { parseTarget, type LoraSpec } from '../model/lora';
import { applyLora } from '../model/lora_adapters';
import { AdamW, disposeGradients, lossAndGradients } from '../model/optim';
import { Qwen2Model } from '../model/qwen2';
import type { GpuPeak } from './gpu_peaks';

export interface BenchShape {
  hidden: number;
  layers: number;
  heads: number;
  kv: number;
  ffn: number;
  vocab: number;
  batch: number;
  seq: number;
  genBatch: number;
  prompt: number;
  newTokens: number;
  steps: number;
}

export const PEER_SHAPE: BenchShape = {
  hidden: 128,
  layers: 4,
  heads: 4,
  kv: 2,
  ffn: 384,
  vocab: 512,
  batch: 16,
  seq: 256,
  genBatch: 32,
  prompt: 128,
  newTokens: 64,
  steps: 5,
};

/** A shape small enough to check the benchmark itself in seconds (`agentic bench --quick`). */
export const QUICK_SHAPE: BenchShape = {
  hidden: 32,
  layers: 1,
  heads: 2,
  kv: 1,
  ffn: 64,
  vocab: 64,
  batch: 2,
  seq: 16,
  genBatch: 3,
  prompt: 5,
  newTokens: 4,
  steps: 2,
};

/**
 * Qwen2.5-0.5B's shape (head dim 64, tied embeddings), with random weights: a training batch of
 * 4 x 512 and 16 prompts of 128 ids that each get 64 new tokens, sizes a GPU runs in seconds.
 */
export const QWEN25_05B_SHAPE: BenchShape = {
  hidden: 896,
  layers: 24,
  heads: 14,
  kv: 2,
  ffn: 4864,
  vocab: 151936,
  batch: 4,
  seq: 512,
  genBatch: 16,
  prompt: 128,
  newTokens: 64,
  steps: 5,
};

/** `agentic bench --model`: nano is the peer's shape (the default), 0.5b Qwen2.5-0.5B's. */
export const MODEL_SHAPES = { nano: PEER_SHAPE, '0.5b': QWEN25_05B_SHAPE } as const;

export interface BenchOptions {
  /** LoRA's rank on every linear projection (alpha 2 x rank, as the trainer's default); null trains every weight. */
  lora: number | null;
  /** Gradient checkpointing: each block's activations recomputed in the backward pass. */
  recompute: boolean;
  /** The card's peaks to compute MFU against; null leaves those fields null. */
  peak: GpuPeak | null;
  /** webgpu's adapter: its limits decide whether the shape's largest tensor fits one buffer binding. */
  adapter?: AdapterDescription;
}

/** What tfjs and its backend report; BenchMemory adds generation's own buffers. */
type TfjsMemory = Omit<BenchMemory, 'generation_gpu_bytes'>;

export interface BenchMemory {
  /**
   * The most bytes of tensors tfjs counted at once, seen after every kernel of the untimed
   * warm-up step and generation (the timed ones are the same shapes). tfjs counts each
   * tensor, so a reshape sharing its input's buffer counts again: an upper bound of what was
   * allocated, which the backends' own figures below are.
   */
  tfjs_peak_bytes: number;
  /** webgpu: the most bytes of GPU buffers in use at once, and what its buffer pool holds at the end. */
  gpu_peak_bytes: number | null;
  gpu_allocated_bytes: number | null;
  /** wasm: its heap, which only grows (its high-water mark). */
  wasm_heap_bytes: number | null;
  /** webgpu: the most bytes generation's own buffers held (the KV cache's pages, the workspace), beside tfjs's. */
  generation_gpu_bytes: number | null;
}

export interface BenchResult {
  backend: string;
  params: number;
  trained_params: number;
  lora: { rank: number; alpha: number; target: 'all-linear' } | null;
  recompute: boolean;
  train_tok_s: number;
  train_step_ms: number;
  gen_tok_s: number;
  gen_ms: number;
  /** Model FLOPs of a trained token: 6 per weight (4 per frozen one under LoRA: no weight gradient) plus attention; recomputation not counted. */
  train_flops_per_token: number;
  train_gflops: number;
  /** 2 FLOPs per weight per generated token (the prompts' prefill is in the time, not in the count). */
  gen_gflops: number;
  sgemm_gflops: number;
  /** Against the sgemm rate above: how close to this backend's own matmul ceiling. */
  train_mfu: number;
  peak: GpuPeak | null;
  train_mfu_fp32: number | null;
  train_mfu_fp16: number | null;
  gen_mfu_fp32: number | null;
  gen_mfu_fp16: number | null;
  memory: BenchMemory;
  shape: BenchShape;
}

/** The wasm backend addresses 32 bits: every tensor of a run lives in one heap of at most 4 GiB. */
const WASM_HEAP_BYTES = 4 * 1024 ** 3;
const GIB = 1024 ** 3;

/**
 * Refuses, before any weight is made, a shape the backend cannot hold: on wasm, weights (with
 * gradients and AdamW's two moments when all train) beyond the heap; on webgpu, a weight larger
 * than one storage buffer binding.
 */
function checkFits(config: ModelConfig, options: BenchOptions, backend: string): void {
  const shapes = [...expectedWeightShapes(config).values()].map((shape) => shape.reduce((a, b) => a * b, 1));
  const params = shapes.reduce((a, b) => a + b, 0);
  if (backend === 'wasm') {
    const bytes = params * 4 * (options.lora === null ? 4 : 1);
    if (bytes > WASM_HEAP_BYTES) {
      const what = options.lora === null ? 'weights, gradients and AdamW moments' : 'weights';
      throw new AgenticError(
        `bench: ${(params / 1e6).toFixed(0)}M parameters need ${(bytes / GIB).toFixed(1)} GiB for their ${what}, beyond the wasm heap's 4 GiB; use --lora <rank>, or --backend webgpu`,
      );
    }
  }
  const binding = options.adapter?.limits.maxStorageBufferBindingSize;
  const largest = Math.max(...shapes) * 4;
  if (binding !== undefined && largest > binding) {
    throw new AgenticError(
      `bench: the largest weight (${(largest / 2 ** 20).toFixed(0)} MiB) exceeds this adapter's maxStorageBufferBindingSize (${(binding / 2 ** 20).toFixed(0)} MiB); use a smaller --model`,
    );
  }
}

interface GpuMemoryInfo extends tf.MemoryInfo {
  numBytesInGPU?: number;
  numBytesAllocatedInGPU?: number;
}

/**
 * Watches tfjs's memory after every kernel (the engine's runKernel, through which every op and
 * gradient passes) while `during` runs: a step's peak is mid-backward, gone by the time the step
 * returns. Only untimed warm-ups are watched, so the timed steps carry no sampling.
 */
function memoryWatch(): { during: <T>(run: () => Promise<T>) => Promise<T>; read: () => TfjsMemory } {
  const engine = tf.engine() as unknown as { runKernel: (...args: unknown[]) => unknown };
  let peakBytes = 0;
  let peakGpuBytes: number | null = null;
  const sample = () => {
    const memory = tf.memory() as GpuMemoryInfo;
    peakBytes = Math.max(peakBytes, memory.numBytes);
    if (memory.numBytesInGPU !== undefined) peakGpuBytes = Math.max(peakGpuBytes ?? 0, memory.numBytesInGPU);
  };
  return {
    during: async (run) => {
      const runKernel = engine.runKernel;
      engine.runKernel = function (this: unknown, ...args: unknown[]) {
        const outputs = runKernel.apply(this, args);
        sample();
        return outputs;
      };
      try {
        return await run();
      } finally {
        // the instance's wrapper goes; the engine's own method shows through again
        delete (engine as { runKernel?: unknown }).runKernel;
      }
    },
    read: () => {
      sample();
      const memory = tf.memory() as GpuMemoryInfo;
      const heap = (tf.backend() as unknown as { wasm?: { HEAPU8: Uint8Array } }).wasm?.HEAPU8.buffer.byteLength;
      return {
        tfjs_peak_bytes: peakBytes,
        gpu_peak_bytes: peakGpuBytes,
        gpu_allocated_bytes: memory.numBytesAllocatedInGPU ?? null,
        wasm_heap_bytes: heap ?? null,
      };
    },
  };
}

function randomIds(rng: Rng, count: number, vocab: number): Int32Array {
  return Int32Array.from({ length: count }, () => rng.int(vocab));
}

export async function runModelBench(
  shape: BenchShape,
  options: BenchOptions = { lora: null, recompute: false, peak: null },
  onProgress: (line: string) => void = () => {},
): Promise<BenchResult> {
  const config = modelConfig({
    vocab_size: shape.vocab,
    hidden_size: shape.hidden,
    intermediate_size: shape.ffn,
    num_hidden_layers: shape.layers,
    num_attention_heads: shape.heads,
    num_key_value_heads: shape.kv,
    max_position_embeddings: Math.max(shape.seq, shape.prompt + shape.newTokens) + 1,
    tie_word_embeddings: true,
  });
  checkFits(config, options, tf.getBackend());
  return measure(shape, config, options, onProgress);
}

type MemoryWatch = ReturnType<typeof memoryWatch>;

async function measure(shape: BenchShape, config: ModelConfig, options: BenchOptions, onProgress: (line: string) => void): Promise<BenchResult> {
  const watch = memoryWatch();
  const model = Qwen2Model.random(config, { seed: 0 });
  const lora: LoraSpec | null = options.lora === null ? null : { rank: options.lora, alpha: 2 * options.lora, targets: parseTarget('all-linear') };
  applyLora(model, { use: 'train', spec: lora, folder: null, seed: 0 });
  const trained = model.trainedVariables;
  const optimizer = new AdamW(trained, { weightDecay: 0.01 });
  const rng = Rng.fromSeed(0, 'bench');
  const trainMs = await timeTraining(model, optimizer, { shape, recompute: options.recompute, rng, watch, onProgress });
  const generation = await timeGeneration(model, { shape, rng, watch, onProgress });

  // before the sgemm's matrices, which are not the model's
  const memory = { ...watch.read(), generation_gpu_bytes: tf.getBackend() === 'webgpu' ? generation.gpuBytes : null };
  const sgemm = await measureSgemm();
  optimizer.dispose();
  const params = model.numParameters;
  const trainedParams = trained.reduce((n, v) => n + v.size, 0);
  model.dispose();
  return benchResult({ shape, options, lora, params, trainedParams, trainMs, genMs: generation.ms, sgemm, memory });
}

interface Timing {
  shape: BenchShape;
  /** Draws the training tokens, then the prompts: one stream, in that order. */
  rng: Rng;
  watch: MemoryWatch;
  onProgress: (line: string) => void;
}

/** Milliseconds per training step (forward, backward, AdamW) on random tokens, after one watched warm-up step. */
async function timeTraining(
  model: Qwen2Model,
  optimizer: AdamW,
  { shape, recompute, rng, watch, onProgress }: Timing & { recompute: boolean },
): Promise<number> {
  const trained = model.trainedVariables;
  const tokens = randomIds(rng, shape.batch * shape.seq, shape.vocab);
  const length = shape.seq - 1;
  const inputs = new Int32Array(shape.batch * length);
  const targets = new Int32Array(shape.batch * length);
  for (let b = 0; b < shape.batch; b++) {
    inputs.set(tokens.subarray(b * shape.seq, b * shape.seq + length), b * length);
    targets.set(tokens.subarray(b * shape.seq + 1, (b + 1) * shape.seq), b * length);
  }
  const ids = tf.tensor2d(inputs, [shape.batch, length], 'int32');

  const trainStep = async () => {
    const { loss, gradients } = lossAndGradients(
      () =>
        tf.tidy(() => {
          const { hidden } = model.forward(ids, { recompute });
          return model.tokenStats(hidden, targets).logProbs.mean().neg() as tf.Scalar;
        }),
      trained,
    );
    optimizer.apply(gradients, 1e-4);
    await loss.data();
    loss.dispose();
    disposeGradients(gradients);
  };

  const tensorsBefore = tf.memory().numTensors;
  await watch.during(trainStep);
  const trainStart = performance.now();
  for (let i = 0; i < shape.steps; i++) {
    await trainStep();
    onProgress(`train step ${i + 1}/${shape.steps}`);
  }
  const trainMs = (performance.now() - trainStart) / shape.steps;
  if (tf.memory().numTensors !== tensorsBefore) throw new Error(`a train step leaked ${tf.memory().numTensors - tensorsBefore} tensors`);
  ids.dispose();
  return trainMs;
}

/** Milliseconds to generate every prompt's tokens, after one watched warm-up, and the most GPU bytes the warm-up's batch held. */
async function timeGeneration(model: Qwen2Model, { shape, rng, watch, onProgress }: Timing): Promise<{ ms: number; gpuBytes: number }> {
  const sampling = { temperature: 1, topP: 1, topK: 0, doSample: true };
  const requests = (): GenerationRequest[] =>
    Array.from({ length: shape.genBatch }, (_, i) => ({
      id: i,
      promptIds: Array.from(randomIds(rng, shape.prompt, shape.vocab)),
      sampling,
      maxNewTokens: shape.newTokens,
      rng: Rng.fromSeed(i, 'bench-sample'),
    }));
  const gpuBytes = await watch.during(() => generateAll(model, requests()));
  const genStart = performance.now();
  await generateAll(model, requests());
  const ms = performance.now() - genStart;
  onProgress('generation done');
  return { ms, gpuBytes };
}

/** The report: rates, FLOPs and MFU from the times measured. */
function benchResult(m: {
  shape: BenchShape;
  options: BenchOptions;
  lora: LoraSpec | null;
  params: number;
  trainedParams: number;
  trainMs: number;
  genMs: number;
  sgemm: number;
  memory: BenchMemory;
}): BenchResult {
  const { shape, options, params, trainedParams } = m;
  const trainTokS = (shape.batch * (shape.seq - 1)) / (m.trainMs / 1000);
  const genTokS = (shape.genBatch * shape.newTokens) / (m.genMs / 1000);
  // The peer's count: 6 FLOPs per trained parameter per token, plus attention; a frozen weight
  // still passes the gradient on to its input (4).
  const flopsPerToken = 6 * trainedParams + 4 * (params - trainedParams) + 12 * shape.layers * shape.hidden * shape.seq;
  const trainGflops = (trainTokS * flopsPerToken) / 1e9;
  const genGflops = (genTokS * 2 * params) / 1e9;
  const mfu = (gflops: number, tflops: number | null | undefined) => (tflops ? round(gflops / (tflops * 1e3)) : null);
  return {
    backend: tf.getBackend(),
    params,
    trained_params: trainedParams,
    lora: m.lora ? { rank: m.lora.rank, alpha: m.lora.alpha, target: 'all-linear' } : null,
    recompute: options.recompute,
    train_tok_s: round(trainTokS),
    train_step_ms: round(m.trainMs),
    gen_tok_s: round(genTokS),
    gen_ms: round(m.genMs),
    train_flops_per_token: flopsPerToken,
    train_gflops: round(trainGflops),
    gen_gflops: round(genGflops),
    sgemm_gflops: round(m.sgemm),
    train_mfu: ratio(trainGflops / m.sgemm),
    peak: options.peak,
    train_mfu_fp32: mfu(trainGflops, options.peak?.fp32_tflops),
    train_mfu_fp16: mfu(trainGflops, options.peak?.fp16_tflops),
    gen_mfu_fp32: mfu(genGflops, options.peak?.fp32_tflops),
    gen_mfu_fp16: mfu(genGflops, options.peak?.fp16_tflops),
    memory: m.memory,
    shape,
  };
}

/** Four decimals, as a fraction: MFU on a CPU path is small but not zero. */
function ratio(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** Generates every request to completion, as generate() does; returns the most GPU bytes the batch held (0 off webgpu). */
async function generateAll(model: Qwen2Model, requests: readonly GenerationRequest[]): Promise<number> {
  const batch = new DecodeBatch(model);
  let peak = 0;
  try {
    await batch.join(requests);
    peak = batch.gpuMemory.bytes;
    while (batch.size > 0) {
      await batch.step();
      peak = Math.max(peak, batch.gpuMemory.bytes);
    }
  } finally {
    batch.dispose();
  }
  return peak;
}

/**
 * GFLOP/s of a 1024x1024 float32 matMul on the current backend: the products back to back and
 * one read at the end (reading a 4 MB result back costs as much as a BLAS product of it).
 */
async function measureSgemm(): Promise<number> {
  const n = 1024;
  const a = tf.randomNormal([n, n], 0, 1, 'float32', 1);
  const b = tf.randomNormal([n, n], 0, 1, 'float32', 2);
  const products = async (count: number) => {
    let last: tf.Tensor | null = null;
    for (let i = 0; i < count; i++) {
      last?.dispose();
      last = tf.matMul(a, b);
    }
    await last!.data();
    last!.dispose();
  };
  await products(1);
  const runs = 5;
  const start = performance.now();
  await products(runs);
  const seconds = (performance.now() - start) / 1000;
  tf.dispose([a, b]);
  return (2 * n ** 3 * runs) / seconds / 1e9;
}

/** Three significant digits: a tiny shape's GFLOP/s must not round to 0. */
function round(x: number): number {
  return Number(x.toPrecision(3));
}
