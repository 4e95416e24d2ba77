/**
 * What the main-job benchmark (./main_job.ts) reads from one timed run: its step times, stage
 * times and tokens from metrics.jsonl, which matmuls it ran from its start line, and the model
 * FLOPs of its steps against a measured peak. Pure: tested on text, no run needed.
 */

/** One run's steps, step 0 left out (it warms up: first kernels, first allocations). */
export interface RunSummary {
  /** Mean seconds of the timed steps. */
  step_s: number;
  /** Each timed step's seconds (time/step_total), steps 1 to N-1. */
  steps_s: number[];
  /** Mean seconds playing the episodes (time/rollout: generation and the environments). */
  rollout_s: number;
  /** Mean seconds of actor_train's update (time/step_actor_train: ppo_epochs passes, forward and backward). */
  update_s: number;
  /** Mean seconds of every timed stage the steps report (time/rollout and each time/step_<stage>). */
  stages_s: Record<string, number>;
  /** Mean tokens per second of a step (system/tps: the trained rows' tokens over the step's time). */
  tokens_s: number;
  /** Mean tokens of a step's trained rows (prompts and responses). */
  tokens: number;
  /** Mean tokens the rollout generated in a step (rollout/generated_tokens: the responses). */
  generated_tokens: number;
}

interface MetricsLine {
  step: number;
  metrics: Record<string, number>;
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The summary of a run of `steps` steps from its metrics.jsonl. Lines of step `steps` and beyond
 * (the final validation's report) are left out, and so is step 0.
 */
export function summarizeMetrics(jsonl: string, steps: number): RunSummary {
  const timed = jsonl
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as MetricsLine)
    .filter((line) => line.step >= 1 && line.step < steps);
  if (timed.length !== steps - 1) throw new Error(`metrics.jsonl has ${timed.length} of the ${steps - 1} timed steps (1 to ${steps - 1})`);
  const meanOf = (key: string) => mean(timed.map((line) => line.metrics[key] ?? 0));
  const stageKeys = [...new Set(timed.flatMap((line) => Object.keys(line.metrics)))].filter(
    (key) => key === 'time/rollout' || (key.startsWith('time/step_') && key !== 'time/step_total'),
  );
  const stepsS = timed.map((line) => line.metrics['time/step_total']!);
  return {
    step_s: mean(stepsS),
    steps_s: stepsS,
    rollout_s: meanOf('time/rollout'),
    update_s: meanOf('time/step_actor_train'),
    stages_s: Object.fromEntries(stageKeys.map((key) => [key.replace(/^time\/(step_)?/, ''), meanOf(key)])),
    tokens_s: meanOf('system/tps'),
    // the step's tokens over its seconds, times its seconds
    tokens: mean(timed.map((line) => line.metrics['system/tps']! * line.metrics['time/step_total']!)),
    generated_tokens: meanOf('rollout/generated_tokens'),
  };
}

/** What a step multiplies, as ROLL's default run does it: generation, the reference, the update. */
export interface StepWork {
  params: number;
  /** Tokens of the step's rows (prompts and responses). */
  tokens: number;
  ppoEpochs: number;
  /** Whether the reference model scores the rows (a KL loss or KL reward). */
  reference: boolean;
}

/**
 * Model FLOPs of a step: 2 per parameter per token for each forward pass (the rollout's
 * generation, whose prompts and responses are the rows, and the reference's scoring) and 6 for
 * each of the update's ppo_epochs passes (forward and backward). Attention's own products are
 * left out: at these sequence lengths they are a few percent.
 */
export function stepFlops(work: StepWork): number {
  const passes = 2 + (work.reference ? 2 : 0) + 6 * work.ppoEpochs;
  return passes * work.params * work.tokens;
}

/** Model FLOPs utilisation: the step's model FLOPs over its seconds, against a peak in GFLOP/s. */
export function mfu(flops: number, stepSeconds: number, peakGflops: number): number {
  return flops / stepSeconds / (peakGflops * 1e9);
}

/**
 * Who computed the matmuls, from a run's start line (`backend wasm (...; matmuls: OpenBLAS 0.3.21
 * (libopenblas.so.0, 2 threads) (blas=auto))`). A wasm line without `matmuls:` comes from a
 * version before the BLAS path, whose matmuls were always XNNPACK's.
 */
export function matmulsOf(backendLine: string): string {
  const at = backendLine.indexOf('matmuls: ');
  if (at >= 0) return backendLine.slice(at + 'matmuls: '.length).replace(/\)$/, '');
  return /^backend wasm\b/.test(backendLine) ? 'XNNPACK (a version without the BLAS path)' : 'unknown';
}

/** The engine of a matmuls description: XNNPACK, or the library's name (OpenBLAS, BLIS, ...). */
export function matmulEngine(matmuls: string): string {
  return matmuls.split(/[\s(]/)[0]!;
}

/** Their mean step time over ours: above 1, ours is faster. */
export function speedRatio(ours: number, theirs: number): number {
  return theirs / ours;
}
