/**
 * How many requests are in flight to one judge (a base URL and model), across the whole process
 * (each worker thread counts its own): every env and reward binding that asks the same judge
 * waits in one queue. Where bindings give different bounds, the smallest holds.
 */
class Gate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(public limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      // hand the slot straight to the next waiter, or free it
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

const gates = new Map<string, Gate>();

export function judgeGate(key: string, limit: number): Gate {
  const gate = gates.get(key) ?? new Gate(limit);
  gate.limit = Math.min(gate.limit, limit);
  gates.set(key, gate);
  return gate;
}
