/**
 * Our wasm kernels against tfjs's cpu backend (the reference): every rerouted matmul shape, the
 * gradients that run through them, gather's gradient (UnsortedSegmentSum), XNNPACK's cache of
 * packed operands, and tensor bookkeeping. Each case runs on cpu, then the same values on wasm.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { getThreadsCount } from '@tensorflow/tfjs-backend-wasm';
import { startBackend } from '../../src/engine/backend';
import { type Blas, findBlas } from '../../src/engine/blas';
import { blasInUse, useBlas } from '../../src/engine/kernels/matmul';
import { cgroupCpuQuota, availableCores } from '../../src/engine/cores';
import { wasmThreadsWanted } from '../../src/engine/kernels/wasm_threads';
import { adjustableSpinWasm, SPIN_BOUND_ADDRESS, spinBoundOf } from '../../src/engine/kernels/wasm_spin';
import { describeSpin, SPIN_BLAS, SPIN_XNNPACK, spinChoice } from '../../src/engine/kernels/spin_policy';
import { ConfigError } from '../../src/errors';
import { Rng } from '../../src/engine/rng';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, scratch } from '../helpers';
import { missing } from '../system_tools';

type Values = Float32Array | Int32Array;
type Case = (inputs: tf.Tensor[]) => tf.Tensor | tf.Tensor[];

function randomValues(seed: number, size: number): Float32Array {
  const rng = Rng.fromSeed(seed);
  return Float32Array.from({ length: size }, () => rng.normal());
}

/** Runs `fn` on `backend` with fresh tensors of the given values; returns its outputs' values. */
async function runOn(backend: 'cpu' | 'wasm', shapes: number[][], values: Values[], fn: Case): Promise<Float32Array[]> {
  await startBackend(backend);
  const before = tf.memory().numTensors;
  const inputs = shapes.map((shape, i) => tf.tensor(values[i]!, shape, values[i] instanceof Int32Array ? 'int32' : 'float32'));
  const outputs = tf.tidy(() => [fn(inputs)].flat());
  const data = await Promise.all(outputs.map(async (o) => Float32Array.from(await o.data())));
  tf.dispose([...inputs, ...outputs]);
  expect(tf.memory().numTensors).toBe(before);
  return data;
}

/**
 * Expects `fn` on wasm to match `reference` (default `fn`) on cpu, within 1e-4 relative to the
 * largest reference value.
 */
async function expectSameAsCpu(shapes: number[][], fn: Case, values?: Values[], reference: Case = fn): Promise<void> {
  const inputs = values ?? shapes.map((shape, i) => randomValues(100 + i, tf.util.sizeFromShape(shape)));
  const onCpu = await runOn('cpu', shapes, inputs, reference);
  const onWasm = await runOn('wasm', shapes, inputs, fn);
  expect(onWasm.length).toBe(onCpu.length);
  onCpu.forEach((ref, i) => {
    const got = onWasm[i]!;
    expect(got.length).toBe(ref.length);
    const scale = Math.max(1, ...Array.from(ref, Math.abs));
    let worst = 0;
    for (let j = 0; j < ref.length; j++) worst = Math.max(worst, Math.abs(got[j]! - ref[j]!));
    expect(worst / scale).toBeLessThanOrEqual(1e-4);
  });
}

/**
 * The output and both input gradients of a weighted sum of matMul(a, expand(b)); `expand` lets a
 * reference repeat shared heads explicitly.
 */
const matMulWithGrads =
  (transposeA: boolean, transposeB: boolean) =>
  ([a, b]: tf.Tensor[], expand: (b: tf.Tensor) => tf.Tensor = (x) => x): tf.Tensor[] => {
    const f = (x: tf.Tensor, y: tf.Tensor) => tf.matMul(x, expand(y), transposeA, transposeB);
    const product = f(a!, b!);
    const weights = tf.sin(tf.range(0, product.size).reshape(product.shape));
    const [da, db] = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(f(x, y), weights)))([a!, b!]);
    return [product, da!, db!];
  };

const transposed = (shape: number[], yes: boolean) => (yes ? [...shape.slice(0, -2), shape.at(-1)!, shape.at(-2)!] : shape);

/** The matmul paths of the wasm backend: XNNPACK (tfjs's own), and the system's BLAS when this machine has one. */
const MATMUL_PATHS = [
  { name: 'XNNPACK', blas: (): Blas | null => null },
  { name: 'BLAS', blas: (): Blas | null => findBlas('auto') },
];
const noOpenBlas = missing('openblas');

