/**
 * TensorBoard event files, written and read without TensorFlow: TFRecord framing around Event
 * protobufs.
 *
 *   record = uint64 LE length, masked CRC-32C of those 8 bytes, data, masked CRC-32C of the data
 *   masked(crc) = rotate crc right by 15 bits, then add 0xa282ead8 (mod 2^32)
 *
 * The first event of a file carries only `file_version: "brain.Event:2"`. Each later event has a
 * wall time, a step and a Summary whose values are scalars (`simple_value`), text (a DT_STRING
 * tensor tagged for the text plugin) or images (`Summary.Image` with a PNG). Field numbers are
 * those of TensorFlow's event.proto, summary.proto and tensor.proto.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname as machineName } from 'node:os';
import { join } from 'node:path';
import { AgenticError, firstLine } from '../errors';
import { crc32c } from '../util/crc';
import { concatBytes } from '../util/bytes';
import { decodeFields, encodeField, readDouble, readFloat, readString, WIRE_BYTES, WIRE_FIXED32, type DecodedField } from './protobuf';

export const FILE_VERSION = 'brain.Event:2';
const MASK_DELTA = 0xa282ead8;

const EVENT = { wallTime: 1, step: 2, fileVersion: 3, summary: 5 } as const;
const SUMMARY = { value: 1 } as const;
const VALUE = { tag: 1, simpleValue: 2, image: 4, tensor: 8, metadata: 9 } as const;
const IMAGE = { height: 1, width: 2, colorspace: 3, encoded: 4 } as const;
const METADATA = { pluginData: 1, dataClass: 4 } as const;
const PLUGIN_DATA = { pluginName: 1, content: 2 } as const;
const TENSOR = { dtype: 1, shape: 2, content: 4, floatVal: 5, doubleVal: 6, stringVal: 8 } as const;
const DT_FLOAT = 1;
const DT_DOUBLE = 2;
const DT_STRING = 7;
const DATA_CLASS_TENSOR = 2;
const COLORSPACE_RGB = 3;

export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return (((crc >>> 15) | (crc << 17)) + MASK_DELTA) >>> 0;
}

/** One value of a Summary. */
export type SummaryValue =
  | { kind: 'scalar'; tag: string; value: number }
  | { kind: 'text'; tag: string; text: string }
  | { kind: 'image'; tag: string; width: number; height: number; encoded: Uint8Array };

export interface TfImage {
  width: number;
  height: number;
  colorspace: number;
  /** The encoded image: a PNG, or a GIF for an episode. */
  data: Uint8Array;
}

/** An event as the reader returns it. */
export interface TfEvent {
  wallTime: number;
  step: number;
  /** Set on the first event of a file only. */
  fileVersion?: string;
  scalars: Record<string, number>;
  texts: Record<string, string>;
  images: Record<string, TfImage>;
}

function encodeValue(value: SummaryValue): Uint8Array {
  const tag = encodeField.string(VALUE.tag, value.tag);
  switch (value.kind) {
    case 'scalar':
      return concatBytes([tag, encodeField.float(VALUE.simpleValue, value.value)]);
    case 'text': {
      // the text plugin finds its data by plugin_name; its content (TextPluginData, version 0) is empty
      const metadata = encodeField.message(VALUE.metadata, [
        encodeField.message(METADATA.pluginData, [encodeField.string(PLUGIN_DATA.pluginName, 'text')]),
        encodeField.varint(METADATA.dataClass, DATA_CLASS_TENSOR),
      ]);
      const tensor = encodeField.message(VALUE.tensor, [
        encodeField.varint(TENSOR.dtype, DT_STRING),
        encodeField.message(TENSOR.shape, []), // a scalar: no dimensions
        encodeField.string(TENSOR.stringVal, value.text),
      ]);
      // fields in number order (tensor 8 before metadata 9), as protobuf itself writes them
      return concatBytes([tag, tensor, metadata]);
    }
    case 'image':
      return concatBytes([
        tag,
        encodeField.message(VALUE.image, [
          encodeField.varint(IMAGE.height, value.height),
          encodeField.varint(IMAGE.width, value.width),
          encodeField.varint(IMAGE.colorspace, COLORSPACE_RGB),
          encodeField.bytes(IMAGE.encoded, value.encoded),
        ]),
      ]);
  }
}

