/**
 * An episode's time budget (episode_timeout_s), the straggler guard of both kinds of episode (an
 * env's, episode.ts; an outside agent's, agent_episode.ts): whatever is raced against it and still
 * in flight when it runs out is abandoned, and the episode ends as `timeout`.
 */

/** What a race against the deadline gives when the budget ran out first. */
export const EXPIRED = Symbol('expired');

export class Deadline {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly expired: Promise<typeof EXPIRED>;

  /**
   * A budget of `ms` from now (never running out for Infinity: `agentic play` lifts it while a
   * person is in the loop); `onExpire` runs when it does, before the races settle.
   */
  constructor(ms: number, onExpire?: () => void) {
    this.expired = new Promise((resolve) => {
      if (!Number.isFinite(ms)) return;
      this.timer = setTimeout(() => {
        onExpire?.();
        resolve(EXPIRED);
      }, ms);
    });
  }

  /** `work`'s result, or EXPIRED if the budget runs out first. */
  race<T>(work: Promise<T>): Promise<T | typeof EXPIRED> {
    return Promise.race([work, this.expired]);
  }

  /** Stops the clock (the episode is over). */
  clear(): void {
    clearTimeout(this.timer);
  }
}
