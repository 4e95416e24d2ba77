/**
 * Runs in its own process (tfjs has one engine per process): starts webgpu on the adapter named
 * in argv[2], runs the shared cases, and prints what it saw as one JSON line. Also asks Dawn for
 * its Null adapter and reports whether agentic's check refuses it.
 */
import { startBackend } from '../../../src/engine/backend';
import { refuseNullAdapter } from '../../../src/engine/webgpu';
import type { WebGpuAdapterChoice } from '../../../src/engine/names';
import { runCases } from './cases';

const started = await startBackend('webgpu', { webgpuAdapter: process.argv[2] as WebGpuAdapterChoice });
const results = await runCases();
const nullAdapter = await navigator.gpu.requestAdapter({ backendType: 'Null' } as GPURequestAdapterOptions);
let nullRefusal: string | null = null;
try {
  refuseNullAdapter((nullAdapter as unknown as { info: Parameters<typeof refuseNullAdapter>[0] }).info);
} catch (error) {
  nullRefusal = (error as Error).message;
}
// written in full before exiting: the report outgrows a pipe's buffer, and exit drops what is still queued
await Bun.write(Bun.stdout, `${JSON.stringify({ started, results, nullRefusal })}\n`);
process.exit(0);
