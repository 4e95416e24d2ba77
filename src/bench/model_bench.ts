/**
 * The model-engine benchmark: training tokens/s (forward + backward + AdamW) and generated
 * tokens/s with the KV cache, for the same Qwen2 shape as ../shared/bench/torch_peer.py, plus
 * achieved GFLOP/s and this backend's 1024^2 sgemm rate as the ceiling to compare against.
 */
import { Rng } from '../engine/rng';
import { tf } from '../engine/tf';
import { modelConfig } from '../model/config';
import { generate, type GenerationRequest } from '../model/generate';
import { AdamW, disposeGradients, lossAndGradients } from '../model/optim';
import { Qwen2Model } from '../model/qwen2';

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

export interface BenchResult {
  backend: string;
  params: number;
  train_tok_s: number;
  train_step_ms: number;
  gen_tok_s: number;
  gen_ms: number;
  train_gflops: number;
  sgemm_gflops: number;
  train_mfu: number;
  shape: BenchShape;
}

function randomIds(rng: Rng, count: number, vocab: number): Int32Array {
  return Int32Array.from({ length: count }, () => rng.int(vocab));
}

export async function runModelBench(shape: BenchShape, onProgress: (line: string) => void = () => {}): Promise<BenchResult> {
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
  const model = Qwen2Model.random(config, { seed: 0 });
  const optimizer = new AdamW(model.variables, { weightDecay: 0.01 });
  const rng = Rng.fromSeed(0, 'bench');
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
          const { hidden } = model.forward(ids);
          return model.tokenStats(hidden, targets).logProbs.mean().neg() as tf.Scalar;
        }),
      model.variables,
    );
    optimizer.apply(gradients, 1e-4);
    await loss.data();
    loss.dispose();
    disposeGradients(gradients);
  };

  const tensorsBefore = tf.memory().numTensors;
  await trainStep();
  const trainStart = performance.now();
  for (let i = 0; i < shape.steps; i++) {
    await trainStep();
    onProgress(`train step ${i + 1}/${shape.steps}`);
  }
  const trainMs = (performance.now() - trainStart) / shape.steps;
  if (tf.memory().numTensors !== tensorsBefore) throw new Error(`a train step leaked ${tf.memory().numTensors - tensorsBefore} tensors`);
  ids.dispose();

  const sampling = { temperature: 1, topP: 1, topK: 0, doSample: true };
  const requests = (): GenerationRequest[] =>
    Array.from({ length: shape.genBatch }, (_, i) => ({
      id: i,
      promptIds: Array.from(randomIds(rng, shape.prompt, shape.vocab)),
      sampling,
      maxNewTokens: shape.newTokens,
      rng: Rng.fromSeed(i, 'bench-sample'),
    }));
  await generate(model, requests());
  const genStart = performance.now();
  await generate(model, requests());
  const genMs = performance.now() - genStart;
  onProgress('generation done');

  const sgemm = await measureSgemm();
  optimizer.dispose();
  const params = model.numParameters;
  model.dispose();

  const trainTokS = (shape.batch * length) / (trainMs / 1000);
  // The peer's count: 6 FLOPs per parameter per token, plus attention.
  const flopsPerToken = 6 * params + 12 * shape.layers * shape.hidden * shape.seq;
  const trainGflops = (trainTokS * flopsPerToken) / 1e9;
  return {
    backend: tf.getBackend(),
    params,
    train_tok_s: round(trainTokS),
    train_step_ms: round(trainMs),
    gen_tok_s: round((shape.genBatch * shape.newTokens) / (genMs / 1000)),
    gen_ms: round(genMs),
    train_gflops: round(trainGflops),
    sgemm_gflops: round(sgemm),
    train_mfu: Math.round((trainGflops / sgemm) * 1e4) / 1e4,
    shape,
  };
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
