/**
 * The webgpu backend: tfjs's WebGPU kernels on Dawn, reached through bun-webgpu's FFI bindings
 * (its native library is embedded in the compiled binary). This module is imported only when
 * webgpu is asked for, so other backends never load Dawn.
 *
 * Dawn always offers an adapter, but without a GPU it is the Null backend, which computes
 * nothing: we choose the adapter ourselves and refuse that one.
 */
import * as tf from '@tensorflow/tfjs-core';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { setupGlobals } from 'bun-webgpu';
import { dlopen, FFIType } from 'bun:ffi';
import type { WebGpuAdapterChoice } from './names';
import { AgenticError } from '../errors';
import { groupedAddNConfig } from './kernels/addn_webgpu';

/** Dawn's WGPUBackendType and WGPUAdapterType values, by number. */
const BACKEND_TYPES = ['Undefined', 'Null', 'WebGPU', 'D3D11', 'D3D12', 'Metal', 'Vulkan', 'OpenGL', 'OpenGLES'];
const NULL_BACKEND = 1;
const ADAPTER_TYPES = ['unknown type', 'discrete GPU', 'integrated GPU', 'CPU', 'unknown type'];

export interface AdapterDescription {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** Dawn's name of the native API: Vulkan, Metal, D3D12, OpenGLES, ... */
  backendType: string;
  adapterType: string;
  /** The adapter's optional features (shader-f16, timestamp-query, subgroups, ...), sorted. */
  features: string[];
  /** The limits that bound tfjs's kernels (LIMITS_SHOWN), as the adapter states them. */
  limits: Record<string, number>;
}

/** The limits that decide how large a tensor and a workgroup can be: doctor shows them, bench records them. */
export const LIMITS_SHOWN = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
] as const;

/** The fields of a GPUAdapterInfo that Dawn fills (bun-webgpu adds backendType and adapterType). */
interface DawnAdapterInfo {
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
  backendType?: number;
  adapterType?: number;
}

/** Debian/Ubuntu packages of the CPU path: Dawn opens the unversioned libEGL.so, which only the -dev package links. */
export const MESA_PACKAGES = ['libegl1', 'libegl-dev', 'libegl-mesa0', 'libgl1-mesa-dri'] as const;

const FIX = `for a GPU install its driver with the Vulkan ICD and libvulkan1 (NVIDIA: the proprietary driver); for the slow CPU path (webgpu_adapter=opengles) install Mesa: apt-get install ${MESA_PACKAGES.join(' ')}; or use backend=wasm`;

export function describeAdapter(info: DawnAdapterInfo, capabilities: Pick<GPUAdapter, 'features' | 'limits'> | null = null): AdapterDescription {
  const limits: Record<string, number> = {};
  for (const name of LIMITS_SHOWN) {
    const value = (capabilities?.limits as unknown as Record<string, unknown> | undefined)?.[name];
    if (typeof value === 'number') limits[name] = value;
  }
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
    backendType: BACKEND_TYPES[info.backendType ?? 0] ?? `backend type ${info.backendType}`,
    adapterType: ADAPTER_TYPES[info.adapterType ?? 4] ?? 'unknown type',
    features: capabilities ? [...capabilities.features].map(String).sort() : [],
    limits,
  };
}

/** One line, e.g. "llvmpipe-llvm-15-0-6-256-bits (vendor -, architecture -) via OpenGLES, unknown type; OpenGL ES 3.2 Mesa 22.3.6". */
export function formatAdapter(a: AdapterDescription): string {
  const head = `${a.device || 'unnamed device'} (vendor ${a.vendor || '-'}, architecture ${a.architecture || '-'}) via ${a.backendType}, ${a.adapterType}`;
  return a.description ? `${head}; ${a.description}` : head;
}

/** Throws unless the adapter computes: Dawn's Null adapter accepts every command and does none. */
export function refuseNullAdapter(info: DawnAdapterInfo): void {
  if (info.backendType === NULL_BACKEND) {
    throw new AgenticError(`webgpu: the only adapter Dawn found is its Null adapter, which computes nothing; ${FIX}`);
  }
}

/** Sets a variable in the C environment: Mesa's EGL reads it with getenv, which process.env does not reach. */
function setNativeEnv(name: string, value: string): void {
  if (process.platform !== 'linux') return;
  try {
    const libc = dlopen('libc.so.6', { setenv: { args: [FFIType.cstring, FFIType.cstring, FFIType.i32], returns: FFIType.i32 } });
    // overwrite = 0: a value the user set wins
    libc.symbols.setenv(Buffer.from(`${name}\0`), Buffer.from(`${value}\0`), 0);
    libc.close();
  } catch {
    // not glibc: EGL then uses its default platform, which needs a display
  }
}

/** Whether the dynamic loader finds a library by the name Dawn opens it with. */
function canOpen(library: string, symbol: string): boolean {
  try {
    dlopen(library, { [symbol]: { args: [FFIType.ptr], returns: FFIType.ptr } }).close();
    return true;
  } catch {
    return false;
  }
}

/** Asking Dawn for Vulkan without the loader prints a warning on stderr; ask only when it is there. */
function hasVulkanLoader(): boolean {
  return process.platform !== 'linux' || canOpen('libvulkan.so.1', 'vkGetInstanceProcAddr');
}

function hasEgl(): boolean {
  return process.platform !== 'linux' || canOpen('libEGL.so', 'eglGetProcAddress');
}

