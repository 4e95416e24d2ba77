/**
 * The system BLAS through bun:ffi: which library a choice finds, one-line errors for a missing or
 * misspelt one, cblas_sgemm's products (transposes included) against a plain sum, and the start
 * line and doctor naming who computes the matmuls.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ptr, toArrayBuffer } from 'bun:ffi';
import { startBackend } from '../../src/engine/backend';
import { type Blas, blasChoiceProblem, describeBlas, findBlas } from '../../src/engine/blas';
import { blasInUse, ROW_TILES, rowStableBlas, stableRowTile, tilesAreRowStable, useBlas, withRowStableMatMuls } from '../../src/engine/kernels/matmul';
import { tf } from '../../src/engine/tf';
import { ConfigError } from '../../src/errors';
import { agentic, lines, scratch } from '../helpers';
import { missing } from '../system_tools';

setDefaultTimeout(60_000);

const found = findBlas('auto');
const withBlas = test.skipIf(missing('openblas'));

/** C = op(A) op(B) by a plain sum, row-major; `a` is stored [k, m] when transposed, `b` [n, k]. */
function naive(a: Float32Array, b: Float32Array, m: number, n: number, k: number, ta: boolean, tb: boolean): Float32Array {
  const c = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum += (ta ? a[p * m + i]! : a[i * k + p]!) * (tb ? b[j * k + p]! : b[p * n + j]!);
      c[i * n + j] = sum;
    }
  }
  return c;
}

describe('choosing a BLAS', () => {
  test('none keeps XNNPACK; auto finds the system one when there is one', () => {
    expect(findBlas('none')).toBeNull();
    if (found) expect(['openblas', 'blis', 'mkl', 'accelerate']).toContain(found.name);
  });

  test('a library that is not there, or a choice that means nothing, is one line naming the key', () => {
    expect(() => findBlas('mkl')).toThrow(ConfigError);
    expect(() => findBlas('mkl')).toThrow(/^blas=mkl: no mkl library with cblas_sgemm found \(.*\); apt-get install libmkl-rt, or set blas=auto$/);
    expect(() => findBlas('/nonexistent/libblas.so')).toThrow('blas=/nonexistent/libblas.so: cannot load it, or it has no cblas_sgemm');
    expect(() => findBlas('fast')).toThrow('blas: expected auto, none, openblas, blis, mkl, accelerate or a library path');
    expect(blasChoiceProblem('openblas')).toBeNull();
    expect(blasChoiceProblem('/opt/lib/libopenblas.so')).toBeNull();
  });

  withBlas('describes itself: version, file and threads', () => {
    found!.setThreads(1);
    expect(describeBlas(found!)).toMatch(/\(.+, 1 thread\)$/);
    found!.setThreads(2);
    expect(found!.threads()).toBe(2);
  });
});

describe('cblas_sgemm on pointers into a Float32Array', () => {
  for (const [ta, tb] of [
    [false, false],
    [false, true],
    [true, false],
    [true, true],
  ] as const) {
    withBlas(`transposeA=${ta}, transposeB=${tb} equals a plain sum`, () => {
      const [m, n, k] = [7, 5, 9];
      const memory = new Float32Array(m * k + k * n + m * n + 3);
      for (let i = 0; i < m * k + k * n; i++) memory[i] = Math.sin(i * 0.7) * 3;
      const base = ptr(memory);
      found!.sgemm(ta, tb, m, n, k, base, base + 4 * m * k, base + 4 * (m * k + k * n));
      const expected = naive(memory.subarray(0, m * k), memory.subarray(m * k, m * k + k * n), m, n, k, ta, tb);
      const got = memory.subarray(m * k + k * n, m * k + k * n + m * n);
      for (let i = 0; i < m * n; i++) expect(Math.abs(got[i]! - expected[i]!)).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(expected[i]!)));
      // nothing written past C
      expect(Array.from(memory.subarray(-3))).toEqual([0, 0, 0]);
    });
  }
});

describe('who computes the matmuls, as the commands say it', () => {
  withBlas('doctor names the BLAS under auto, XNNPACK under AGENTIC_BLAS=none', async () => {
    const auto = await agentic(['doctor']);
    expect(lines(auto.stdout).find((l) => l.trim().startsWith('matmuls'))).toMatch(/^ {2}matmuls +.+\(blas=auto\)$/);
    const none = await agentic(['doctor'], { env: { AGENTIC_BLAS: 'none' } });
    expect(lines(none.stdout).find((l) => l.trim().startsWith('matmuls'))).toMatch(/^ {2}matmuls +XNNPACK \(blas=none\)$/);
  });

  test('a missing library asked for stops the run in one line, before anything is written', async () => {
    const out = join(scratch(), 'out');
    const run = await agentic(['train', 'blas=mkl', 'max_steps=1', `output_dir=${out}`]);
    expect(run.code).not.toBe(0);
    expect(lines(run.stderr).filter((l) => l.startsWith('error'))).toHaveLength(1);
    expect(run.stderr).toContain('blas=mkl: no mkl library with cblas_sgemm found');
    expect(existsSync(join(out, '.agentic'))).toBe(false);
    const bad = await agentic(['config', 'blas=fast']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim()).toBe('error: blas: expected auto, none, openblas, blis, mkl, accelerate or a library path');
  });
});

