/**
 * Each WGSL program of ../../../src/engine/wgsl/programs.ts on seeded inputs: `onGpu` runs the
 * program (in a webgpu child process), `onCpu` computes the same with tfjs ops on the cpu backend
 * (or, for sampling, with the host's sampleToken). Both return every output's values by case.
 */
import * as tf from '@tensorflow/tfjs-core';
import { Rng } from '../../../src/engine/rng';
import { GATHER_ROWS, kvCopyProgram, matMulProgram, PAGED_ATTENTION, RMS_NORM, ROPE, ROPE_KV_WRITE, SAMPLE, SWIGLU } from '../../../src/engine/wgsl/programs';
import { f32, grid, WgslRunner } from '../../../src/engine/wgsl/runner';
import { tinyConfig } from '../../model/tiny';
import { applyRope, ropeTables, rotaryAngles } from '../../../src/model/rope';
import { sampleToken } from '../../../src/model/sampling';

const normal = (name: string, size: number, scale = 1) => {
  const rng = Rng.fromSeed(11, name);
  return Float32Array.from({ length: size }, () => scale * rng.normal());
};

// shapes that cross the 32-wide tiles and the 64-wide workgroups
const [M, K, N] = [37, 45, 70];
const A = normal('a', M * K);
const W = normal('w', K * N);
const W_UP = normal('w_up', K * N);
const WT = normal('wt', N * K);
const BIAS = normal('bias', N);
const OUT = normal('out', M * N);
const X = normal('x', 3 * 100);
const NORM = normal('norm', 100);
const ROPE_CONFIG = tinyConfig({ hidden_size: 24, num_attention_heads: 3, num_key_value_heads: 1 });
const POSITIONS = Int32Array.from([0, 5, 17, 300]);
const ROPE_X = normal('rope', POSITIONS.length * 3 * 8);
const GATE = normal('gate', 150, 3);
const UP = normal('up', 150);
const TABLE = normal('table', 9 * 20);
const PICKS = [4, 0, 8, 4];
// two sequences of a paged cache: lengths 20 and 37, head dim 8, 2 kv heads, 4 query heads, pages of 16
const ATTENTION = { heads: 4, kvHeads: 2, headDim: 8, lengths: [20, 37] };
const KEYS = ATTENTION.lengths.map((n, s) => normal(`keys${s}`, ATTENTION.kvHeads * n * ATTENTION.headDim));
const VALUES = ATTENTION.lengths.map((n, s) => normal(`values${s}`, ATTENTION.kvHeads * n * ATTENTION.headDim));
const QUERIES = normal('queries', 2 * ATTENTION.heads * ATTENTION.headDim);
const LOGITS = normal('logits', 4 * 300, 3);
const PLANS = [
  [0, 1, 0],
  [1, 0.7, 0.3],
  [1, 1.3, 0.95],
  [1, 1, 0.001],
];

