/**
 * in_flight_rollouts.json: an asynchronous run's rollouts played ahead with weights the checkpoint
 * does not hold (src/rollout_sources/async.ts), kept so that a resumed run trains on exactly the batches the
 * uninterrupted one would have. Typed arrays are written as tagged lists of numbers; float32
 * values survive the round trip through JSON's doubles exactly.
 */
import { readFileSync } from 'node:fs';
import { CheckpointError, firstLine } from '../errors';
import type { InFlight } from '../train/rollout_source';
import { displayPath } from '../util/paths';

export const IN_FLIGHT_FILE = 'in_flight_rollouts.json';

const TYPED = {
  i32: Int32Array,
  u8: Uint8Array,
  f32: Float32Array,
} as const;
type TypedTag = keyof typeof TYPED;

function tagOf(value: ArrayBufferView): TypedTag | null {
  if (value instanceof Int32Array) return 'i32';
  if (value instanceof Uint8Array) return 'u8';
  if (value instanceof Float32Array) return 'f32';
  return null;
}

export function inFlightJson(inFlight: InFlight): string {
  return JSON.stringify(inFlight, (_key, value: unknown) => {
    if (!ArrayBuffer.isView(value)) return value;
    const tag = tagOf(value);
    if (!tag) throw new Error(`in-flight rollouts: cannot save a ${value.constructor.name}`);
    return { $typed: tag, values: Array.from(value as Int32Array) };
  });
}

export function readInFlight(path: string): InFlight {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'), (_key, value: unknown) => {
      if (value && typeof value === 'object' && '$typed' in value) {
        const { $typed, values } = value as { $typed: TypedTag; values: number[] };
        const make = TYPED[$typed];
        if (!make || !Array.isArray(values)) throw new Error(`a typed array tagged ${String($typed)}`);
        return make.from(values);
      }
      return value;
    });
  } catch (error) {
    throw new CheckpointError(`${displayPath(path)}: ${firstLine(error)}`);
  }
  const inFlight = parsed as InFlight;
  if (!inFlight || !Array.isArray(inFlight.countersBefore) || !Array.isArray(inFlight.batches)) {
    throw new CheckpointError(`${displayPath(path)}: not a list of in-flight rollouts`);
  }
  return inFlight;
}
