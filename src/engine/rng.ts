/**
 * The project's one seeded random number generator: xoshiro128** (32-bit state words, fast with
 * Math.imul), seeded through splitmix32 from a hash of the seed and any stream labels. The same
 * seed and labels give the same numbers on every machine; the state can be saved and restored
 * (checkpoints resume exactly). Never use Math.random for anything a run depends on.
 *
 *   const rng = Rng.fromSeed(seed, 'env', tag);   // an independent stream per purpose
 *   rng.float(); rng.int(6); rng.shuffle(list);
 */

/** Four 32-bit words; all zero is invalid. */
export type RngState = readonly [number, number, number, number];

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Mixes 32 bits (murmur3's finaliser). */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of a seed and stream labels. Numbers up to 2^53 and strings both count fully. */
export function hashSeed(...parts: ReadonlyArray<number | string>): number {
  let h = 0x9e3779b9;
  const feed = (word: number) => {
    h = fmix32((h ^ word) + 0x9e3779b9 + (h << 6) + (h >>> 2));
  };
  for (const part of parts) {
    if (typeof part === 'number') {
      if (!Number.isSafeInteger(part) || part < 0) throw new RangeError(`seed parts must be non-negative integers, got ${part}`);
      feed(1);
      feed(part >>> 0);
      feed(Math.floor(part / 2 ** 32) >>> 0);
    } else {
      feed(2);
      for (const byte of new TextEncoder().encode(part)) feed(byte);
      feed(part.length);
    }
  }
  return h;
}

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  private constructor(state: RngState) {
    if (state.every((w) => w === 0)) throw new RangeError('an all-zero xoshiro state never changes');
    [this.s0, this.s1, this.s2, this.s3] = state.map((w) => w >>> 0) as unknown as RngState;
  }

  /** A generator for `seed`, optionally a named sub-stream (`'env', tag, groupId`). */
  static fromSeed(seed: number, ...stream: ReadonlyArray<number | string>): Rng {
    const next = splitmix32(hashSeed(seed, ...stream));
    return new Rng([next(), next(), next(), next()]);
  }

  static fromState(state: RngState): Rng {
    return new Rng(state);
  }

  state(): RngState {
    return [this.s0, this.s1, this.s2, this.s3];
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    this.s0 >>>= 0;
    this.s1 >>>= 0;
    this.s2 >>>= 0;
    return result;
  }

  /** A uniform float in [0, 1) with 53 random bits. */
  float(): number {
    const high = this.nextUint32() >>> 5; // 27 bits
    const low = this.nextUint32() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  }

  /** A uniform integer in [0, n), without modulo bias. */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > 2 ** 32) throw new RangeError(`int(n) needs 1 <= n <= 2^32, got ${n}`);
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const x = this.nextUint32();
      if (x < limit) return x % n;
    }
  }

  /** A uniform integer in [low, high] (both included). */
  intBetween(low: number, high: number): number {
    if (high < low) throw new RangeError(`intBetween(${low}, ${high}): empty range`);
    return low + this.int(high - low + 1);
  }

  /** True with probability p. */
  bernoulli(p: number): boolean {
    return this.float() < p;
  }

  /** A standard normal sample (Box-Muller). */
  normal(): number {
    const u = 1 - this.float(); // (0, 1]
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('choice() of an empty list');
    return items[this.int(items.length)]!;
  }

  /** An index drawn with probability proportional to `weights`. */
  weightedIndex(weights: readonly number[]): number {
    const total = weights.reduce((a, b) => a + b, 0);
    if (!(total > 0) || weights.some((w) => w < 0)) throw new RangeError('weights must be >= 0 with a positive sum');
    let x = this.float() * total;
    for (let i = 0; i < weights.length; i++) {
      x -= weights[i]!;
      if (x < 0) return i;
    }
    return weights.findLastIndex((w) => w > 0);
  }

  /** Shuffles in place (Fisher-Yates) and returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}
