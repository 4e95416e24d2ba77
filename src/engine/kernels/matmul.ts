/**
 * BatchMatMul and _FusedMatMul for the wasm backend, rerouted to the one case XNNPACK runs fast.
 *
 * The stock wasm kernels hand a matmul to XNNPACK only when it is a single, non-transposed 2-D
 * product; every transposed or batched one (all gradient matmuls, all attention matmuls) falls to
 * a scalar loop about 20x slower. Here each product becomes such a 2-D call:
 * - a transposed operand is transposed explicitly first (a copy, cheap next to the product);
 * - a batch sharing one right operand is folded into the rows of a single call;
 * - a true batch (attention) is a loop of 2-D calls over zero-copy views of each matrix.
 * XNNPACK caches a packed right operand under its tensor id, ignoring the shape; stock tfjs gives
 * wrong products for a reshaped matrix reused as a right operand, and this version does not.
 *
 * With a system BLAS in use (../blas.ts, useBlas), every float32 product is instead one
 * `cblas_sgemm` per batch matrix (one in all when the batch shares its right operand and the left
 * is not transposed), on the operands where they lie in the heap, transposes passed to BLAS;
 * inside withRowStableMatMuls (generation), in calls whose rows never depend on the batch.
 */
import { broadcast_util, getKernel, util, type KernelConfig, type KernelFunc, type TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { ptr } from 'bun:ffi';
import type { Blas } from '../blas';
import { allocate, createdAs, cwrapOf, dropAlias, dropView, freeTemp, makeAlias, makeView, wasmId, wasmOffset } from './wasm_heap';

type MatMul2D = (
  aId: number,
  aShape: Uint8Array,
  aRank: number,
  bId: number,
  bShape: Uint8Array,
  bRank: number,
  transposeA: boolean,
  transposeB: boolean,
  outId: number,
) => void;

const matMulCalls = new WeakMap<BackendWasm, MatMul2D>();

/** The BLAS that computes the products, or null for XNNPACK. */
let blas: Blas | null = null;

/** Routes the wasm matmuls to `library` (null: back to XNNPACK); takes effect from the next call. */
export function useBlas(library: Blas | null): void {
  blas = library;
}

export function blasInUse(): Blas | null {
  return blas;
}

/** How many other threads of this process call the library now (an asynchronous run's rollout worker). */
let otherCallers = 0;

/**
 * Marks the library as shared with another thread of this process until the returned release is
 * called. Its thread count is per process, so while it is shared no kernel changes the count for
 * a moment (attention's oneThread): the other thread's products would take whichever count was
 * set when they started, and where the library's rows depend on how a product is split among its
 * threads (OpenBLAS's Haswell kernels on an AMD EPYC), the run would no longer repeat
 * bit for bit.
 */
export function shareBlasWithAnotherThread(): () => void {
  otherCallers += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    otherCallers -= 1;
  };
}

export function blasSharedWithAnotherThread(): boolean {
  return otherCallers > 0;
}

/** The rows per sequence of each withRowStableMatMuls around the products being computed now. */
const sequenceRows: number[] = [];

/**
 * Runs `work` (synchronous tfjs ops) with matmuls whose every row comes out the same whatever the
 * other sequences of its batch. Generation needs it: continuous batching puts together whichever
 * sequences are ready, so a row's batch depends on timing. `rowsPerSequence`: how many
 * consecutive rows each sequence owns (a prefill: its prompt length; a decode step: 1).
 *
 * OpenBLAS picks its kernels by the row count (a row's bits change with it), so inside, a product
 * of rows by a shared matrix goes to BLAS in calls of a fixed number of rows: one call per
 * sequence when sequences own several rows (the call is a function of that sequence alone), or
 * a tile of rows (the last one padded) when each row is a sequence, where the library gives a row
 * the same bits at any place of a tile (probed once: stableRowTile). A batch of matrices
 * (attention: one per sequence and head) is one call per matrix, as outside. Any other product
 * goes to XNNPACK, whose rows never depend on their neighbours. Training and scoring batches are fixed
 * by the config, so outside, BLAS takes every product whole.
 */
export function withRowStableMatMuls<T>(work: () => T, rowsPerSequence = 1): T {
  sequenceRows.push(rowsPerSequence);
  try {
    return work();
  } finally {
    sequenceRows.pop();
  }
}

