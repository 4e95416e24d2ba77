/**
 * Generation on the GPU (src/model/gpu_decode.ts) and its WGSL programs, on this CPU-only machine
 * through Dawn's OpenGL ES backend on Mesa's llvmpipe (CI installs Mesa; without it the tests are
 * skipped). The webgpu side runs in a child process (tfjs has one engine per process); this file
 * compares it with the cpu backend and with itself.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { generate } from '../../src/model/generate';
import { onCpu } from '../engine/wgsl/kernel_cases';
import { restoreBackendAfterFile } from '../helpers';
import { missing } from '../system_tools';
import { PROMPTS, requests, sharpModel } from './gpu_generate/requests';

restoreBackendAfterFile();

interface Generated {
  tokens: number[];
  logProbs: number[];
}

interface ChildReport {
  kernels: Record<string, number[][]>;
  retry: { attempts: number; failure: string };
  greedy: Generated[];
  greedyForward: Array<{ argmax: number[]; logProbs: number[] }>;
  sampled: Generated[];
  topK: Generated[];
  alone: Generated[];
  manyTogether: Generated[];
  manyAlone: Generated[];
  staggered: Record<string, Generated>;
  reused: number[];
  whole: number[];
  reusedLogProbs: number[];
  wholeLogProbs: number[];
  counts: Array<{ step: number; tensors: number; tfjsBuffers: number; gpu: { buffers: number; bytes: number } }>;
  families: Record<string, { generated: Generated[]; forward: Array<{ argmax: number[]; logProbs: number[] }> }>;
  leftTensors: number;
}

let child: ChildReport;

/** Every value within 1e-4 of the other, relative, with 1% of the output's scale as the floor near zero. */
function expectClose(got: readonly number[], want: readonly number[], what: string): void {
  expect(got.length).toBe(want.length);
  const scale = Math.max(...want.map(Math.abs));
  want.forEach((w, i) => {
    if (!(Math.abs(got[i]! - w) <= 1e-4 * Math.max(Math.abs(w), 1e-2 * scale))) throw new Error(`${what}[${i}]: webgpu ${got[i]}, expected ${w}`);
  });
}

/** Log-probs within 1e-4 (absolute: they are logs). */
function expectLogProbs(got: readonly number[], want: readonly number[], what: string): void {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => {
    if (!(Math.abs(got[i]! - w) <= 1e-4)) throw new Error(`${what}[${i}]: webgpu ${got[i]}, expected ${w}`);
  });
}

describe.skipIf(missing('mesa'))('generation on the GPU (webgpu on Mesa llvmpipe)', () => {
  beforeAll(async () => {
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'gpu_generate/child.ts')], { stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0 || err.trim() !== '') throw new Error(`the webgpu child failed (exit ${code}): ${err.trim()}`);
    child = JSON.parse(out) as ChildReport;
    await startBackend('cpu');
  }, 120_000);

  test('each WGSL program matches the cpu backend within 1e-4; sampling picks the host sampler’s tokens', async () => {
    const expected = await onCpu();
    expect(Object.keys(child.kernels).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, outputs] of Object.entries(expected)) {
      if (name === 'sample') continue;
      outputs.forEach((values, o) => expectClose(child.kernels[name]![o]!, values, `${name} output ${o}`));
    }
    const [tokens, logProbs] = expected.sample!;
    expect(child.kernels.sample![0]).toEqual(tokens!);
    expectLogProbs(child.kernels.sample![1]!, logProbs!, 'sampled log-prob');
  });

  test('a batch the device rejects is recorded once more, and rejected again fails with the device’s message on one line', () => {
    expect(child.retry.attempts).toBe(2);
    expect(child.retry.failure).toMatch(/^webgpu: .*destroyed/i);
    expect(child.retry.failure).not.toContain('\n');
  });

  test('greedy generation equals its full forward pass: the argmax ids, and log-probs within 1e-4', () => {
    child.greedy.forEach((g, i) => {
      expect(g.tokens).toEqual(child.greedyForward[i]!.argmax);
      expectLogProbs(g.logProbs, child.greedyForward[i]!.logProbs, `sequence ${i}`);
    });
  });

  test('Qwen3 (q/k norms), Llama (tied head), eight query heads per kv head and LoRA adapters on every projection equal their forward passes too', () => {
    expect(Object.keys(child.families)).toEqual(['lora', 'group8', 'qwen3', 'llama']);
    for (const [name, { generated, forward }] of Object.entries(child.families)) {
      generated.forEach((g, i) => {
        expect(g.tokens).toEqual(forward[i]!.argmax);
        expectLogProbs(g.logProbs, forward[i]!.logProbs, `${name} sequence ${i}`);
      });
    }
  });

  test('greedy, sampled and top-k generation give the cpu backend’s tokens from the same streams, log-probs within 1e-4', async () => {
    const model = sharpModel(3);
    try {
      for (const kind of ['greedy', 'sampled', 'topK'] as const) {
        const cpu = await generate(model, requests(PROMPTS, kind));
        cpu.forEach((c, i) => {
          expect(child[kind][i]!.tokens).toEqual(c.tokens);
          expectLogProbs(child[kind][i]!.logProbs, c.logProbs, `${kind} sequence ${i}`);
        });
      }
    } finally {
      model.dispose();
    }
  });

  test('a sequence generates the same bits alone or beside others: batched, joining late, in a prefill split across passes', () => {
    expect(child.alone).toEqual(child.sampled);
    expect(child.manyAlone).toEqual(child.manyTogether);
    expect(child.staggered['0']).toEqual(child.alone[0]!);
    expect(child.staggered['1']).toEqual(child.alone[1]!);
  });

  test('a cached prefix (keepCache, then past) continues with exactly what feeding the whole prompt gives', () => {
    expect(child.reused).toEqual(child.whole);
    expect(child.reusedLogProbs).toEqual(child.wholeLogProbs);
  });

  test('tensors, tfjs buffers and generation buffers stay flat over 100 steps of sequences joining and leaving; nothing is left behind', () => {
    const [at10, at100] = child.counts;
    expect(at100).toEqual({ ...at10!, step: 100 });
    expect(child.leftTensors).toBe(0);
  });
});
