/**
 * Our wasm kernels, registered over (or beside) tfjs's own so that every tfjs program on the wasm
 * backend uses them: the model calls plain tf.matMul / tf.gather and their gradients.
 */
import { getKernel, registerKernel, unregisterKernel, type KernelConfig } from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { causalAttentionKernels } from './attention';
import { blockGatherConfig } from './gather';
import { sharingKernels } from './identity';
import { fastMatMulKernels } from './matmul';
import { rmsNormKernels } from './rms_norm';
import { unsortedSegmentSumConfig } from './segment_sum';
import { swiGluKernels } from './swiglu';
import { tokenStatsKernels } from './token_stats';

/** The kernels ours replaced (undefined where tfjs had none), while ours are installed. */
let replaced: Map<string, KernelConfig | undefined> | null = null;

function register(name: string, config: KernelConfig | undefined): void {
  if (getKernel(name, 'wasm')) unregisterKernel(name, 'wasm');
  if (config) registerKernel(config);
}

/** Registers the fast wasm kernels; idempotent. Takes effect from the next kernel call. */
export function installWasmKernels(): void {
  if (replaced) return;
  const ours = [
    ...fastMatMulKernels(),
    ...causalAttentionKernels,
    ...tokenStatsKernels,
    ...rmsNormKernels,
    ...swiGluKernels,
    ...sharingKernels(),
    unsortedSegmentSumConfig,
    blockGatherConfig(),
  ];
  replaced = new Map(ours.map((config) => [config.kernelName, getKernel(config.kernelName, 'wasm')]));
  for (const config of ours) register(config.kernelName, config);
}

/** Puts tfjs's own kernels back (for comparisons and benchmarks). */
export function uninstallWasmKernels(): void {
  if (!replaced) return;
  for (const [name, config] of replaced) register(name, config);
  replaced = null;
}