export function encodeEvent(event: { wallTime: number; step: number; fileVersion?: string; values?: readonly SummaryValue[] }): Uint8Array {
  // proto3 leaves a zero step out; doing the same keeps our bytes identical to protobuf's own
  const fields = [encodeField.double(EVENT.wallTime, event.wallTime)];
  if (event.step !== 0) fields.push(encodeField.varint(EVENT.step, event.step));
  if (event.fileVersion !== undefined) fields.push(encodeField.string(EVENT.fileVersion, event.fileVersion));
  if (event.values?.length)
    fields.push(
      encodeField.message(
        EVENT.summary,
        event.values.map((v) => encodeField.bytes(SUMMARY.value, encodeValue(v))),
      ),
    );
  return concatBytes(fields);
}

/** One TFRecord around `data`. */
export function frameRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + data.length);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}

const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;

/** The records of a TFRecord file, each CRC checked; `source` names the file in errors. */
export function decodeRecords(bytes: Uint8Array, source: string): Array<{ offset: number; data: Uint8Array }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: Array<{ offset: number; data: Uint8Array }> = [];
  let at = 0;
  while (at < bytes.length) {
    const fail = (why: string): never => {
      throw new AgenticError(`${source}: record at byte ${at}: ${why}`);
    };
    if (at + 12 > bytes.length) fail(`truncated header (${bytes.length - at} of 12 bytes)`);
    const lengthCrc = maskedCrc32c(bytes.subarray(at, at + 8));
    const storedLengthCrc = view.getUint32(at + 8, true);
    if (lengthCrc !== storedLengthCrc) fail(`length CRC mismatch (stored ${hex(storedLengthCrc)}, computed ${hex(lengthCrc)})`);
    const length = view.getBigUint64(at, true);
    const end = BigInt(at) + 12n + length + 4n;
    if (end > BigInt(bytes.length)) fail(`truncated data (record needs ${end - BigInt(at)} bytes, ${bytes.length - at} left)`);
    const data = bytes.subarray(at + 12, at + 12 + Number(length));
    const dataCrc = maskedCrc32c(data);
    const storedDataCrc = view.getUint32(at + 12 + data.length, true);
    if (dataCrc !== storedDataCrc) fail(`data CRC mismatch (stored ${hex(storedDataCrc)}, computed ${hex(dataCrc)})`);
    records.push({ offset: at, data });
    at = Number(end);
  }
  return records;
}

function fieldsNamed(fields: readonly DecodedField[], field: number): DecodedField[] {
  return fields.filter((f) => f.field === field);
}

function bytesOf(fields: readonly DecodedField[], field: number): Uint8Array | undefined {
  const last = fieldsNamed(fields, field).at(-1);
  return last && 'bytes' in last ? last.bytes : undefined;
}

function varintOf(fields: readonly DecodedField[], field: number): bigint | undefined {
  const last = fieldsNamed(fields, field).at(-1);
  return last && 'value' in last ? last.value : undefined;
}

/** The first number of a DT_FLOAT or DT_DOUBLE tensor (TF2 writes scalars this way). */
function tensorNumber(tensor: readonly DecodedField[]): number | undefined {
  const dtype = Number(varintOf(tensor, TENSOR.dtype) ?? 0);
  const content = bytesOf(tensor, TENSOR.content);
  if (dtype === DT_FLOAT) {
    if (content && content.length >= 4) return readFloat(content);
    const value = fieldsNamed(tensor, TENSOR.floatVal)[0];
    if (value && 'bytes' in value && value.bytes.length >= 4) return readFloat(value.bytes); // packed or single, the first float leads
  }
  if (dtype === DT_DOUBLE) {
    if (content && content.length >= 8) return readDouble(content);
    const value = fieldsNamed(tensor, TENSOR.doubleVal)[0];
    if (value && 'bytes' in value && value.bytes.length >= 8) return readDouble(value.bytes);
  }
  return undefined;
}

