/**
 * Working with the wasm backend's tensors from a JS kernel: their ids in the C++ tensor registry,
 * temporary outputs, and zero-copy views of part of a tensor's memory.
 *
 * A view is a fresh id registered over a byte range of an existing tensor. XNNPACK caches its
 * packed right-hand operand under the operand's id until that id is disposed, so a view is
 * disposed right after its call and ids are never reused: a cached packing always matches the
 * bytes under its id.
 */
import { getKernel, type DataType, type TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

/** Emscripten's wrapper maker for an exported C function (its types are not in our type roots). */
export type Cwrap = (name: string, returns: string | null, args: string[]) => (...args: never[]) => unknown;

export function cwrapOf(module: object): Cwrap {
  return (module as { cwrap: Cwrap }).cwrap;
}

type Registry = { registerTensor(id: number, size: number, offset: number): void; disposeData(id: number): void };

/** The id the C++ side knows a tensor by. */
export function wasmId(backend: BackendWasm, info: TensorInfo): number {
  return backend.dataIdMap.get(info.dataId)!.id;
}

/** Byte offset of a tensor's data in the wasm heap. */
export function wasmOffset(backend: BackendWasm, info: TensorInfo): number {
  return backend.dataIdMap.get(info.dataId)!.memoryOffset;
}

/** A new id over `size` float32 elements starting at byte `offset`; dispose it with `dropView`. */
export function makeView(backend: BackendWasm, offset: number, size: number): number {
  // BackendWasm hands out ids from this counter; drawing from it keeps every id unique.
  const counter = backend as unknown as { dataIdNextNumber: number };
  const id = counter.dataIdNextNumber++;
  (backend.wasm.tfjs as Registry).registerTensor(id, size, offset);
  return id;
}

/** Forgets a view (and any XNNPACK operator cached under its id); the memory stays its owner's. */
export function dropView(backend: BackendWasm, id: number): void {
  (backend.wasm.tfjs as Registry).disposeData(id);
}

/**
 * True when `info`'s data was created as a `rows` x `cols` matrix (leading axes of 1 aside). A
 * reshape shares its source's data and id, so XNNPACK's packing cached under that id has the
 * shape the data was created with; only then may the id itself be the right operand.
 */
export function createdAs(backend: BackendWasm, info: TensorInfo, rows: number, cols: number): boolean {
  const shape = backend.dataIdMap.get(info.dataId)!.shape;
  return shape.length >= 2 && shape.at(-2) === rows && shape.at(-1) === cols && shape.every((d, i) => i >= shape.length - 2 || d === 1);
}

/** A tensor info over `of`'s data with a fresh id and `shape`; release it with `dropAlias`. */
export function makeAlias(backend: BackendWasm, of: TensorInfo, shape: number[]): TensorInfo {
  return backend.makeOutput(shape, of.dtype, wasmOffset(backend, of));
}

/** Forgets an alias without freeing the memory it shares. */
export function dropAlias(backend: BackendWasm, alias: TensorInfo): void {
  const id = wasmId(backend, alias);
  backend.dataIdMap.delete(alias.dataId);
  dropView(backend, id);
}

/** Frees a temporary tensor made inside a kernel. */
export function freeTemp(backend: BackendWasm, info: TensorInfo): void {
  backend.disposeData(info.dataId);
}

/** A float32 tensor of `shape` on the heap; the caller frees it or returns it. */
export function allocate(backend: BackendWasm, shape: number[], dtype: DataType = 'float32'): TensorInfo {
  return backend.makeOutput(shape, dtype);
}

/** The wasm backend's own kernel `name` (XNNPACK's softmax, vectorised elementwise ops) on heap tensors. */
export function stockKernel(name: string, backend: BackendWasm, inputs: Record<string, TensorInfo>, attrs: Record<string, unknown> = {}): TensorInfo {
  return getKernel(name, 'wasm')!.kernelFunc({ inputs, backend, attrs: attrs as never }) as TensorInfo;
}