describe('row-stable products for generation (withRowStableMatMuls)', () => {
  let before: Blas | null = null;
  beforeAll(async () => {
    await startBackend('wasm');
    before = blasInUse();
    useBlas(found);
  });
  afterAll(() => useBlas(before));

  const weights = (k: number, n: number) =>
    tf.tensor2d(
      Float32Array.from({ length: k * n }, (_, i) => Math.sin(i * 0.37)),
      [k, n],
    );
  const rowsOf = (rows: number, k: number, seed: number) => Float32Array.from({ length: rows * k }, (_, i) => Math.cos(seed * 7.1 + i * 0.11));

  // OpenBLAS picks its kernels by CPU: SkylakeX's give a row the same bits at every place of a
  // 16-row tile, the Haswell kernels it picks on an AMD EPYC only in tiles of 8. Either way
  // generation stays row-stable; the probe decides who computes its one-row-per-sequence
  // products: BLAS in the largest stable tile, else XNNPACK
  withBlas("the tile probe takes the largest tile at which the library's rows are stable, else leaves generation's products to XNNPACK", () => {
    const tile = stableRowTile(found!);
    for (const larger of ROW_TILES.filter((t) => tile === null || t > tile)) expect(tilesAreRowStable(found!, larger)).toBe(false);
    if (tile !== null) expect(tilesAreRowStable(found!, tile)).toBe(true);
    expect(rowStableBlas()).toEqual(tile === null ? null : { library: found!, tile });
  });

  withBlas('a library whose rows 6 and up of a tile differ from the first six (as Haswell kernels on an EPYC) is given tiles of 4', () => {
    // the rows from the seventh on are scaled by 1 + 2^-20: their bits differ, as a kernel's edge handling makes them
    const uneven: Blas = {
      ...found!,
      sgemm(transA, transB, m, n, k, a, b, c) {
        found!.sgemm(transA, transB, m, n, k, a, b, c);
        if (m <= 6) return;
        const out = new Float32Array(toArrayBuffer(c, 0, 4 * m * n));
        for (let i = 6 * n; i < m * n; i++) out[i] = Math.fround(out[i]! * (1 + 2 ** -20));
      },
    };
    expect([16, 8, 4].map((tile) => tilesAreRowStable(uneven, tile))).toEqual([false, false, true]);
    expect(stableRowTile(uneven)).toBe(4);
  });

  withBlas("a row's product has the same bits alone and among any number of other rows, and agrees with the whole product", () => {
    const tensorsBefore = tf.memory().numTensors;
    for (const [k, n] of [
      [128, 384],
      [384, 128],
    ] as const) {
      const w = weights(k, n);
      const mine = rowsOf(1, k, 99);
      const productOf = (others: number, place: number, stable: boolean) => {
        const values = rowsOf(others + 1, k, others);
        values.set(mine, place * k);
        const x = tf.tensor2d(values, [others + 1, k]);
        const out = stable ? withRowStableMatMuls(() => tf.matMul(x, w)) : tf.matMul(x, w);
        const row = out.dataSync().slice(place * n, (place + 1) * n);
        tf.dispose([x, out]);
        return row;
      };
      const alone = productOf(0, 0, true);
      for (const [others, place] of [
        [4, 2],
        [15, 15],
        [16, 3],
        [39, 37],
        [63, 20],
      ] as const) {
        expect(productOf(others, place, true)).toEqual(alone);
        const whole = productOf(others, place, false);
        for (let j = 0; j < n; j++) expect(Math.abs(whole[j]! - alone[j]!)).toBeLessThan(1e-4);
      }
      w.dispose();
    }
    expect(tf.memory().numTensors).toBe(tensorsBefore);
  });

  withBlas("with several rows per sequence, a sequence's rows have the same bits whatever sequences share the batch", () => {
    const [k, n, length] = [128, 384, 7];
    const w = weights(k, n);
    const mine = rowsOf(length, k, 5);
    const productOf = (sequences: number, place: number) => {
      const values = rowsOf(sequences * length, k, sequences);
      values.set(mine, place * length * k);
      const x = tf.tensor2d(values, [sequences * length, k]);
      const out = withRowStableMatMuls(() => tf.matMul(x, w), length);
      const rows = out.dataSync().slice(place * length * n, (place + 1) * length * n);
      tf.dispose([x, out]);
      return rows;
    };
    const alone = productOf(1, 0);
    expect(productOf(3, 1)).toEqual(alone);
    expect(productOf(9, 8)).toEqual(alone);
    w.dispose();
  });
});