/**
 * Rows per BLAS call inside withRowStableMatMuls when each row is its own sequence, largest first:
 * a library's kernels may treat some places of a tile apart (OpenBLAS's Haswell kernels on an AMD
 * EPYC give rows 6 to 15 of a 16-row product other bits than rows 0 to 5, and every row of an
 * 8-row one the same), so the probe takes the largest tile at which they do not.
 */
export const ROW_TILES = [16, 8, 4] as const;

/** A BLAS that computes one-row-per-sequence products in calls of exactly `tile` rows. */
export interface RowStableBlas {
  library: Blas;
  tile: number;
}

/** The probe's answer for the library it was asked about (stable: null where no tile is). */
let probed: { library: Blas; stable: RowStableBlas | null } | undefined;

/**
 * The BLAS in use with the largest tile at which it gives a row the same bits at any place
 * (stableRowTile, probed once), else null: who may compute generation's products on the host.
 */
export function rowStableBlas(): RowStableBlas | null {
  if (!blas) return null;
  if (probed?.library !== blas) {
    const tile = stableRowTile(blas);
    probed = { library: blas, stable: tile === null ? null : { library: blas, tile } };
  }
  return probed.stable;
}

/** How the product `p` being computed now is done: by BLAS (whole, or in calls of `tile` rows), or by XNNPACK (null). */
function blasForNow(p: Plan, transposeA: boolean): { library: Blas; tile: number | null } | null {
  if (!blas) return null;
  const perSequence = sequenceRows.at(-1);
  if (perSequence === undefined) return { library: blas, tile: null };
  // a true batch (attention) is one call per matrix, and each matrix is one sequence's
  if (util.sizeFromShape(p.bOuter) > 1) return { library: blas, tile: null };
  const rows = sharedRows(p, transposeA);
  if (rows === null) return null;
  if (perSequence > 1) return rows % perSequence === 0 ? { library: blas, tile: perSequence } : null;
  return rowStableBlas();
}

/** The largest of ROW_TILES at which `library`'s rows are stable (tilesAreRowStable), or null. */
export function stableRowTile(library: Blas): number | null {
  return ROW_TILES.find((tile) => tilesAreRowStable(library, tile)) ?? null;
}

/**
 * Whether `library` gives a row the same bits at every place of a `tile`-row product, whatever
 * the other rows hold, for products shaped like a model's (small and large inner and outer
 * sizes). Deterministic inputs: the answer is the same at every start.
 */
export function tilesAreRowStable(library: Blas, tile: number): boolean {
  let state = 12345;
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
  for (const [k, n] of [
    [32, 32],
    [128, 128],
    [128, 384],
    [384, 128],
    [896, 896],
    [896, 4864],
  ] as const) {
    const b = Float32Array.from({ length: k * n }, random);
    const row = Float32Array.from({ length: k }, random);
    let first: Float32Array | null = null;
    for (let place = 0; place < tile; place++) {
      const a = Float32Array.from({ length: tile * k }, random);
      a.set(row, place * k);
      const c = new Float32Array(tile * n);
      library.sgemm(false, false, tile, n, k, ptr(a), ptr(b), ptr(c));
      const got = c.subarray(place * n, (place + 1) * n);
      if (!first) first = got.slice();
      else if (got.some((x, j) => x !== first![j])) return false;
    }
  }
  return true;
}

/** A tile's rows in and out, for the last, partial tile of a tiled product. */
let tileScratch = { a: new Float32Array(0), c: new Float32Array(0) };

/** C[rows, n] = A[rows, k] B (B [k, n], or [n, k] when transposed) in calls of exactly `tile` rows. */
function tiledProduct(
  library: Blas,
  tile: number,
  rows: number,
  n: number,
  k: number,
  transposeB: boolean,
  heap: Uint8Array,
  aAt: number,
  bAt: number,
  outAt: number,
): void {
  const base = ptr(heap);
  const full = rows - (rows % tile);
  for (let r = 0; r < full; r += tile) library.sgemm(false, transposeB, tile, n, k, base + aAt + 4 * r * k, base + bAt, base + outAt + 4 * r * n);
  const rest = rows - full;
  if (rest === 0) return;
  if (tileScratch.a.length < tile * k || tileScratch.c.length < tile * n) {
    tileScratch = { a: new Float32Array(Math.max(tile * k, tileScratch.a.length)), c: new Float32Array(Math.max(tile * n, tileScratch.c.length)) };
  }
  const { a, c } = tileScratch;
  a.fill(0, 0, tile * k);
  a.set(new Float32Array(heap.buffer, heap.byteOffset + aAt + 4 * full * k, rest * k));
  library.sgemm(false, transposeB, tile, n, k, ptr(a), base + bAt, ptr(c));
  new Float32Array(heap.buffer, heap.byteOffset + outAt + 4 * full * n, rest * n).set(c.subarray(0, rest * n));
}