export function decodeEvent(data: Uint8Array): TfEvent {
  const fields = decodeFields(data);
  const wallTime = bytesOf(fields, EVENT.wallTime);
  const event: TfEvent = {
    wallTime: wallTime ? readDouble(wallTime) : 0,
    step: Number(BigInt.asIntN(64, varintOf(fields, EVENT.step) ?? 0n)),
    scalars: {},
    texts: {},
    images: {},
  };
  const version = bytesOf(fields, EVENT.fileVersion);
  if (version) event.fileVersion = readString(version);
  for (const summary of fieldsNamed(fields, EVENT.summary)) {
    if (summary.wire !== WIRE_BYTES) continue;
    for (const entry of fieldsNamed(decodeFields(summary.bytes), SUMMARY.value)) {
      if (entry.wire !== WIRE_BYTES) continue;
      const value = decodeFields(entry.bytes);
      const tag = readString(bytesOf(value, VALUE.tag) ?? new Uint8Array(0));
      const simple = fieldsNamed(value, VALUE.simpleValue).at(-1);
      if (simple && simple.wire === WIRE_FIXED32) event.scalars[tag] = readFloat(simple.bytes);
      const image = bytesOf(value, VALUE.image);
      if (image) {
        const f = decodeFields(image);
        event.images[tag] = {
          height: Number(varintOf(f, IMAGE.height) ?? 0n),
          width: Number(varintOf(f, IMAGE.width) ?? 0n),
          colorspace: Number(varintOf(f, IMAGE.colorspace) ?? 0n),
          data: bytesOf(f, IMAGE.encoded) ?? new Uint8Array(0),
        };
      }
      const tensorBytes = bytesOf(value, VALUE.tensor);
      if (tensorBytes) {
        const tensor = decodeFields(tensorBytes);
        const metadata = bytesOf(value, VALUE.metadata);
        const pluginData = metadata && bytesOf(decodeFields(metadata), METADATA.pluginData);
        const plugin = pluginData ? readString(bytesOf(decodeFields(pluginData), PLUGIN_DATA.pluginName) ?? new Uint8Array(0)) : '';
        if (Number(varintOf(tensor, TENSOR.dtype)) === DT_STRING) {
          event.texts[tag] = fieldsNamed(tensor, TENSOR.stringVal)
            .map((s) => ('bytes' in s ? readString(s.bytes) : ''))
            .join('\n');
        } else if (plugin === 'scalars') {
          const number = tensorNumber(tensor);
          if (number !== undefined) event.scalars[tag] = number;
        }
      }
    }
  }
  return event;
}

/** Every event of a file, in order; a bad CRC or a malformed event is a one-line error naming the file and byte. */
export function readEventFile(path: string): TfEvent[] {
  return decodeRecords(new Uint8Array(readFileSync(path)), path).map(({ offset, data }) => {
    try {
      return decodeEvent(data);
    } catch (error) {
      throw new AgenticError(`${path}: record at byte ${offset}: not an Event (${error instanceof Error ? error.message : String(error)})`);
    }
  });
}

/** TensorBoard's own naming: `events.out.tfevents.<unix seconds>.<hostname>`. */
export function eventFileName(unixSeconds: number, host: string): string {
  return `events.out.tfevents.${Math.floor(unixSeconds)}.${host}`;
}

export interface EventWriterOptions {
  /** Wall clock in seconds since the epoch (tests fix it). */
  now?: () => number;
  hostname?: string;
}

/**
 * Appends events to a new file in `dir`. Each event goes out in one write as it is given, so a
 * crash loses at most the event being written (a reader then reports its torn record).
 */
export class EventFileWriter {
  readonly path: string;
  private readonly now: () => number;

  constructor(dir: string, options: EventWriterOptions = {}) {
    this.now = options.now ?? (() => Date.now() / 1000);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw new AgenticError(`tensorboard: ${firstLine(error)}`);
    }
    const wallTime = this.now();
    const name = eventFileName(wallTime, options.hostname ?? machineName());
    const first = frameRecord(encodeEvent({ wallTime, step: 0, fileVersion: FILE_VERSION }));
    // two writers started in the same second in the same folder get distinct files
    for (let n = 0; ; n++) {
      const path = join(dir, n === 0 ? name : `${name}.${n}`);
      try {
        writeFileSync(path, first, { flag: 'wx' });
        this.path = path;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new AgenticError(`tensorboard: ${firstLine(error)}`);
      }
    }
  }

  write(step: number, values: readonly SummaryValue[]): void {
    try {
      appendFileSync(this.path, frameRecord(encodeEvent({ wallTime: this.now(), step, values })));
    } catch (error) {
      throw new AgenticError(`tensorboard: ${firstLine(error)}`);
    }
  }
}
