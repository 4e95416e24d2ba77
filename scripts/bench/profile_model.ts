/**
 * Where a training step and a decode step spend their time, by tfjs kernel, on the chosen
 * backend (default wasm): `bun scripts/bench/profile_model.ts [wasm|cpu|webgpu]`. Prints the top
 * kernels. On webgpu, kernel times need the adapter's timestamp-query feature (a GPU's Vulkan
 * driver has it; llvmpipe does not: there only the counts mean something), and generation runs
 * agentic's own WGSL programs, not tfjs kernels: its decode step is wall time only.
 */
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { DecodeBatch } from '../../src/model/generate';
import { peerModel } from './peer_model';

const backend = (process.argv[2] ?? 'wasm') as 'wasm' | 'cpu' | 'webgpu';
const started = await startBackend(backend);
if (backend === 'webgpu' && !started.adapter?.features.includes('timestamp-query')) {
  console.log(`${started.detail}: no timestamp-query, so kernel times read 0; the counts stand`);
}
const { model, trainStep: step, generationRequests } = peerModel();

function report(title: string, kernels: Array<{ name: string; kernelTimeMs: number | { error: string }; inputShapes: number[][] }>, wallMs: number) {
  const byName = new Map<string, { ms: number; n: number }>();
  for (const k of kernels) {
    const ms = typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
    const key = k.name;
    const e = byName.get(key) ?? { ms: 0, n: 0 };
    e.ms += ms;
    e.n += 1;
    byName.set(key, e);
  }
  if (process.env.PROFILE_SHAPES) {
    const shapes = new Map<string, { ms: number; n: number }>();
    for (const k of kernels) {
      if (k.name !== 'BatchMatMul') continue;
      const key = JSON.stringify(k.inputShapes);
      const e = shapes.get(key) ?? { ms: 0, n: 0 };
      e.ms += typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
      e.n += 1;
      shapes.set(key, e);
    }
    for (const [key, e] of [...shapes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14))
      console.log(`  matMul ${key.padEnd(34)} ${e.ms.toFixed(1).padStart(8)} ms ${e.n} calls`);
  }
  const total = [...byName.values()].reduce((s, e) => s + e.ms, 0);
  console.log(`\n${title}: wall ${wallMs.toFixed(0)} ms, kernels ${total.toFixed(0)} ms in ${kernels.length} calls`);
  for (const [name, e] of [...byName].sort((a, b) => b[1].ms - a[1].ms).slice(0, 18)) {
    console.log(`  ${name.padEnd(22)} ${e.ms.toFixed(1).padStart(8)} ms  ${String(e.n).padStart(5)} calls`);
  }
}

await step();
let t0 = performance.now();
await step();
console.log(`train step wall (unprofiled): ${(performance.now() - t0).toFixed(0)} ms`);
t0 = performance.now();
const info = await tf.profile(step);
report('train step', info.kernels as never, performance.now() - t0);

const batch = new DecodeBatch(model);
await batch.join(generationRequests());
for (let i = 0; i < 3; i++) await batch.step();
t0 = performance.now();
for (let i = 0; i < 10; i++) await batch.step();
console.log(`\ndecode step wall (unprofiled): ${((performance.now() - t0) / 10).toFixed(1)} ms`);
t0 = performance.now();
const dinfo = await tf.profile(async () => {
  await batch.step();
});
report('decode step', dinfo.kernels as never, performance.now() - t0);
batch.dispose();