/**
 * The product of float32 `a` and `b` into `out` by BLAS, transposes and broadcast batches included;
 * `tile`: a batch sharing its right operand, in calls of that many rows (see withRowStableMatMuls).
 */
function multiplyBlas(
  how: { library: Blas; tile: number | null },
  backend: BackendWasm,
  a: TensorInfo,
  b: TensorInfo,
  out: TensorInfo,
  p: Plan,
  transposeA: boolean,
  transposeB: boolean,
): void {
  const { library } = how;
  const { m, k, n, outOuter } = p;
  const heap = (backend.wasm as unknown as { HEAPU8: Uint8Array }).HEAPU8;
  const base = ptr(heap);
  const [aOffset, bOffset, outOffset] = [wasmOffset(backend, a), wasmOffset(backend, b), wasmOffset(backend, out)];
  const [aAt, bAt, outAt] = [base + aOffset, base + bOffset, base + outOffset];
  const batch = util.sizeFromShape(outOuter);
  if (sharedRows(p, transposeA) !== null) {
    // one right operand for every batch: the batch is just more rows of A
    if (how.tile) tiledProduct(library, how.tile, batch * m, n, k, transposeB, heap, aOffset, bOffset, outOffset);
    else library.sgemm(false, transposeB, batch * m, n, k, aAt, bAt, outAt);
    return;
  }
  const aOf = batchIndices(outOuter, p.aOuter);
  const bOf = batchIndices(outOuter, p.bOuter);
  for (let i = 0; i < batch; i++) {
    library.sgemm(transposeA, transposeB, m, n, k, aAt + 4 * aOf[i]! * m * k, bAt + 4 * bOf[i]! * k * n, outAt + 4 * i * m * n);
  }
}

/** The rows of A when the product is rows (A not transposed, any batch) by one shared right operand, else null. */
function sharedRows(p: Plan, transposeA: boolean): number | null {
  const batch = util.sizeFromShape(p.aOuter);
  return !transposeA && util.sizeFromShape(p.bOuter) === 1 && batch === util.sizeFromShape(p.outOuter) ? batch * p.m : null;
}

/** The C BatchMatMul entry point of this backend's module (XNNPACK for 1 x M x K by 1 x K x N). */
function matMulCall(backend: BackendWasm): MatMul2D {
  let call = matMulCalls.get(backend);
  if (!call) {
    const types = ['number', 'array', 'number', 'number', 'array', 'number', 'number', 'number', 'number'];
    call = cwrapOf(backend.wasm)('BatchMatMul', null, types) as unknown as MatMul2D;
    matMulCalls.set(backend, call);
  }
  return call;
}

const shapeBytes = (shape: number[]) => new Uint8Array(new Int32Array(shape).buffer);

/** C = A B for A [M, K] and B [K, N] given by ids, written to `outId`. */
function product2D(backend: BackendWasm, aId: number, bId: number, outId: number, m: number, k: number, n: number): void {
  matMulCall(backend)(aId, shapeBytes([1, m, k]), 3, bId, shapeBytes([1, k, n]), 3, false, false, outId);
}

/** The shapes of a (possibly transposed, batched) product. */
interface Plan {
  m: number;
  k: number;
  n: number;
  outOuter: number[];
  aOuter: number[];
  bOuter: number[];
}

function plan(a: TensorInfo, b: TensorInfo, transposeA: boolean, transposeB: boolean): Plan {
  const ar = a.shape.length;
  const br = b.shape.length;
  const m = transposeA ? a.shape[ar - 1]! : a.shape[ar - 2]!;
  const ka = transposeA ? a.shape[ar - 2]! : a.shape[ar - 1]!;
  const kb = transposeB ? b.shape[br - 1]! : b.shape[br - 2]!;
  const n = transposeB ? b.shape[br - 2]! : b.shape[br - 1]!;
  util.assert(
    ka === kb,
    () =>
      `Error in matMul: inner shapes (${ka}) and (${kb}) of Tensors with shapes ${a.shape} and ${b.shape} and transposeA=${transposeA} and transposeB=${transposeB} must match.`,
  );
  const aOuter = a.shape.slice(0, -2);
  const bOuter = b.shape.slice(0, -2);
  const outOuter = broadcast_util.assertAndGetBroadcastShape(aOuter, bOuter);
  return { m, k: ka, n, outOuter, aOuter, bOuter };
}

