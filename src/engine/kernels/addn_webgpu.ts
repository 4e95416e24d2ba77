/**
 * AddN for the webgpu backend in groups its device can bind. tfjs's packed AddN binds every input
 * as a storage buffer in one shader; past the device's maxStorageBuffersPerShaderStage (10 on
 * Dawn's defaults, counting the output) the pipeline is invalid, and the sum silently comes back
 * wrong. Gradients meet it: a variable used in many places (a tied embedding) sums many parts.
 * Here a long sum is a tree of sums of at most (limit - 1) inputs each, on the stock kernel.
 */
import { getKernel, type KernelConfig, type KernelFunc, type TensorInfo } from '@tensorflow/tfjs-core';

interface WebGpuBackendLike {
  device: GPUDevice;
  disposeData(dataId: object): void;
}

export function groupedAddNConfig(): KernelConfig {
  const stock = getKernel('AddN', 'webgpu');
  if (!stock) throw new Error('the webgpu backend has no AddN kernel to wrap');
  const kernelFunc: KernelFunc = (args) => {
    const backend = args.backend as unknown as WebGpuBackendLike;
    const group = Math.max(2, backend.device.limits.maxStorageBuffersPerShaderStage - 1);
    let inputs = args.inputs as unknown as TensorInfo[];
    const partials: TensorInfo[] = [];
    while (inputs.length > group) {
      const next: TensorInfo[] = [];
      for (let i = 0; i < inputs.length; i += group) {
        const part = inputs.slice(i, i + group);
        const sum = part.length === 1 ? part[0]! : (stock.kernelFunc({ ...args, inputs: part as never }) as TensorInfo);
        if (part.length > 1) partials.push(sum);
        next.push(sum);
      }
      inputs = next;
    }
    const result = stock.kernelFunc({ ...args, inputs: inputs as never }) as TensorInfo;
    for (const partial of partials) backend.disposeData(partial.dataId);
    return result;
  };
  return { kernelName: 'AddN', backendName: 'webgpu', kernelFunc };
}