export async function onGpu(): Promise<Record<string, number[][]>> {
  const runner = new WgslRunner(64);
  const upload = (data: Float32Array | Uint32Array) => {
    const buffer = runner.storage(data.byteLength);
    runner.write(buffer, data);
    return buffer;
  };
  const results: Record<string, number[][]> = {};
  const run = async (name: string, record: () => GPUBuffer[], sizes: number[], words = false) => {
    const read = (await runner.batch(() => {
      const outs = record();
      outs.forEach((out, i) => runner.read(out, 0, 4 * sizes[i]!));
    }))!;
    let at = 0;
    results[name] = sizes.map((size) => {
      const values = Array.from(words ? new Uint32Array(read, at, size) : new Float32Array(read, at, size));
      at += 4 * size;
      return values;
    });
  };
  const tiles: [number, number] = [Math.ceil(N / 32), Math.ceil(M / 32)];
  for (const [name, program, w] of [
    ['matMul', matMulProgram({}), W],
    ['matMulTransposed', matMulProgram({ transposed: true }), WT],
  ] as const) {
    await run(name, () => {
      const out = runner.storage(4 * M * N);
      runner.run(program, [upload(A), upload(w), out], [M, N, K, f32(1)], tiles);
      return [out];
    }, [M * N]);
  }
  await run('matMulBias', () => {
    const out = runner.storage(4 * M * N);
    runner.run(matMulProgram({ bias: true }), [upload(A), upload(W), out, upload(BIAS)], [M, N, K, f32(1)], tiles);
    return [out];
  }, [M * N]);
  await run('matMulAccumulate', () => {
    const out = upload(OUT);
    runner.run(matMulProgram({ accumulate: true }), [upload(A), upload(W), out], [M, N, K, f32(0.5)], tiles);
    return [out];
  }, [M * N]);
  await run('matMulGated', () => {
    const out = runner.storage(4 * M * N);
    runner.run(matMulProgram({ gated: true }), [upload(A), upload(W), out, upload(W_UP)], [M, N, K, f32(1)], tiles);
    return [out];
  }, [M * N]);
  await run('rmsNorm', () => {
    const out = runner.storage(4 * X.length);
    runner.run(RMS_NORM, [upload(X), upload(NORM), out], [100, 3, f32(1e-6)], grid(3));
    return [out];
  }, [X.length]);
  await run('rope', () => {
    const { cos, sin } = rotaryAngles(POSITIONS, ROPE_CONFIG);
    const angles = new Float32Array(2 * cos.length);
    angles.set(cos);
    angles.set(sin, cos.length);
    const out = runner.storage(4 * ROPE_X.length);
    runner.run(ROPE, [upload(ROPE_X), upload(angles), out], [3, 8, POSITIONS.length], grid(Math.ceil(ROPE_X.length / 64)));
    return [out];
  }, [ROPE_X.length]);
  await run('swiglu', () => {
    const gate = upload(GATE);
    runner.run(SWIGLU, [gate, upload(UP)], [GATE.length], grid(Math.ceil(GATE.length / 64)));
    return [gate];
  }, [GATE.length]);
  await run('gatherRows', () => {
    const out = runner.storage(4 * PICKS.length * 20);
    runner.run(GATHER_ROWS, [upload(TABLE), upload(Uint32Array.from([7, 7, ...PICKS])), out], [20, PICKS.length, 2], grid(Math.ceil((PICKS.length * 20) / 64)));
    return [out];
  }, [PICKS.length * 20]);
  await run('pagedAttention', () => pagedAttentionOnGpu(runner, upload), [2 * ATTENTION.heads * ATTENTION.headDim, KEYS[1]!.length]);
  await run(
    'sample',
    () => {
      const out = runner.storage(4 * 2 * PLANS.length);
      runner.run(SAMPLE, [upload(LOGITS), upload(Float32Array.from(PLANS.flatMap((p) => [...p, 0]))), out], [300, PLANS.length], grid(PLANS.length));
      return [out];
    },
    [2 * PLANS.length],
    true,
  );
  runner.dispose();
  // the sampled log-probs are float bits: turn them back into numbers beside their tokens
  const words = Uint32Array.from(results.sample![0]!);
  const floats = new Float32Array(words.buffer);
  results.sample = [PLANS.map((_, i) => words[2 * i]!), PLANS.map((_, i) => floats[2 * i + 1]!)];
  return results;
}

/**
 * Writes both sequences' keys and values through rope_kv_write (pages scattered:
 * sequence 0 on pages 3 and 0, sequence 1 on pages 1, 4 and 2), attends with one query per
 * sequence at its last position, and gathers sequence 1's keys back out through kv_gather.
 */
function pagedAttentionOnGpu(runner: WgslRunner, upload: (data: Float32Array | Uint32Array) => GPUBuffer): GPUBuffer[] {
  const { heads, kvHeads, headDim, lengths } = ATTENTION;
  const pageTable = [3, 0, 0, 1, 4, 2];
  const maxPages = 3;
  const pool = 5 * 16 * kvHeads * headDim;
  const [keys, values] = [runner.storage(4 * pool), runner.storage(4 * pool)];
  const rows = lengths[0]! + lengths[1]!;
  const info = new Uint32Array(2 * rows + pageTable.length);
  const [k, v] = [new Float32Array(rows * kvHeads * headDim), new Float32Array(rows * kvHeads * headDim)];
  let row = 0;
  lengths.forEach((n, s) => {
    for (let t = 0; t < n; t++, row++) {
      info.set([s, t], 2 * row);
      for (let h = 0; h < kvHeads; h++) {
        const from = (h * n + t) * headDim;
        k.set(KEYS[s]!.subarray(from, from + headDim), (row * kvHeads + h) * headDim);
        v.set(VALUES[s]!.subarray(from, from + headDim), (row * kvHeads + h) * headDim);
      }
    }
  });
  info.set(pageTable, 2 * rows);
  const page = (table: number) => [1, 0, kvHeads, headDim, 16, maxPages, table];
  // cos 1 and sin 0: the keys go in unrotated (the rope case checks the rotation, generation the two together)
  const identity = new Float32Array(2 * rows * headDim).fill(1, 0, rows * headDim);
  runner.run(
    ROPE_KV_WRITE,
    [upload(k), upload(identity), upload(v), keys, values, upload(info)],
    [...page(2 * rows), rows],
    grid(Math.ceil((rows * kvHeads * headDim) / 64)),
  );
  const queries = Uint32Array.from([0, lengths[0]! - 1, 1, lengths[1]! - 1, ...pageTable]);
  const out = runner.storage(4 * 2 * heads * headDim);
  runner.run(PAGED_ATTENTION, [upload(QUERIES), keys, values, upload(queries), out], [...page(4), heads, 2, f32(1 / Math.sqrt(headDim))], grid(2 * kvHeads));
  const gathered = runner.storage(4 * KEYS[1]!.length);
  runner.run(kvCopyProgram(false), [gathered, keys, upload(queries)], [...page(4), 1, lengths[1]!, lengths[1]!], grid(Math.ceil(KEYS[1]!.length / 64)));
  return [out, gathered];
}