/**
 * `x` with its last two axes swapped, as a new tensor (or `x` itself when no swap is asked). A
 * tiled JS loop over the heap: faster here than the wasm Transpose kernel on these shapes.
 */
function untransposed(backend: BackendWasm, x: TensorInfo, transposed: boolean, temps: TensorInfo[]): TensorInfo {
  if (!transposed) return x;
  const rows = x.shape.at(-2)!;
  const cols = x.shape.at(-1)!;
  const out = allocate(backend, [...x.shape.slice(0, -2), cols, rows]);
  temps.push(out);
  // Views after the allocation: growing the heap detaches views taken before it.
  const from = backend.typedArrayFromHeap(x);
  const to = backend.typedArrayFromHeap(out);
  // Tiles of 64 x 64, each written sequentially (measured ~1.4x faster than 8 x 8 tiles read
  // sequentially, on [510, 255] and [4080, 384] matrices).
  const tile = 64;
  for (let base = 0; base < from.length; base += rows * cols) {
    for (let c0 = 0; c0 < cols; c0 += tile) {
      const c1 = Math.min(c0 + tile, cols);
      for (let r0 = 0; r0 < rows; r0 += tile) {
        const r1 = Math.min(r0 + tile, rows);
        for (let c = c0; c < c1; c++) {
          for (let r = r0, src = base + r0 * cols + c, dst = base + c * rows + r0; r < r1; r++, src += cols, dst++) to[dst] = from[src]!;
        }
      }
    }
  }
  return out;
}

/** For each output batch index, the batch index of an operand with outer shape `outer` (broadcast). */
function batchIndices(outOuter: number[], outer: number[]): number[] {
  const padded = [...Array<number>(outOuter.length - outer.length).fill(1), ...outer];
  const indices: number[] = [];
  for (let flat = 0; flat < util.sizeFromShape(outOuter); flat++) {
    let rest = flat;
    let index = 0;
    let stride = 1;
    for (let d = outOuter.length - 1; d >= 0; d--) {
      const coord = rest % outOuter[d]!;
      rest = Math.floor(rest / outOuter[d]!);
      if (padded[d] !== 1) index += coord * stride;
      stride *= padded[d]!;
    }
    indices.push(index);
  }
  return indices;
}

/** The product of non-transposed float32 operands `a` [...,M,K] and `b` [...,K,N] into `out`. */
function multiply(backend: BackendWasm, a: TensorInfo, b: TensorInfo, out: TensorInfo, p: Plan): void {
  const { m, k, n, outOuter } = p;
  const batchA = util.sizeFromShape(p.aOuter);
  const batchB = util.sizeFromShape(p.bOuter);
  if (batchB === 1) {
    // One right operand for every batch: the batch is just more rows of A. A right operand used
    // under its own id keeps its XNNPACK packing while it lives (weights: packed once).
    const own = createdAs(backend, b, k, n);
    const bId = own ? wasmId(backend, b) : makeView(backend, wasmOffset(backend, b), k * n);
    try {
      product2D(backend, wasmId(backend, a), bId, wasmId(backend, out), batchA * m, k, n);
    } finally {
      if (!own) dropView(backend, bId);
    }
    return;
  }
  const aOf = batchIndices(outOuter, p.aOuter);
  const bOf = batchIndices(outOuter, p.bOuter);
  const [aBase, bBase, outBase] = [wasmOffset(backend, a), wasmOffset(backend, b), wasmOffset(backend, out)];
  for (let i = 0; i < aOf.length; i++) {
    const aView = makeView(backend, aBase + 4 * aOf[i]! * m * k, m * k);
    const bView = makeView(backend, bBase + 4 * bOf[i]! * k * n, k * n);
    const outView = makeView(backend, outBase + 4 * i * m * n, m * n);
    try {
      product2D(backend, aView, bView, outView, m, k, n);
    } finally {
      dropView(backend, aView);
      dropView(backend, bView);
      dropView(backend, outView);
    }
  }
}

