/**
 * How long a waiting thread of the wasm pool polls before it sleeps, chosen once the process knows
 * who computes its matmuls (the bound is a shared word the pool reads when a wait begins:
 * ./wasm_spin.ts).
 *
 * - Matmuls on XNNPACK: the pool runs every product, thousands of short operations a step with
 *   tens of microseconds of JavaScript between them, and a thread that sleeps between two of them
 *   costs a futex wake-up each time. Measured on the default run (issue #44): 8.1 s a step at 1000
 *   polls, 5.0 s at 100,000, 4.8 s at XNNPACK's own 1,000,000, which collapses two processes side
 *   by side (0.25x each). SPIN_XNNPACK is the 100,000 between them.
 * - Matmuls on a system BLAS: the pool runs only the element-wise operations between products, and
 *   its idle threads would spin on the cores BLAS's own threads compute on (the step took 5.95 s
 *   at 1,000,000 polls against 3.48 s at 1000). SPIN_BLAS is 1000.
 * - AGENTIC_WASM_SPIN=N fixes the bound at N polls.
 */
import { ConfigError } from '../../errors';
import { spinBoundOf } from './wasm_spin';

const SPIN_ENV = 'AGENTIC_WASM_SPIN';
/** About 100 microseconds: the JavaScript between two operations, not a time slice. */
export const SPIN_XNNPACK = 100_000;
/** About a microsecond: back-to-back operations still find their threads awake. */
export const SPIN_BLAS = 1000;

export interface SpinChoice {
  polls: number;
  why: string;
}

/** The bound for the wasm pool: AGENTIC_WASM_SPIN when set, else by who computes the matmuls. */
export function spinChoice(matmulsOnBlas: boolean, env: Record<string, string | undefined> = process.env): SpinChoice {
  const raw = env[SPIN_ENV];
  if (raw !== undefined && raw.trim() !== '') {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 31 - 1) {
      throw new ConfigError(`${SPIN_ENV}=${raw} is not a number of polls: give a whole number from 1 to ${2 ** 31 - 1}`);
    }
    return { polls: spinBoundOf(n), why: `${SPIN_ENV}=${raw}` };
  }
  return matmulsOnBlas
    ? { polls: SPIN_BLAS, why: "BLAS's threads need the cores between products" }
    : { polls: SPIN_XNNPACK, why: 'XNNPACK: the gaps between operations, not a time slice' };
}

/** The choice in words, for the run's start line and `agentic doctor`. */
export function describeSpin(choice: SpinChoice): string {
  return `idle threads sleep after ${choice.polls} polls (${choice.why})`;
}
