/**
 * What the main-job benchmark reads from a run: step 0 and the final validation are not timed,
 * stage times and tokens are averaged over the timed steps, the start line says which matmuls
 * ran (XNNPACK for versions before the BLAS path), and the ratio reads "above 1: ours is faster".
 */
import { describe, expect, test } from 'bun:test';
import { matmulEngine, matmulsOf, mfu, speedRatio, stepFlops, summarizeMetrics } from '../../src/bench/main_job_summary';

function line(step: number, metrics: Record<string, number>): string {
  return JSON.stringify({ step, metrics });
}

/** A 3-step run's metrics.jsonl as the trainer writes it, with the final validation's report. */
const METRICS = [
  line(0, { 'time/rollout': 9, 'time/step_ref': 9, 'time/step_actor_train': 9, 'time/step_total': 30, 'system/tps': 100, 'rollout/generated_tokens': 900 }),
  line(1, {
    'time/rollout': 1,
    'time/step_ref': 0.5,
    'time/step_adv': 0.1,
    'time/step_actor_train': 2,
    'time/step_total': 4,
    'system/tps': 1000,
    'rollout/generated_tokens': 2000,
  }),
  line(2, {
    'time/rollout': 2,
    'time/step_ref': 0.5,
    'time/step_adv': 0.3,
    'time/step_actor_train': 3,
    'time/step_total': 6,
    'system/tps': 500,
    'rollout/generated_tokens': 1000,
  }),
  line(3, { 'time/step_val': 5, 'time/step_total': 5 }),
  '',
].join('\n');

describe('summarizeMetrics', () => {
  test('times steps 1 to N-1: step 0 warms up, the report after the last step is the final validation', () => {
    const summary = summarizeMetrics(METRICS, 3);
    expect(summary.steps_s).toEqual([4, 6]);
    expect(summary.step_s).toBe(5);
    expect(summary.rollout_s).toBe(1.5);
    expect(summary.update_s).toBe(2.5);
    expect(summary.stages_s).toEqual({ rollout: 1.5, ref: 0.5, adv: 0.2, actor_train: 2.5 });
  });

  test("a step's tokens are its tokens/s times its seconds", () => {
    const summary = summarizeMetrics(METRICS, 3);
    expect(summary.tokens_s).toBe(750);
    expect(summary.tokens).toBe(3500); // (1000 x 4 + 500 x 6) / 2
    expect(summary.generated_tokens).toBe(1500);
  });

  test('a run that stopped early is an error, not a shorter mean', () => {
    const stopped = METRICS.split('\n').slice(0, 2).join('\n');
    expect(() => summarizeMetrics(stopped, 3)).toThrow('metrics.jsonl has 1 of the 2 timed steps');
  });
});

describe('model FLOPs and MFU', () => {
  test('2 per parameter and token for generation and the reference, 6 for each update epoch', () => {
    expect(stepFlops({ params: 1000, tokens: 10, ppoEpochs: 2, reference: true })).toBe((2 + 2 + 12) * 1000 * 10);
    expect(stepFlops({ params: 1000, tokens: 10, ppoEpochs: 1, reference: false })).toBe(8 * 1000 * 10);
  });

  test('MFU is the FLOPs per second over the peak', () => {
    expect(mfu(50e9, 2, 100)).toBe(0.25);
  });
});

describe('which matmuls a run used', () => {
  test('from the start line of a version with the BLAS path', () => {
    const blas =
      'backend wasm (2 threads: one per available core (2 in the CPU affinity mask, no cgroup CPU quota); idle threads sleep after 1000 polls; matmuls: OpenBLAS 0.3.21 (libopenblas.so.0, 2 threads) (blas=auto))';
    expect(matmulsOf(blas)).toBe('OpenBLAS 0.3.21 (libopenblas.so.0, 2 threads) (blas=auto)');
    expect(matmulEngine(matmulsOf(blas))).toBe('OpenBLAS');
    const xnnpack = 'backend wasm (2 threads: one per available core; idle threads sleep after 1000 polls; matmuls: XNNPACK (blas=none))';
    expect(matmulsOf(xnnpack)).toBe('XNNPACK (blas=none)');
    expect(matmulEngine(matmulsOf(xnnpack))).toBe('XNNPACK');
  });

  test('a wasm start line without matmuls comes from before the BLAS path: XNNPACK', () => {
    const old = 'backend wasm (2 threads: one per available core); config recorded in /tmp/x/.agentic';
    expect(matmulEngine(matmulsOf(old))).toBe('XNNPACK');
    expect(matmulsOf('backend webgpu (NVIDIA H200)')).toBe('unknown');
  });
});

test('the ratio is their step time over ours: above 1, ours is faster', () => {
  expect(speedRatio(2, 3)).toBe(1.5);
  expect(speedRatio(4, 2)).toBe(0.5);
});
