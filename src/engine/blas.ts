/**
 * The system's CBLAS, reached through bun:ffi: `cblas_sgemm` on pointers straight into the wasm
 * backend's heap, so a matmul costs no copy and no transpose (BLAS reads the operands where they
 * lie, transposed or not). Any CBLAS serves: OpenBLAS, BLIS or MKL on Linux, Accelerate on macOS.
 *
 * Which one: the `blas` key (or AGENTIC_BLAS, which wins): `auto` takes the first library found
 * (none found: XNNPACK's own kernels), `none` keeps XNNPACK, and a name (`openblas`, `blis`,
 * `mkl`, `accelerate`) or a path asks for that library, missing it being an error.
 */
import { dlopen, FFIType, type Pointer } from 'bun:ffi';
import { ConfigError } from '../errors';

/** CBLAS's enums (cblas.h). */
const ROW_MAJOR = 101;
const NO_TRANS = 111;
const TRANS = 112;

interface Library {
  name: string;
  /** Sonames or paths to try, in order. */
  files: readonly string[];
  /** The function that sets the library's thread count, if it has one we know. */
  setThreads?: string;
  getThreads?: string;
  version?: string;
}

const LIBRARIES: readonly Library[] = [
  {
    name: 'openblas',
    files: ['libopenblas.so.0', 'libopenblasp.so.0', 'libopenblas.so', 'libopenblas.dylib'],
    setThreads: 'openblas_set_num_threads',
    getThreads: 'openblas_get_num_threads',
    version: 'openblas_get_config',
  },
  { name: 'blis', files: ['libblis.so.4', 'libblis.so.3', 'libblis.so'], setThreads: 'bli_thread_set_num_threads', getThreads: 'bli_thread_get_num_threads' },
  { name: 'mkl', files: ['libmkl_rt.so.2', 'libmkl_rt.so'], setThreads: 'MKL_Set_Num_Threads', getThreads: 'MKL_Get_Max_Threads' },
  { name: 'accelerate', files: ['/System/Library/Frameworks/Accelerate.framework/Accelerate'] },
];

/** The Debian package that brings each library, for the error of a missing one. */
const INSTALL: Record<string, string> = {
  openblas: 'apt-get install libopenblas0-pthread',
  blis: 'apt-get install libblis4-pthread',
  mkl: 'apt-get install libmkl-rt',
  accelerate: 'Accelerate ships with macOS',
};

export const BLAS_NAMES = LIBRARIES.map((l) => l.name);

/** A `blas` value that findBlas understands: auto, none, a library name, or a path. */
export function blasChoiceProblem(choice: string): string | null {
  if (choice === 'auto' || choice === 'none' || BLAS_NAMES.includes(choice) || choice.includes('/')) return null;
  return `expected auto, none, ${BLAS_NAMES.join(', ')} or a library path, got '${choice}'`;
}

/** One line for the start line and doctor: which library, from where, with how many threads. */
export function describeBlas(blas: Blas): string {
  const threads = blas.threads();
  const version = blas.detail?.match(/^OpenBLAS [\d.]+/)?.[0] ?? blas.name;
  return `${version} (${blas.file}${threads === null ? '' : `, ${threads} thread${threads === 1 ? '' : 's'}`})`;
}

type Sgemm = (
  order: number,
  transA: number,
  transB: number,
  m: number,
  n: number,
  k: number,
  alpha: number,
  a: Pointer,
  lda: number,
  b: Pointer,
  ldb: number,
  beta: number,
  c: Pointer,
  ldc: number,
) => void;

export interface Blas {
  /** openblas, blis, mkl, accelerate, or the path asked for. */
  name: string;
  /** The file it was loaded from. */
  file: string;
  /** The library's own description (OpenBLAS: its build config), when it has one. */
  detail: string | null;
  /**
   * C[M,N] = A[M,K] B[K,N] (row-major; `transA`/`transB`: the operand is stored transposed), at
   * byte addresses.
   */
  sgemm(transA: boolean, transB: boolean, m: number, n: number, k: number, a: number, b: number, c: number): void;
  /**
   * C = alpha op(A) op(B) + beta C with leading dimensions (row strides, in floats) given: products
   * of strided views (one head of a [rows, heads, head dim] tensor) and accumulation.
   */
  gemm(
    transA: boolean,
    transB: boolean,
    m: number,
    n: number,
    k: number,
    alpha: number,
    a: number,
    lda: number,
    b: number,
    ldb: number,
    beta: number,
    c: number,
    ldc: number,
  ): void;
  /** The library's threads (null: it does not say). */
  threads(): number | null;
  setThreads(threads: number): void;
}