for (const path of MATMUL_PATHS) {
  describe(`wasm matMul on ${path.name} equals cpu (values and gradients)`, () => {
    let before: Blas | null = null;
    beforeAll(async () => {
      await startBackend('wasm');
      before = blasInUse();
      useBlas(path.blas());
    });
    afterAll(() => useBlas(before));
    const skip = path.name === 'BLAS' && noOpenBlas;
    for (const [ta, tb] of [
      [false, false],
      [false, true],
      [true, false],
      [true, true],
    ] as const) {
      test.skipIf(skip)(`rank 2, transposeA=${ta}, transposeB=${tb}`, async () => {
        await expectSameAsCpu([transposed([37, 19], ta), transposed([19, 23], tb)], matMulWithGrads(ta, tb));
      });
      test.skipIf(skip)(`rank 3 batched, transposeA=${ta}, transposeB=${tb}`, async () => {
        await expectSameAsCpu([transposed([3, 17, 9], ta), transposed([3, 9, 11], tb)], matMulWithGrads(ta, tb));
      });
    }

    test.skipIf(skip)('rank 3 times a shared rank-3 operand of batch 1 (folded into rows)', async () => {
      await expectSameAsCpu(
        [
          [4, 13, 8],
          [1, 8, 6],
        ],
        matMulWithGrads(false, false),
      );
      await expectSameAsCpu(
        [
          [4, 8, 13],
          [1, 6, 8],
        ],
        matMulWithGrads(true, true),
      );
    });

    test.skipIf(skip)('rank 3 times rank 2 (a linear layer over a batch of sequences), gradients summed over the batch', async () => {
      // the reference folds the batch into rows by hand: no broadcasting anywhere
      const folded =
        (transposeB: boolean): Case =>
        ([a, b]) => {
          const f = (x: tf.Tensor, y: tf.Tensor) => tf.reshape(tf.matMul(tf.reshape(x, [4 * 13, 8]), y, false, transposeB), [4, 13, 6]);
          const weights = tf.sin(tf.range(0, 4 * 13 * 6).reshape([4, 13, 6]));
          const [da, db] = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(f(x, y), weights)))([a!, b!]);
          return [f(a!, b!), da!, db!];
        };
      await expectSameAsCpu(
        [
          [4, 13, 8],
          [8, 6],
        ],
        matMulWithGrads(false, false),
        undefined,
        folded(false),
      );
      await expectSameAsCpu(
        [
          [4, 13, 8],
          [6, 8],
        ],
        matMulWithGrads(false, true),
        undefined,
        folded(true),
      );
    });

    test.skipIf(skip)('a shared left operand against a batch of right ones', async () => {
      await expectSameAsCpu(
        [
          [1, 5, 7],
          [3, 7, 4],
        ],
        matMulWithGrads(false, false),
      );
    });

    test.skipIf(skip)('rank 4, attention-shaped: scores q kT and the weighted sum of v', async () => {
      const [b, h, s, d] = [2, 3, 10, 8];
      await expectSameAsCpu(
        [
          [b, h, s, d],
          [b, h, s, d],
        ],
        matMulWithGrads(false, true),
      );
      await expectSameAsCpu(
        [
          [b, h, s, s],
          [b, h, s, d],
        ],
        matMulWithGrads(false, false),
      );
    });

    // The cpu backend broadcasts partially-shared batch axes wrongly (tfjs 4.22), so the reference
    // repeats the shared heads explicitly (tile's gradient sums them back).
    test.skipIf(skip)('grouped-query attention: heads broadcast against shared key/value heads, with gradients', async () => {
      const repeated = (kv: tf.Tensor) => tf.tile(kv, [1, 4, 1, 1]);
      const scores =
        (expand: (kv: tf.Tensor) => tf.Tensor): Case =>
        ([q, k]) =>
          matMulWithGrads(false, true)([q!, k!], expand);
      await expectSameAsCpu(
        [
          [2, 4, 6, 8],
          [2, 1, 6, 8],
        ],
        scores((k) => k),
        undefined,
        scores(repeated),
      );
      const mix =
        (expand: (kv: tf.Tensor) => tf.Tensor): Case =>
        ([p, v]) =>
          matMulWithGrads(false, false)([p!, v!], expand);
      await expectSameAsCpu(
        [
          [2, 4, 6, 6],
          [2, 1, 6, 8],
        ],
        mix((v) => v),
        undefined,
        mix(repeated),
      );
    });

    test.skipIf(skip)('fused matMul with bias and relu, transposed operands', async () => {
      await expectSameAsCpu([[9, 12], [7, 9], [7]], ([a, b, bias]) =>
        tf.fused.matMul({ a: a!, b: b!, transposeA: true, transposeB: true, bias: bias!, activation: 'relu' }),
      );
      await expectSameAsCpu([[3, 5, 12], [12, 7], [7]], ([a, b, bias]) => tf.fused.matMul({ a: a!, b: b!, bias: bias!, activation: 'linear' }));
    });

    test.skipIf(skip)('empty products give zeros or empty tensors', async () => {
      await expectSameAsCpu(
        [
          [3, 0],
          [0, 4],
        ],
        ([a, b]) => tf.matMul(a!, b!),
      );
      await expectSameAsCpu(
        [
          [0, 5],
          [5, 4],
        ],
        ([a, b]) => tf.matMul(a!, b!, false, false),
      );
    });
  });
}

