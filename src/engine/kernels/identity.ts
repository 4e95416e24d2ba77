/**
 * Identity, and Cast to the same dtype, for the wasm backend without copying: the output shares
 * its input's data, as on the cpu backend (tensors are immutable; a variable's assign swaps its
 * data rather than writing into it). The stock wasm kernels copy, and tfjs clones every tensor a
 * gradient saves through Identity, so a training step paid for hundreds of copies.
 */
import { Cast, Identity, getKernel, type KernelConfig, type KernelFunc, type TensorInfo } from '@tensorflow/tfjs-core';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

function shared(backend: BackendWasm, x: TensorInfo): TensorInfo {
  backend.incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
}

function wrap(name: string, make: (stock: KernelFunc) => KernelFunc): KernelConfig {
  const stock = getKernel(name, 'wasm');
  if (!stock) throw new Error(`the wasm backend has no ${name} kernel to replace`);
  return { kernelName: name, backendName: 'wasm', setupFunc: stock.setupFunc, kernelFunc: make(stock.kernelFunc) };
}

/** Kernel configs that replace the stock wasm Identity and Cast (strings and real casts go to the stock ones). */
export function sharingKernels(): KernelConfig[] {
  return [
    wrap(Identity, (stock) => (args) => {
      const { x } = args.inputs as { x: TensorInfo };
      return x.dtype === 'string' ? stock(args) : shared(args.backend as BackendWasm, x);
    }),
    wrap(Cast, (stock) => (args) => {
      const { x } = args.inputs as { x: TensorInfo };
      const { dtype } = args.attrs as { dtype: string };
      return x.dtype === dtype && dtype !== 'string' ? shared(args.backend as BackendWasm, x) : stock(args);
    }),
  ];
}
