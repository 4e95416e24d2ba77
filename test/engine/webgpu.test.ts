/**
 * The webgpu backend, on this CPU-only machine through Dawn's OpenGL ES backend on Mesa's
 * llvmpipe (CI installs Mesa; without it the tests are skipped). tfjs keeps one engine per
 * process, so webgpu runs in child processes (webgpu/child.ts: the shared cases, whose results are
 * compared here with the cpu backend's; webgpu/steps_child.ts: 100 training steps and what they
 * leave behind).
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import * as tf from '@tensorflow/tfjs-core';
import { join } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { missing } from '../system_tools';
import { CASES, runCases } from './webgpu/cases';
import type { StepsReport } from './webgpu/steps_child';

import { restoreBackendAfterFile } from '../helpers';

restoreBackendAfterFile();

interface ChildReport {
  started: { name: string; detail: string };
  results: Record<string, number[][]>;
  nullRefusal: string | null;
}

interface StepsChildReport {
  plain: StepsReport;
  recomputed: StepsReport;
}

let child: ChildReport;
let steps: StepsChildReport;
let stderr = '';

/** Runs a child script on the OpenGL ES adapter; returns what it printed on stdout and stderr. */
async function runChild(script: string): Promise<{ out: string; err: string }> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'webgpu', script), 'opengles'], { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`the webgpu child ${script} failed (exit ${code}): ${err.trim()}`);
  return { out, err };
}

describe.skipIf(missing('mesa'))('webgpu on Mesa (OpenGL ES on llvmpipe)', () => {
  beforeAll(async () => {
    // side by side: the training steps take most of the time (about 30 s on llvmpipe)
    const [cases, training] = await Promise.all([runChild('child.ts'), runChild('steps_child.ts')]);
    stderr = cases.err + training.err;
    child = JSON.parse(cases.out) as ChildReport;
    steps = JSON.parse(training.out) as StepsChildReport;
  }, 90_000);

  test('starts on the OpenGL ES adapter, passes the matMul self-check, and says nothing on stderr', () => {
    expect(child.started.name).toBe('webgpu');
    expect(child.started.detail).toContain('via OpenGLES');
    expect(stderr).toBe('');
  });

  test('matches the cpu backend within 1e-4 (relative) on every case, gradients included', async () => {
    await startBackend('cpu');
    const expected = await runCases();
    expect(Object.keys(child.results)).toEqual(Object.keys(CASES));
    for (const [name, outputs] of Object.entries(expected)) {
      const got = child.results[name]!;
      expect(got.map((o) => o.length)).toEqual(outputs.map((o) => o.length));
      outputs.forEach((values, o) => {
        const scale = Math.max(...values.map(Math.abs));
        values.forEach((want, i) => {
          const error = Math.abs(got[o]![i]! - want);
          // relative to the value, with the output's scale as the floor for values near zero
          if (!(error <= 1e-4 * Math.max(Math.abs(want), 1e-2 * scale))) {
            throw new Error(`${name} output ${o}[${i}]: webgpu ${got[o]![i]}, cpu ${want}`);
          }
        });
      });
    }
    expect(tf.getBackend()).toBe('cpu');
  });

  test('gradient checkpointing gives webgpu the same gradients as an ordinary pass, bit for bit', () => {
    expect(child.results.qwen2ModelRecomputed).toEqual(child.results.qwen2Model!.slice(1));
  });

  test('over 100 optimizer steps, ordinary and checkpointed, tensor and GPU buffer counts stay flat after warm-up', () => {
    for (const report of [steps.plain, steps.recomputed]) {
      expect(report.counts[1]!.numTensors).toBe(report.tensorsBefore);
      expect(report.counts[100]).toEqual(report.counts[10]!);
    }
  });

  test("AdamW's moments stay on the GPU: its step reads nothing back, and no variable has a copy on the host", () => {
    for (const report of [steps.plain, steps.recomputed]) {
      expect(report.readsDuringOptimizerSteps).toBe(0);
      // the weights, and a first and a second moment for each
      expect(report.variables.total).toBe(3 * report.variables.model);
      expect(report.variables.inGpuBuffers).toBe(report.variables.total);
      expect(report.variables.withHostValues).toBe(0);
    }
  });

  test("Dawn's Null adapter is refused with one line saying how to get a working one", () => {
    expect(child.nullRefusal).toMatch(
      /^webgpu: the only adapter Dawn found is its Null adapter, which computes nothing; .*libvulkan1.*apt-get install libegl1 libegl-dev libegl-mesa0 libgl1-mesa-dri; or use backend=wasm$/,
    );
    expect(child.nullRefusal).not.toContain('\n');
  });
});