export async function onCpu(): Promise<Record<string, number[][]>> {
  const read = async (t: tf.Tensor) => {
    const values = Array.from(await t.data());
    t.dispose();
    return [values];
  };
  const a = () => tf.tensor2d(A, [M, K]);
  const { heads, kvHeads, headDim, lengths } = ATTENTION;
  return {
    matMul: await read(tf.tidy(() => tf.matMul(a(), tf.tensor2d(W, [K, N])))),
    matMulTransposed: await read(tf.tidy(() => tf.matMul(a(), tf.tensor2d(WT, [N, K]), false, true))),
    matMulBias: await read(tf.tidy(() => tf.matMul(a(), tf.tensor2d(W, [K, N])).add(tf.tensor1d(BIAS)))),
    matMulAccumulate: await read(tf.tidy(() => tf.tensor2d(OUT, [M, N]).add(tf.matMul(a(), tf.tensor2d(W, [K, N])).mul(0.5)))),
    matMulGated: await read(
      tf.tidy(() => {
        const gate = tf.matMul(a(), tf.tensor2d(W, [K, N]));
        return gate.mul(tf.sigmoid(gate)).mul(tf.matMul(a(), tf.tensor2d(W_UP, [K, N])));
      }),
    ),
    rmsNorm: await read(
      tf.tidy(() => {
        const x = tf.tensor2d(X, [3, 100]);
        return x.mul(tf.rsqrt(tf.square(x).mean(-1, true).add(1e-6))).mul(tf.tensor1d(NORM));
      }),
    ),
    rope: await read(
      tf.tidy(() => {
        const tables = ropeTables(POSITIONS, ROPE_CONFIG);
        return applyRope(tf.tensor2d(ROPE_X, [POSITIONS.length, 24]), tables.cosQ, tables.sinQ, tables.rotation, [POSITIONS.length, 1, 3, 8]);
      }),
    ),
    swiglu: await read(
      tf.tidy(() => {
        const gate = tf.tensor1d(GATE);
        return gate.mul(tf.sigmoid(gate)).mul(tf.tensor1d(UP));
      }),
    ),
    gatherRows: await read(tf.tidy(() => tf.gather(tf.tensor2d(TABLE, [9, 20]), tf.tensor1d(PICKS, 'int32')))),
    pagedAttention: [
      ...(await read(
        tf.tidy(() =>
          tf.concat(
            lengths.map((n, s) => {
              const q = tf.tensor3d(QUERIES.subarray(s * heads * headDim, (s + 1) * heads * headDim), [heads, 1, headDim]);
              const repeat = (t: tf.Tensor) => tf.concat([0, 0, 1, 1].map((h) => t.slice([h, 0, 0], [1, n, headDim])));
              const keys = repeat(tf.tensor3d(KEYS[s]!, [kvHeads, n, headDim]));
              const values = repeat(tf.tensor3d(VALUES[s]!, [kvHeads, n, headDim]));
              const weights = tf.softmax(tf.matMul(q, keys, false, true).mul(1 / Math.sqrt(headDim)));
              return tf.matMul(weights, values).reshape([-1]);
            }),
          ),
        ),
      )),
      Array.from(KEYS[1]!),
    ],
    sample: (() => {
      const sampled = PLANS.map(([mode, temperature, u], i) =>
        sampleToken(LOGITS.subarray(300 * i, 300 * (i + 1)), { temperature: mode === 0 ? 0 : temperature!, topK: 0, topP: 1, doSample: mode === 1 }, {
          float: () => u,
        } as unknown as Rng),
      );
      return [sampled.map((s) => s.token), sampled.map((s) => s.logProb)];
    })(),
  };
}
