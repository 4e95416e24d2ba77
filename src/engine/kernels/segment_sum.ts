/**
 * UnsortedSegmentSum for the wasm backend, which lacks it: without it the gradient of tf.gather
 * (an embedding lookup) fails on wasm. A JS loop over the heap; it is memory-bound either way.
 */
import { util, type KernelConfig, type KernelFunc, type TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { allocate } from './wasm_heap';

const unsortedSegmentSum: KernelFunc = (args) => {
  const backend = args.backend as BackendWasm;
  const { x, segmentIds } = args.inputs as { x: TensorInfo; segmentIds: TensorInfo };
  const { numSegments } = args.attrs as { numSegments: number };
  if (x.dtype !== 'float32' && x.dtype !== 'int32') {
    throw new Error(`UnsortedSegmentSum on wasm takes float32 or int32 values, got ${x.dtype}`);
  }
  const rowShape = x.shape.slice(segmentIds.shape.length);
  const row = util.sizeFromShape(rowShape);
  const out = allocate(backend, [numSegments, ...rowShape], x.dtype);
  // Views after the allocation: growing the heap detaches views taken before it.
  const values = backend.typedArrayFromHeap(x);
  const ids = backend.typedArrayFromHeap(segmentIds);
  const sums = backend.typedArrayFromHeap(out);
  sums.fill(0);
  for (let i = 0; i < ids.length; i++) {
    const segment = ids[i]!;
    // As in TensorFlow, ids outside [0, numSegments) are dropped.
    if (segment < 0 || segment >= numSegments) continue;
    const from = i * row;
    const to = segment * row;
    for (let j = 0; j < row; j++) sums[to + j] = sums[to + j]! + values[from + j]!;
  }
  return out;
};

export const unsortedSegmentSumConfig: KernelConfig = {
  kernelName: 'UnsortedSegmentSum',
  backendName: 'wasm',
  kernelFunc: unsortedSegmentSum,
};
