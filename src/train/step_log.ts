import type { Episode } from '../rollout/types';

/** A step's metrics as its stages add them, in order, and the timing of each stage (time/step_<name>). */
export class StepLog {
  readonly metrics: Record<string, number> = {};
  /** The first episodes of the step's validation, when it had one. */
  valEpisodes?: Episode[];
  private readonly started = performance.now();

  add(metrics: Record<string, number>): void {
    Object.assign(this.metrics, metrics);
  }

  /** Runs `work` and records its seconds as time/step_<name>. */
  async timed<T>(name: string, work: () => T | Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work();
    this.metrics[`time/step_${name}`] = (performance.now() - started) / 1000;
    return result;
  }

  /** Seconds since the step began. */
  get seconds(): number {
    return (performance.now() - this.started) / 1000;
  }
}
