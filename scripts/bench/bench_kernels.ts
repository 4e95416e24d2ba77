/**
 * Matmul speed on the wasm backend: tfjs's stock kernels against ours (src/engine/kernels), with
 * 1 and 2 threads, for the shapes a 4-layer, hidden-128 model meets at batch 16 x seq 256, plus
 * a 1024^2 sgemm. Prints GFLOP/s.
 *
 *   bun scripts/bench/bench_kernels.ts [--threads 1,2] [--seconds 0.6]
 *
 * Each thread count runs in its own process (a wasm backend's threads are fixed at start).
 */
import * as tf from '@tensorflow/tfjs-core';
import { getThreadsCount } from '@tensorflow/tfjs-backend-wasm';
import { startBackend } from '../../src/engine/backend';
import { installWasmKernels, uninstallWasmKernels } from '../../src/engine/kernels';

interface Shape {
  name: string;
  a: number[];
  b: number[];
  transposeA?: boolean;
  transposeB?: boolean;
}

const SHAPES: Shape[] = [
  { name: 'linear fwd   x[4096,128] @ W[128,384]', a: [4096, 128], b: [128, 384] },
  { name: 'linear dx    dy[4096,384] @ W^T', a: [4096, 384], b: [128, 384], transposeB: true },
  { name: 'linear dW    x^T @ dy[4096,384]', a: [4096, 128], b: [4096, 384], transposeA: true },
  { name: 'attn batched [64,256,32] @ [64,32,256]', a: [64, 256, 32], b: [64, 32, 256] },
  { name: 'attn q kT    [64,256,32] @ [64,256,32]^T', a: [64, 256, 32], b: [64, 256, 32], transposeB: true },
  { name: 'attn dV      p^T @ dO [64,256,256]^T @ [64,256,32]', a: [64, 256, 256], b: [64, 256, 32], transposeA: true },
  { name: 'sgemm        [1024,1024] @ [1024,1024]', a: [1024, 1024], b: [1024, 1024] },
];

function flops(s: Shape): number {
  const batch = s.a.length === 3 ? s.a[0]! : 1;
  const m = s.transposeA ? s.a.at(-1)! : s.a.at(-2)!;
  const k = s.transposeA ? s.a.at(-2)! : s.a.at(-1)!;
  const n = s.transposeB ? s.b.at(-2)! : s.b.at(-1)!;
  return 2 * batch * m * k * n;
}

/** GFLOP/s of one shape: one warm-up call, then calls until `seconds` have passed. */
function measure(s: Shape, seconds: number): number {
  const a = tf.randomNormal(s.a, 0, 1, 'float32', 1);
  const b = tf.randomNormal(s.b, 0, 1, 'float32', 2);
  const once = () => {
    const c = tf.matMul(a, b, s.transposeA, s.transposeB);
    c.dataSync();
    c.dispose();
  };
  once();
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000 || calls < 2) {
    once();
    calls++;
  }
  const elapsed = (performance.now() - start) / 1000;
  tf.dispose([a, b]);
  return (flops(s) * calls) / elapsed / 1e9;
}

async function child(seconds: number): Promise<void> {
  await startBackend('wasm');
  const threads = getThreadsCount();
  for (const s of SHAPES) {
    uninstallWasmKernels();
    const stock = measure(s, seconds);
    installWasmKernels();
    const ours = measure(s, seconds);
    console.log(JSON.stringify({ threads, shape: s.name, stock, ours }));
  }
}

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1]!;
}

const seconds = Number(option('--seconds', '0.6'));
if (process.argv.includes('--child')) {
  await child(seconds);
} else {
  const counts = option('--threads', '1,2').split(',').map(Number);
  const rows: Array<{ threads: number; shape: string; stock: number; ours: number }> = [];
  for (const threads of counts) {
    const run = Bun.spawnSync([process.execPath, import.meta.path, '--child', '--seconds', String(seconds)], {
      env: { ...process.env, AGENTIC_WASM_THREADS: String(threads) },
      stdout: 'pipe',
      stderr: 'inherit',
    });
    if (run.exitCode !== 0) process.exit(run.exitCode ?? 1);
    for (const line of run.stdout.toString().trim().split('\n')) rows.push(JSON.parse(line));
  }
  const width = Math.max(...SHAPES.map((s) => s.name.length));
  console.log(`${'shape'.padEnd(width)}  threads  stock GFLOP/s  ours GFLOP/s  speed-up`);
  for (const r of rows) {
    console.log(
      `${r.shape.padEnd(width)}  ${String(r.threads).padStart(7)}  ${r.stock.toFixed(1).padStart(12)}  ${r.ours.toFixed(1).padStart(12)}  ${(r.ours / r.stock).toFixed(1).padStart(7)}x`,
    );
  }
}
