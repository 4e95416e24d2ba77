import { failureMetrics, type EpisodeFailures } from '../rollout/failures';
import type { Episode } from '../rollout/types';

/** A step's metrics as its stages add them, in order, and the timing of each stage (time/step_<name>). */
export class StepLog {
  readonly metrics: Record<string, number> = {};
  /** The first episodes of the step's validation, when it had one. */
  valEpisodes?: Episode[];
  /** The step's failed training episodes, when any failed. */
  failures?: EpisodeFailures;
  private readonly started = performance.now();

  add(metrics: Record<string, number>): void {
    Object.assign(this.metrics, metrics);
  }

  /** The step's failed episodes: their counts as metrics, and the kinds with their reasons when any failed. */
  addFailures(failures: EpisodeFailures): void {
    this.add(failureMetrics(failures));
    if (failures.failed > 0) this.failures = failures;
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
