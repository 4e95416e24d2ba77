/**
 * Runs in its own process: 100 optimizer steps of the tiny model on webgpu (adapter in argv[2]),
 * once with an ordinary backward pass and once with gradient checkpointing, and prints as one JSON
 * line what stayed where: tensor and GPU buffer counts after steps 1, 10 and 100, whether the
 * optimizer step read anything back to the host, and where every variable's data lives after.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { startBackend } from '../../../src/engine/backend';
import type { WebGpuAdapterChoice } from '../../../src/engine/names';
import { AdamW } from '../../../src/model/optim';
import { Qwen2Model } from '../../../src/model/qwen2';
import { tinyConfig } from '../../model/tiny';
import { supervisedStep } from './training';

const STEPS = 100;
const MEASURED_AFTER = [1, 10, 100];

export interface MemoryCounts {
  numTensors: number;
  usedBuffers: number;
  bytesInGpu: number;
  bytesAllocatedInGpu: number;
}

export interface StepsReport {
  tensorsBefore: number;
  /** By the step they were measured after. */
  counts: Record<number, MemoryCounts>;
  /** Calls to the backend's read and readSync while AdamW applied its updates. */
  readsDuringOptimizerSteps: number;
  variables: { model: number; total: number; inGpuBuffers: number; withHostValues: number };
}

await startBackend('webgpu', { webgpuAdapter: process.argv[2] as WebGpuAdapterChoice });
const backend = tf.backend() as WebGPUBackend;

let reads = 0;
for (const method of ['read', 'readSync'] as const) {
  const original = backend[method].bind(backend) as (dataId: object) => unknown;
  (backend as unknown as Record<string, unknown>)[method] = (dataId: object) => {
    reads++;
    return original(dataId);
  };
}

function counts(): MemoryCounts {
  return {
    numTensors: tf.memory().numTensors,
    usedBuffers: backend.bufferManager.getNumUsedBuffers(),
    bytesInGpu: backend.bufferManager.numBytesUsed,
    bytesAllocatedInGpu: backend.bufferManager.numBytesAllocated,
  };
}

async function run(recompute: boolean, seed: number): Promise<StepsReport> {
  const model = Qwen2Model.random(tinyConfig(), { seed });
  const optimizer = new AdamW(model.trainedVariables, { weightDecay: 0.1 });
  let readsDuringOptimizerSteps = 0;
  const apply = optimizer.apply.bind(optimizer);
  optimizer.apply = (gradients, learningRate) => {
    const before = reads;
    apply(gradients, learningRate);
    readsDuringOptimizerSteps += reads - before;
  };
  const tensorsBefore = tf.memory().numTensors;
  const measured: Record<number, MemoryCounts> = {};
  for (let step = 1; step <= STEPS; step++) {
    await supervisedStep(model, optimizer, step, recompute);
    if (MEASURED_AFTER.includes(step)) measured[step] = counts();
  }
  // the model's weights and the optimizer's moments, the only variables in this engine
  const variables = Object.values(tf.engine().state.registeredVariables);
  const data = variables.map((v) => backend.tensorMap.get(v.dataId));
  const report = {
    tensorsBefore,
    counts: measured,
    readsDuringOptimizerSteps,
    variables: {
      model: model.trainedVariables.length,
      total: variables.length,
      inGpuBuffers: data.filter((d) => d.resource instanceof GPUBuffer).length,
      withHostValues: data.filter((d) => d.values != null).length,
    },
  };
  optimizer.dispose();
  model.dispose();
  return report;
}

const started = performance.now();
const plain = await run(false, 8);
const recomputed = await run(true, 9);
const seconds = (performance.now() - started) / 1000;
await Bun.write(Bun.stdout, `${JSON.stringify({ plain, recomputed, seconds })}\n`);
process.exit(0);