describe("XNNPACK's packed-operand cache cannot serve stale values", () => {
  let before: Blas | null = null;
  beforeAll(async () => {
    await startBackend('wasm');
    before = blasInUse();
    useBlas(null);
  });
  afterAll(() => useBlas(before));
  test('repeated products with new contents each time, transposed and not, all correct', async () => {
    const shapes = [
      [12, 10],
      [10, 9],
    ];
    const cases: Case[] = [
      ([a, b]) => tf.matMul(a!, b!),
      ([a, b]) => tf.matMul(a!, b!.transpose(), false, true),
      ([a, b]) => tf.matMul(a!.transpose(), b!, true, false),
    ];
    for (let round = 0; round < 3; round++) {
      const values = shapes.map((shape, i) => randomValues(1000 * round + i, tf.util.sizeFromShape(shape)));
      for (const fn of cases) await expectSameAsCpu(shapes, fn, values);
    }
  });

  test('a right operand reshaped to another matrix shape (same data, same id) multiplies correctly', async () => {
    const w = randomValues(3, 48);
    await expectSameAsCpu(
      [
        [8, 6],
        [2, 8],
        [2, 6],
      ],
      ([w8x6, a, b]) => {
        const first = tf.matMul(a!, w8x6!);
        const second = tf.matMul(b!, tf.reshape(w8x6!, [6, 8]));
        const fused = tf.fused.matMul({ a: a!, b: tf.reshape(w8x6!, [8, 6]), bias: tf.zeros([6]) });
        const fusedReshaped = tf.fused.matMul({ a: b!, b: tf.reshape(w8x6!, [6, 8]), bias: tf.zeros([8]) });
        return [first, second, fused, fusedReshaped];
      },
      [w, randomValues(4, 16), randomValues(5, 12)],
    );
  });

  test('a weight reused across steps while it is updated by assign', async () => {
    const w0 = randomValues(7, 8 * 5);
    const xs = [0, 1, 2].map((i) => randomValues(20 + i, 6 * 8));
    const run = async (backend: 'cpu' | 'wasm') => {
      await startBackend(backend);
      const w = tf.variable(tf.tensor2d(w0, [8, 5]));
      const outs: number[][] = [];
      for (const x of xs) {
        const y = tf.tidy(() => tf.matMul(tf.tensor2d(x, [6, 8]), w));
        outs.push(Array.from(await y.data()));
        y.dispose();
        tf.tidy(() => w.assign(w.mul(1.5).add(0.25)));
      }
      w.dispose();
      return outs.flat();
    };
    const onCpu = await run('cpu');
    const onWasm = await run('wasm');
    onCpu.forEach((v, i) => expect(Math.abs(onWasm[i]! - v)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(v))));
  });
});

