/**
 * A training step and a generation with the host kernels (src/engine/kernels/attention.ts's
 * hostKernels) and without, alternated in one process so a busy machine hits both alike:
 * `bun scripts/bench/ab_step.ts [rounds]`. Prints the median ms of each.
 */
import { startBackend } from '../../src/engine/backend';
import { hostKernels } from '../../src/engine/kernels/attention';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { modelConfig } from '../../src/model/config';
import { generate } from '../../src/model/generate';
import { AdamW, disposeGradients, lossAndGradients } from '../../src/model/optim';
import { Qwen2Model } from '../../src/model/qwen2';

await startBackend('wasm');
const rounds = Number(process.argv[2] ?? 5);
const config = modelConfig({
  vocab_size: 512,
  hidden_size: 128,
  intermediate_size: 384,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
  max_position_embeddings: 512,
});
const model = Qwen2Model.random(config, { seed: 0 });
const opt = new AdamW(model.variables);
const rng = Rng.fromSeed(0);
const [B, T] = [16, 255];
const ids = tf.tensor2d(
  Int32Array.from({ length: B * T }, () => rng.int(512)),
  [B, T],
  'int32',
);
const targets = Int32Array.from({ length: B * T }, () => rng.int(512));

async function train() {
  const { loss, gradients } = lossAndGradients(
    () => tf.tidy(() => model.tokenStats(model.forward(ids).hidden, targets).logProbs.mean().neg() as tf.Scalar),
    model.variables,
  );
  opt.apply(gradients, 1e-4);
  await loss.data();
  loss.dispose();
  disposeGradients(gradients);
}

async function gen() {
  await generate(
    model,
    Array.from({ length: 32 }, (_, i) => ({
      id: i,
      promptIds: Array.from({ length: 128 }, () => rng.int(512)),
      sampling: { temperature: 1, topP: 1, topK: 0, doSample: true },
      maxNewTokens: 64,
      rng: Rng.fromSeed(i),
    })),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times: Record<string, number[]> = { trainOff: [], trainOn: [], genOff: [], genOn: [] };
const cpu: Record<string, number[]> = { trainOff: [], trainOn: [], genOff: [], genOn: [] };
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const timed = async (key: string, work: () => Promise<void>) => {
  const [start, cpuStart] = [performance.now(), cpuMs()];
  await work();
  times[key]!.push(performance.now() - start);
  cpu[key]!.push(cpuMs() - cpuStart);
};
for (const on of [false, true]) {
  hostKernels.enabled = on;
  await train();
  await gen();
}
for (let r = 0; r < rounds; r++) {
  for (const on of [false, true]) {
    hostKernels.enabled = on;
    await timed(on ? 'trainOn' : 'trainOff', train);
  }
  for (const on of [false, true]) {
    hostKernels.enabled = on;
    await timed(on ? 'genOn' : 'genOff', gen);
  }
}
console.log('wall ms', Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v))])));
console.log('cpu ms', Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round(median(v))])));
console.log(JSON.stringify(Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map(Math.round)]))));
