/** The engine's choices as config keys name them (backend, webgpu_adapter); the schema reads them here. */
export const BACKENDS = ['wasm', 'cpu', 'webgpu', 'tensorflow'] as const;
export type BackendName = (typeof BACKENDS)[number];

/** How the webgpu backend picks its adapter (see webgpu_adapter in the schema). */
export const WEBGPU_ADAPTERS = ['auto', 'vulkan', 'opengles'] as const;
export type WebGpuAdapterChoice = (typeof WEBGPU_ADAPTERS)[number];