/** Options bun-webgpu accepts beyond the standard ones (Dawn's adapter toggles). */
type DawnAdapterOptions = GPURequestAdapterOptions & { backendType?: string; featureLevel?: 'core' | 'compatibility' };

async function request(options: DawnAdapterOptions): Promise<GPUAdapter | null> {
  return navigator.gpu.requestAdapter(options as GPURequestAdapterOptions);
}

const VULKAN: DawnAdapterOptions = { backendType: 'Vulkan', powerPreference: 'high-performance' };
// Dawn's OpenGL ES backend runs on Mesa's llvmpipe without a display only in compatibility mode
const OPENGLES: DawnAdapterOptions = { backendType: 'OpenGLES', featureLevel: 'compatibility' };

async function chooseAdapter(choice: WebGpuAdapterChoice): Promise<GPUAdapter> {
  if (choice === 'vulkan') {
    if (!hasVulkanLoader()) throw new AgenticError(`webgpu: webgpu_adapter=vulkan, but the Vulkan loader libvulkan.so.1 is not installed; ${FIX}`);
    const adapter = await request(VULKAN);
    if (!adapter) throw new AgenticError(`webgpu: webgpu_adapter=vulkan, but Vulkan reports no device; ${FIX}`);
    return adapter;
  }
  if (choice === 'opengles') {
    if (!hasEgl()) throw new AgenticError(`webgpu: webgpu_adapter=opengles, but libEGL.so is not installed; ${FIX}`);
    const adapter = await request(OPENGLES);
    if (!adapter) throw new AgenticError(`webgpu: webgpu_adapter=opengles, but EGL offers no OpenGL ES context; ${FIX}`);
    return adapter;
  }
  if (process.platform !== 'linux') {
    // Metal or D3D12: Dawn's default high-performance adapter is the GPU when there is one
    const adapter = await request({ powerPreference: 'high-performance' });
    if (!adapter) throw new AgenticError(`webgpu: Dawn found no adapter; use backend=wasm`);
    return adapter;
  }
  const gpu = hasVulkanLoader() ? await request(VULKAN) : null;
  if (gpu) return gpu;
  const mesa = hasEgl() ? await request(OPENGLES) : null;
  if (mesa) return mesa;
  throw new AgenticError(
    `webgpu: no usable adapter (no Vulkan device${hasEgl() ? ', and EGL offers no OpenGL ES context' : ', and no libEGL.so for OpenGL ES'}); ${FIX}`,
  );
}

/** Every limit of the adapter, by name: tfjs's buffers and workgroups outgrow the defaults. */
function allLimits(adapter: GPUAdapter): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const key of Object.keys(adapter.limits)) {
    const value = (adapter.limits as unknown as Record<string, unknown>)[key];
    if (typeof value === 'number' && key.startsWith('m')) limits[key] = value;
  }
  return limits;
}

let started: { choice: WebGpuAdapterChoice; adapter: AdapterDescription } | null = null;

/** Registers tfjs's webgpu backend on the chosen adapter (once per process) and returns the adapter. */
export async function registerWebGpu(choice: WebGpuAdapterChoice): Promise<AdapterDescription> {
  if (started) {
    if (started.choice !== choice) {
      throw new AgenticError(`webgpu already runs on ${formatAdapter(started.adapter)} in this process; it cannot switch to webgpu_adapter=${choice}`);
    }
    return started.adapter;
  }
  if (choice !== 'vulkan') setNativeEnv('EGL_PLATFORM', 'surfaceless');
  try {
    await setupGlobals();
  } catch (error) {
    throw new AgenticError(`webgpu: Dawn's library did not load (${(error as Error).message.split('\n')[0]}); use backend=wasm`, { cause: error });
  }
  const adapter = await chooseAdapter(choice);
  const info = (adapter as unknown as { info: DawnAdapterInfo }).info;
  refuseNullAdapter(info);
  // both cost nothing to ask for: shader-f16 lets half-precision kernels compile where the adapter
  // has it; timestamp-query lets tf.profile time each kernel (tfjs writes timestamps only then)
  const requiredFeatures = ['shader-f16', 'timestamp-query'].filter((feature) => adapter.features.has(feature as GPUFeatureName));
  const device = await adapter.requestDevice({ requiredFeatures, requiredLimits: allLimits(adapter) } as GPUDeviceDescriptor);
  provideResourceClasses(device);
  const description = describeAdapter(info, adapter);
  tf.registerBackend('webgpu', () => new WebGPUBackend(device, { vendor: description.vendor, architecture: description.architecture } as GPUAdapterInfo));
  const addN = groupedAddNConfig();
  tf.unregisterKernel('AddN', 'webgpu');
  tf.registerKernel(addN);
  started = { choice, adapter: description };
  return description;
}

/** tfjs checks tensors' resources with `instanceof GPUBuffer` / `GPUTexture`, globals bun-webgpu does not set. */
function provideResourceClasses(device: GPUDevice): void {
  const scope = globalThis as Record<string, unknown>;
  if (!scope.GPUBuffer) {
    const buffer = device.createBuffer({ size: 4, usage: GPUBufferUsage.COPY_DST });
    scope.GPUBuffer = buffer.constructor;
    buffer.destroy();
  }
  if (!scope.GPUTexture) {
    const texture = device.createTexture({ size: [1, 1], format: 'r32float', usage: GPUTextureUsage.COPY_DST });
    scope.GPUTexture = texture.constructor;
    texture.destroy();
  }
}
