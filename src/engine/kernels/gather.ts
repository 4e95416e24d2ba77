/**
 * GatherV2 for the wasm backend as block copies: every index picks one contiguous run of the
 * input (the dimensions after the axis), copied with TypedArray.set. The stock kernel walks
 * element by element with index arithmetic; compacting a decode batch's key-value cache with it
 * was three quarters of a Sokoban rollout. Batch dimensions and strings go to the stock kernel.
 */
import { GatherV2, getKernel, util, type GatherV2Attrs, type KernelConfig, type TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

export function blockGatherConfig(): KernelConfig {
  const stock = getKernel(GatherV2, 'wasm');
  if (!stock) throw new Error('the wasm backend has no GatherV2 kernel to replace');
  return {
    kernelName: GatherV2,
    backendName: 'wasm',
    setupFunc: stock.setupFunc,
    kernelFunc: (args) => {
      const { x, indices } = args.inputs as { x: TensorInfo; indices: TensorInfo };
      const { axis, batchDims } = args.attrs as unknown as GatherV2Attrs;
      if (batchDims !== 0 || x.dtype === 'string') return stock.kernelFunc(args);
      const backend = args.backend as BackendWasm;
      const at = util.parseAxisParam(axis, x.shape)[0]!;
      const size = x.shape[at]!;
      const picks = backend.readSync(indices.dataId) as Int32Array;
      for (const i of picks) {
        if (i < 0 || i >= size) throw new Error(`gather: index ${i} is outside [0, ${size - 1}]`);
      }
      const outer = util.sizeFromShape(x.shape.slice(0, at));
      const inner = util.sizeFromShape(x.shape.slice(at + 1));
      const out = backend.makeOutput([...x.shape.slice(0, at), ...indices.shape, ...x.shape.slice(at + 1)], x.dtype);
      // views after makeOutput: allocating may grow the heap and detach earlier ones
      const source = backend.typedArrayFromHeap(x);
      const target = backend.typedArrayFromHeap(out);
      for (let o = 0; o < outer; o++) {
        for (let j = 0; j < picks.length; j++) {
          const from = (o * size + picks[j]!) * inner;
          target.set(source.subarray(from, from + inner), (o * picks.length + j) * inner);
        }
      }
      return out;
    },
  };
}