describe('gather and its gradient on wasm (UnsortedSegmentSum)', () => {
  test('the gradient of an embedding lookup equals cpu, repeated ids summed', async () => {
    const ids = Int32Array.from([3, 0, 3, 5, 1, 3, 0, 2]);
    await expectSameAsCpu(
      [[7, 4], [8]],
      ([table, index]) => {
        const lookup = (t: tf.Tensor) => tf.gather(t, index!);
        const weights = tf.cos(tf.range(0, 8 * 4).reshape([8, 4]));
        const grad = tf.grad((t: tf.Tensor) => tf.sum(tf.mul(lookup(t), weights)))(table!);
        return [lookup(table!), grad];
      },
      [randomValues(5, 28), ids],
    );
  });

  test('gather as block copies equals cpu along every axis, for 2-D indices and int32 values', async () => {
    const rows = Int32Array.from([2, 0, 2]);
    await expectSameAsCpu([[3, 2, 5, 4], [3]], ([x, i]) => [tf.gather(x!, i!, 0), tf.gather(x!, i!, 1), tf.gather(x!, i!, 2), tf.gather(x!, i!, 3)], [
      randomValues(11, 120),
      Int32Array.from([1, 0, 1]),
    ]);
    await expectSameAsCpu(
      [
        [4, 3],
        [2, 3],
      ],
      ([x, i]) => tf.gather(x!, i!, 0),
      [Int32Array.from({ length: 12 }, (_, j) => j * 7 - 20), Int32Array.from([3, 0, 1, 1, 2, 3])],
    );
    await expectSameAsCpu([[3, 4], [3]], ([x, i]) => tf.gather(x!, i!, 0), [randomValues(12, 12), rows]);
  });

  test('gather with an index outside the axis is an error, not a read past the tensor', async () => {
    await startBackend('wasm');
    const [x, index] = [tf.zeros([3, 2]), tf.tensor1d([3], 'int32')];
    expect(() => tf.gather(x, index)).toThrow('gather: index 3 is outside [0, 2]');
    tf.dispose([x, index]);
  });

  test('unsortedSegmentSum drops ids outside [0, numSegments)', async () => {
    const ids = Int32Array.from([2, -1, 0, 4, 2]);
    await expectSameAsCpu([[5, 3], [5]], ([x, s]) => tf.unsortedSegmentSum(x!, s as tf.Tensor1D, 3), [randomValues(9, 15), ids]);
  });
});

