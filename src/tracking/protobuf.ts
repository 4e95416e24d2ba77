/**
 * The little of the protobuf wire format that tfevents files need, written by hand so that the
 * project carries no protobuf dependency: varints, 64- and 32-bit fixed fields, and
 * length-delimited fields (strings, bytes, nested messages). Unknown fields are skipped on
 * reading, as protobuf requires, so files from other writers decode too.
 */
import { concatBytes } from '../util/bytes';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

const encoder = new TextEncoder();

function varintBytes(value: number | bigint): number[] {
  // negative int64 values are sent as their 64-bit two's complement
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

const key = (field: number, wire: number) => varintBytes((field << 3) | wire);

/** A fixed-width field: its key, then `size` little-endian bytes that `write` puts at `at`. */
function fixedField(field: number, wire: number, size: number, write: (view: DataView, at: number) => void): Uint8Array {
  const head = key(field, wire);
  const out = new Uint8Array(head.length + size);
  out.set(head);
  write(new DataView(out.buffer), head.length);
  return out;
}

/** One encoded field each; a message is the concatenation of its fields. */
export const encodeField = {
  varint: (field: number, value: number | bigint) => Uint8Array.from([...key(field, WIRE_VARINT), ...varintBytes(value)]),
  double: (field: number, value: number) => fixedField(field, WIRE_FIXED64, 8, (view, at) => view.setFloat64(at, value, true)),
  float: (field: number, value: number) => fixedField(field, WIRE_FIXED32, 4, (view, at) => view.setFloat32(at, value, true)),
  bytes(field: number, value: Uint8Array): Uint8Array {
    return concatBytes([Uint8Array.from([...key(field, WIRE_BYTES), ...varintBytes(value.length)]), value]);
  },
  string: (field: number, value: string) => encodeField.bytes(field, encoder.encode(value)),
  message: (field: number, fields: readonly Uint8Array[]) => encodeField.bytes(field, concatBytes(fields)),
};

export type DecodedField =
  | { field: number; wire: typeof WIRE_VARINT; value: bigint }
  | { field: number; wire: typeof WIRE_FIXED64 | typeof WIRE_FIXED32 | typeof WIRE_BYTES; bytes: Uint8Array };

/** The fields of a message in order; throws a one-line Error on malformed input. */
export function decodeFields(message: Uint8Array): DecodedField[] {
  const fields: DecodedField[] = [];
  let at = 0;
  const readVarint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (at >= message.length) throw new Error(`varint runs past the end (byte ${at})`);
      const byte = message[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return BigInt.asUintN(64, value);
    }
    throw new Error(`varint longer than 10 bytes (byte ${at})`);
  };
  const take = (length: number): Uint8Array => {
    if (at + length > message.length) throw new Error(`field of ${length} bytes at byte ${at} runs past the end (${message.length})`);
    const bytes = message.subarray(at, at + length);
    at += length;
    return bytes;
  };
  while (at < message.length) {
    const tag = readVarint();
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (field === 0) throw new Error(`field number 0 at byte ${at}`);
    if (wire === WIRE_VARINT) fields.push({ field, wire, value: readVarint() });
    else if (wire === WIRE_FIXED64) fields.push({ field, wire, bytes: take(8) });
    else if (wire === WIRE_FIXED32) fields.push({ field, wire, bytes: take(4) });
    else if (wire === WIRE_BYTES) fields.push({ field, wire, bytes: take(Number(readVarint())) });
    else throw new Error(`unsupported wire type ${wire} for field ${field}`);
  }
  return fields;
}

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
export const readDouble = (bytes: Uint8Array) => view(bytes).getFloat64(0, true);
export const readFloat = (bytes: Uint8Array) => view(bytes).getFloat32(0, true);
const decoder = new TextDecoder();
export const readString = (bytes: Uint8Array) => decoder.decode(bytes);