function fastBatchMatMul(stock: KernelFunc): KernelFunc {
  return (args) => {
    const backend = args.backend as BackendWasm;
    const { a, b } = args.inputs as { a: TensorInfo; b: TensorInfo };
    const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
    if (a.dtype !== 'float32' || b.dtype !== 'float32') return stock(args);
    const p = plan(a, b, transposeA, transposeB);
    const out = allocate(backend, [...p.outOuter, p.m, p.n]);
    if (util.sizeFromShape(out.shape) === 0) return out;
    if (p.k === 0) {
      backend.typedArrayFromHeap(out).fill(0);
      return out;
    }
    const how = blasForNow(p, transposeA);
    if (how) {
      multiplyBlas(how, backend, a, b, out, p, transposeA, transposeB);
      return out;
    }
    const temps: TensorInfo[] = [];
    try {
      multiply(backend, untransposed(backend, a, transposeA, temps), untransposed(backend, b, transposeB, temps), out, p);
    } finally {
      for (const t of temps) freeTemp(backend, t);
    }
    return out;
  };
}

/**
 * _FusedMatMul (matMul + bias + activation): with BLAS, a linear one (with or without a bias per
 * column) is BLAS's product plus the bias. Otherwise transposed operands are transposed explicitly
 * and a batch sharing its right operand is folded into rows, so the stock kernel takes its XNNPACK
 * path; true batches keep the stock kernel.
 */
function fastFusedMatMul(stock: KernelFunc): KernelFunc {
  return (args) => {
    const backend = args.backend as BackendWasm;
    const { a, b } = args.inputs as { a: TensorInfo; b: TensorInfo };
    const attrs = args.attrs as { transposeA: boolean; transposeB: boolean };
    if (a.dtype !== 'float32' || b.dtype !== 'float32') return stock(args);
    const p = plan(a, b, attrs.transposeA, attrs.transposeB);
    const bias = (args.inputs as { bias?: TensorInfo }).bias;
    const linear = ((args.attrs as { activation?: string }).activation ?? 'linear') === 'linear';
    const how = blasForNow(p, attrs.transposeA);
    if (how && linear && (!bias || (bias.shape.length === 1 && bias.shape[0] === p.n && bias.dtype === 'float32'))) {
      const out = allocate(backend, [...p.outOuter, p.m, p.n]);
      if (util.sizeFromShape(out.shape) === 0) return out;
      if (p.k === 0) backend.typedArrayFromHeap(out).fill(0);
      else multiplyBlas(how, backend, a, b, out, p, attrs.transposeA, attrs.transposeB);
      if (bias) {
        const values = backend.typedArrayFromHeap(out);
        const add = backend.typedArrayFromHeap(bias);
        for (let at = 0; at < values.length; at += p.n) for (let j = 0; j < p.n; j++) values[at + j]! += add[j]!;
      }
      return out;
    }
    const batchA = util.sizeFromShape(p.aOuter);
    if (util.sizeFromShape(p.bOuter) !== 1 || p.m * p.n * p.k * batchA === 0) return stock(args);
    const temps: TensorInfo[] = [];
    let alias: TensorInfo | null = null;
    try {
      const a2 = untransposed(backend, a, attrs.transposeA, temps);
      const b2 = untransposed(backend, b, attrs.transposeB, temps);
      if (!createdAs(backend, b2, p.k, p.n)) alias = makeAlias(backend, b2, [1, p.k, p.n]);
      const out = stock({
        ...args,
        inputs: { ...args.inputs, a: { ...a2, shape: [1, batchA * p.m, p.k] }, b: alias ?? { ...b2, shape: [1, p.k, p.n] } },
        attrs: { ...args.attrs, transposeA: false, transposeB: false },
      }) as TensorInfo;
      out.shape = [...p.outOuter, p.m, p.n];
      return out;
    } finally {
      if (alias) dropAlias(backend, alias);
      for (const t of temps) freeTemp(backend, t);
    }
  };
}

/** Kernel configs that replace the stock wasm BatchMatMul and _FusedMatMul (each wraps the stock one). */
export function fastMatMulKernels(): KernelConfig[] {
  const configs: KernelConfig[] = [];
  for (const [name, make] of [
    ['BatchMatMul', fastBatchMatMul],
    ['_FusedMatMul', fastFusedMatMul],
  ] as const) {
    const stock = getKernel(name, 'wasm');
    if (!stock) throw new Error(`the wasm backend has no ${name} kernel to replace`);
    configs.push({ kernelName: name, backendName: 'wasm', setupFunc: stock.setupFunc, kernelFunc: make(stock.kernelFunc) });
  }
  return configs;
}