describe('wasm threads', () => {
  test('AGENTIC_WASM_THREADS picks the count; a bad value is a one-line config error', () => {
    expect(wasmThreadsWanted({ AGENTIC_WASM_THREADS: '3' })).toEqual({ threads: 3, why: 'AGENTIC_WASM_THREADS=3' });
    expect(wasmThreadsWanted({}).threads).toBe(Math.min(8, availableCores().count));
    expect(wasmThreadsWanted({}).why).toMatch(/^one per available core \(\d+ in the CPU affinity mask, /);
    const fallback = { threads: 1, why: 'the caller says so' };
    expect(wasmThreadsWanted({}, fallback)).toBe(fallback);
    expect(wasmThreadsWanted({ AGENTIC_WASM_THREADS: '2' }, fallback).threads).toBe(2);
    for (const bad of ['0', 'two', '1.5', '-2', '9']) {
      expect(() => wasmThreadsWanted({ AGENTIC_WASM_THREADS: bad })).toThrow(ConfigError);
      expect(() => wasmThreadsWanted({ AGENTIC_WASM_THREADS: bad })).toThrow(/AGENTIC_WASM_THREADS/);
    }
  });

  test('the spin bound by matmul path, AGENTIC_WASM_SPIN over it; a bad value is a one-line config error', () => {
    expect(spinChoice(false, {})).toMatchObject({ polls: SPIN_XNNPACK });
    expect(spinChoice(true, {})).toMatchObject({ polls: SPIN_BLAS });
    expect(spinChoice(true, { AGENTIC_WASM_SPIN: '1000000' })).toMatchObject({ polls: 1_000_000 });
    // the pool's loop counts down by 5 to exactly 0: other bounds are rounded, never left to wrap
    expect(spinChoice(false, { AGENTIC_WASM_SPIN: '1001' })).toMatchObject({ polls: 1000 });
    expect(spinChoice(false, { AGENTIC_WASM_SPIN: '1' })).toMatchObject({ polls: 5 });
    for (const n of [1, 4, 999, 1003, 123457]) expect(spinBoundOf(n) % 5).toBe(0);
    for (const bad of ['0', 'many', '2.5', '-3']) expect(() => spinChoice(false, { AGENTIC_WASM_SPIN: bad })).toThrow(/^AGENTIC_WASM_SPIN=/);
    expect(describeSpin(spinChoice(true, {}))).toBe(`idle threads sleep after ${SPIN_BLAS} polls (BLAS's threads need the cores between products)`);
  });

  test('the threaded module reads its three spin bounds from one shared word, and still validates; another file is refused', () => {
    const file = join(ROOT, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm');
    const stock = new Uint8Array(readFileSync(file));
    const adjustable = adjustableSpinWasm(file);
    expect(WebAssembly.validate(adjustable)).toBe(true);
    const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
    // `i32.const 1000000` gone, `i32.const 512; i32.atomic.load` in its place, three times
    const count = (bytes: Uint8Array, pattern: string) => hex(bytes).split(pattern).length - 1;
    expect(SPIN_BOUND_ADDRESS).toBe(512);
    const load = '418004fe100200'; // i32.const 512 (LEB128 80 04); i32.atomic.load align=2 offset=0
    expect(count(stock, '41c0843d21')).toBe(3);
    expect(count(adjustable, '41c0843d21')).toBe(0);
    expect(count(adjustable, `${load}21`)).toBe(3);
    expect(adjustable.length).toBe(stock.length + 3 * 3);
    expect(() => adjustableSpinWasm(join(ROOT, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'))).toThrow(
      /is not tfjs-backend-wasm 4\.22\.0's threaded module/,
    );
  });

  test("the cgroup's CPU quota, v2 and v1, as a container or the host sees it", () => {
    const v2 = scratch({ 'cpu.max': '150000 100000\n' });
    expect(cgroupCpuQuota(v2, '0::/\n')).toBe(1.5);
    expect(cgroupCpuQuota(scratch({ 'job/cpu.max': 'max 100000\n' }), '0::/job\n')).toBeNull();
    const v1 = scratch({ 'cpu,cpuacct/cpu.cfs_quota_us': '50000', 'cpu,cpuacct/cpu.cfs_period_us': '100000' });
    expect(cgroupCpuQuota(v1, '4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n')).toBe(0.5);
    expect(cgroupCpuQuota(scratch({ 'cpu/cpu.cfs_quota_us': '-1', 'cpu/cpu.cfs_period_us': '100000' }), '2:cpu:/\n')).toBeNull();
    expect(cgroupCpuQuota(scratch(), '')).toBeNull();
  });

  /** Starts wasm in a fresh process with `env`; returns its threads, a checked product, stderr. */
  async function childRun(env: Record<string, string>, prefix: string[] = []) {
    const script = `
      import * as tf from '@tensorflow/tfjs-core';
      import { getThreadsCount } from '@tensorflow/tfjs-backend-wasm';
      import { startBackend } from './src/engine/backend';
      const started = await startBackend('wasm');
      const a = tf.tensor2d(Array.from({ length: 64 * 64 }, (_, i) => (i % 7) - 3), [64, 64]);
      const sum = (await tf.sum(tf.matMul(a, a, false, true)).data())[0];
      const bound = new Int32Array((tf.backend() as any).wasm.HEAP32.buffer)[${SPIN_BOUND_ADDRESS / 4}];
      console.log(JSON.stringify({ threads: getThreadsCount(), sum, detail: started.detail, bound }));`;
    const child = Bun.spawn([...prefix, process.execPath, '-e', script], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as { threads: number; sum: number; detail: string; bound: number };
    // The sum of all entries of a aT is the sum over columns of (column sum)^2.
    let expected = 0;
    for (let col = 0; col < 64; col++) {
      let s = 0;
      for (let row = 0; row < 64; row++) s += ((row * 64 + col) % 7) - 3;
      expected += s * s;
    }
    expect(out.sum).toBe(expected);
    return { threads: out.threads, detail: out.detail, bound: out.bound, stderr };
  }

  test('two threads start under Bun, multiply correctly, and let the process exit', async () => {
    const { threads, detail, stderr } = await childRun({ AGENTIC_WASM_THREADS: '2' });
    expect(stderr).toBe('');
    expect(threads).toBe(2);
    expect(detail).toStartWith('2 threads: AGENTIC_WASM_THREADS=2; idle threads ');
  });

  test('the pool reads the bound the process sets (AGENTIC_WASM_SPIN, rounded to the loop step of 5)', async () => {
    const { detail, bound, stderr } = await childRun({ AGENTIC_WASM_THREADS: '2', AGENTIC_WASM_SPIN: '2002', AGENTIC_BLAS: 'none' });
    expect(stderr).toBe('');
    expect(bound).toBe(2000);
    expect(detail).toEndWith('idle threads sleep after 2000 polls (AGENTIC_WASM_SPIN=2002)');
  });

  test('by default, one thread per core the affinity mask allows (taskset -c 0: one)', async () => {
    if (!Bun.which('taskset')) return;
    const { threads, detail } = await childRun({ AGENTIC_WASM_THREADS: '' }, ['taskset', '-c', '0']);
    expect(threads).toBe(1);
    expect(detail).toMatch(/^1 thread: one per available core \(1 in the CPU affinity mask, /);
  });

  test('when the threaded start fails, one warning line and the single-threaded backend', async () => {
    const { threads, stderr } = await childRun({ AGENTIC_WASM_THREADS: '2', TMPDIR: '/proc/no-such-folder' });
    expect(threads).toBe(1);
    expect(stderr).toMatch(/^warning: the wasm backend runs single-threaded: .*no-such-folder.*\n$/);
  });

  test('this process runs the wasm backend with the wanted threads', async () => {
    await startBackend('wasm');
    expect(getThreadsCount()).toBe(wasmThreadsWanted().threads);
  });
});
