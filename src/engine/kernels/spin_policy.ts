/**
 * How long a waiting thread of the wasm pool polls before it sleeps, chosen while the process runs
 * (the bound is a shared word the pool reads when a wait begins: ./wasm_spin.ts).
 *
 * - Matmuls on XNNPACK: the pool runs every product, thousands of short operations a step with a
 *   few tens of microseconds of JavaScript between them. Spinning through those gaps (XNNPACK's
 *   own 1,000,000 polls) saves a futex wake-up per operation: the default run's step took 4.8 s
 *   against 8.1 s with a bound of 1000. But beside another process a spinning thread holds a core
 *   the thread it waits for needs. So the bound is adaptive: SPIN_ALONE while the process has its
 *   cores, SPIN_SHARED as soon as the kernel starts taking them away, which shows as involuntary
 *   context switches (getrusage), sampled every SAMPLE_MS.
 * - Matmuls on a system BLAS: the pool runs only the element-wise operations between products, and
 *   its idle threads would spin on the cores BLAS's own threads compute on (the step took 5.95 s
 *   at 1,000,000 polls against 3.48 s at 1000). There the bound stays SPIN_SHARED.
 * - AGENTIC_WASM_SPIN=N fixes the bound at N polls.
 */
import { ConfigError } from '../../errors';
import { spinBoundOf } from './wasm_spin';

const SPIN_ENV = 'AGENTIC_WASM_SPIN';
/** XNNPACK's own bound: about a millisecond of polling. */
export const SPIN_ALONE = 1_000_000;
/** About a microsecond: back-to-back operations still find their threads awake. */
export const SPIN_SHARED = 1000;
const SAMPLE_MS = 200;
/**
 * Involuntary context switches a second above which another process wants our cores. Alone, the
 * kernel preempts a spinning process a few times a second (its own threads, the runtime's JIT and
 * GC); beside a second busy process, hundreds of times (docs/engine.md).
 */
export const CONTENDED_SWITCHES_PER_S = 50;
/** A contended reading switches to SPIN_SHARED at once; this many calm ones in a row switch back. */
const CALM_SAMPLES_TO_SPIN = 3;

export type SpinChoice = { kind: 'fixed'; polls: number; why: string } | { kind: 'adaptive'; alone: number; shared: number; thresholdPerS: number };

/** The bound for the wasm pool: AGENTIC_WASM_SPIN when set, else by who computes the matmuls. */
export function spinChoice(matmulsOnBlas: boolean, env: Record<string, string | undefined> = process.env): SpinChoice {
  const raw = env[SPIN_ENV];
  if (raw !== undefined && raw.trim() !== '') {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 31 - 1) {
      throw new ConfigError(`${SPIN_ENV}=${raw} is not a number of polls: give a whole number from 1 to ${2 ** 31 - 1}`);
    }
    return { kind: 'fixed', polls: spinBoundOf(n), why: `${SPIN_ENV}=${raw}` };
  }
  if (matmulsOnBlas) return { kind: 'fixed', polls: SPIN_SHARED, why: "BLAS's threads need the cores between products" };
  return { kind: 'adaptive', alone: SPIN_ALONE, shared: SPIN_SHARED, thresholdPerS: CONTENDED_SWITCHES_PER_S };
}

/** The choice in words, for the run's start line and `agentic doctor`. */
export function describeSpin(choice: SpinChoice): string {
  return choice.kind === 'fixed'
    ? `idle threads sleep after ${choice.polls} polls (${choice.why})`
    : `idle threads spin ${choice.alone} polls while the cores are ours, ${choice.shared} when another process wants them`;
}

/** What a reading of the switch rate decides, given how many calm readings came in a row before it. */
export function nextSpin(choice: Extract<SpinChoice, { kind: 'adaptive' }>, switchesPerS: number, calmBefore: number): { polls: number; calm: number } {
  if (switchesPerS > choice.thresholdPerS) return { polls: choice.shared, calm: 0 };
  const calm = calmBefore + 1;
  return { polls: calm >= CALM_SAMPLES_TO_SPIN ? choice.alone : choice.shared, calm };
}

/**
 * Sets the bound now and, when adaptive, keeps setting it from the process's involuntary context
 * switches. Starts at the shared bound: a process that starts beside a busy one must not take its
 * cores for the first readings. The timer never keeps the process alive.
 */
export function governSpin(choice: SpinChoice, setBound: (polls: number) => void): void {
  if (choice.kind === 'fixed') {
    setBound(choice.polls);
    return;
  }
  let polls = choice.shared;
  setBound(polls);
  let calm = 0;
  let last = { switches: process.resourceUsage().involuntaryContextSwitches, at: performance.now() };
  const timer = setInterval(() => {
    const now = { switches: process.resourceUsage().involuntaryContextSwitches, at: performance.now() };
    const rate = ((now.switches - last.switches) * 1000) / Math.max(1, now.at - last.at);
    last = now;
    const next = nextSpin(choice, rate, calm);
    calm = next.calm;
    if (next.polls !== polls) setBound((polls = next.polls));
  }, SAMPLE_MS);
  timer.unref();
}