function load(library: Library, file: string): Blas | null {
  const symbols = {
    cblas_sgemm: {
      args: [
        FFIType.i32,
        FFIType.i32,
        FFIType.i32,
        FFIType.i32,
        FFIType.i32,
        FFIType.i32,
        FFIType.f32,
        FFIType.ptr,
        FFIType.i32,
        FFIType.ptr,
        FFIType.i32,
        FFIType.f32,
        FFIType.ptr,
        FFIType.i32,
      ],
      returns: FFIType.void,
    },
    ...(library.setThreads ? { [library.setThreads]: { args: [FFIType.i32], returns: FFIType.void } } : {}),
    ...(library.getThreads ? { [library.getThreads]: { args: [], returns: FFIType.i32 } } : {}),
    ...(library.version ? { [library.version]: { args: [], returns: FFIType.cstring } } : {}),
  };
  let opened: ReturnType<typeof dlopen>;
  try {
    opened = dlopen(file, symbols);
  } catch {
    return null;
  }
  const fns = opened.symbols as unknown as Record<string, (...args: unknown[]) => unknown>;
  const sgemm = fns.cblas_sgemm as unknown as Sgemm;
  const detail = library.version ? String(fns[library.version]!()).trim() : null;
  return {
    name: library.name,
    file,
    detail,
    sgemm: (transA, transB, m, n, k, a, b, c) =>
      sgemm(
        ROW_MAJOR,
        transA ? TRANS : NO_TRANS,
        transB ? TRANS : NO_TRANS,
        m,
        n,
        k,
        1,
        a as Pointer,
        transA ? m : k,
        b as Pointer,
        transB ? k : n,
        0,
        c as Pointer,
        n,
      ),
    gemm: (transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) =>
      sgemm(ROW_MAJOR, transA ? TRANS : NO_TRANS, transB ? TRANS : NO_TRANS, m, n, k, alpha, a as Pointer, lda, b as Pointer, ldb, beta, c as Pointer, ldc),
    threads: () => (library.getThreads ? Number(fns[library.getThreads]!()) : null),
    setThreads: (threads) => {
      if (library.setThreads) fns[library.setThreads]!(threads);
    },
  };
}

/** The first of `library`'s files that loads with a cblas_sgemm. */
function loadLibrary(library: Library): Blas | null {
  for (const file of library.files) {
    const blas = load(library, file);
    if (blas) return blas;
  }
  return null;
}

/**
 * The BLAS a choice names: `auto` (the first found, or null), `none` (null), a library name, or
 * a path (anything with a slash). A named or pathed library that does not load is an error.
 */
export function findBlas(choice: string): Blas | null {
  if (choice === 'none') return null;
  if (choice === 'auto') {
    for (const library of LIBRARIES) {
      const blas = loadLibrary(library);
      if (blas) return blas;
    }
    return null;
  }
  const known = LIBRARIES.find((l) => l.name === choice);
  if (known) {
    const blas = loadLibrary(known);
    if (!blas)
      throw new ConfigError(`blas=${choice}: no ${choice} library with cblas_sgemm found (${known.files.join(', ')}); ${INSTALL[choice]}, or set blas=auto`);
    return blas;
  }
  const problem = blasChoiceProblem(choice);
  if (problem) throw new ConfigError(`blas: ${problem}`);
  // a path to a library we know (…/libopenblas.so.0) keeps its thread setter and description
  const kind = LIBRARIES.find((l) => l.files.some((f) => choice.endsWith(f)));
  const blas = load({ ...(kind ?? { files: [] }), name: choice, files: [choice] }, choice);
  if (!blas) throw new ConfigError(`blas=${choice}: cannot load it, or it has no cblas_sgemm`);
  return blas;
}
