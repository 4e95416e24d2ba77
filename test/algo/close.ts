/** Comparing host arrays of floats with numbers written by hand. */
import { expect } from 'bun:test';

/** Each entry of `actual` equals the entry of `expected` to `digits` decimals. */
export function expectClose(actual: ArrayLike<number>, expected: readonly number[], digits = 5): void {
  expect(Array.from(actual)).toEqual(expected.map((v) => expect.closeTo(v, digits)));
}

export const f32 = (...values: number[]) => Float32Array.from(values);
export const u8 = (...values: number[]) => Uint8Array.from(values);
