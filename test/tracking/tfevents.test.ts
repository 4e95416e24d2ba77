/**
 * TensorBoard event files: the bytes match what protobuf and TensorBoard's own masked CRC produce,
 * events survive a write and a read, and the reader refuses a damaged file with one line naming
 * the file and the byte where the damage is.
 */
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { concatBytes } from '../../src/util/bytes';
import { decodeFields, encodeField } from '../../src/tracking/protobuf';
import { decodeEvent, encodeEvent, EventFileWriter, FILE_VERSION, frameRecord, maskedCrc32c, readEventFile } from '../../src/tracking/tfevents';
import { crc32c } from '../../src/util/crc';
import { scratch } from '../helpers';

const ascii = (text: string) => new TextEncoder().encode(text);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('encoding, against known values', () => {
  test('CRC-32C of "123456789" is the standard check value 0xe3069283', () => {
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
    // a running CRC over pieces equals the CRC of the whole
    expect(crc32c(ascii('56789'), crc32c(ascii('1234')))).toBe(0xe3069283);
  });

  test('the mask rotates right by 15 and adds 0xa282ead8', () => {
    const crc = 0xe3069283;
    const rotated = ((crc >>> 15) | (crc << 17)) >>> 0;
    expect(rotated).toBe(0x2507c60d);
    // 0x2507c60d + 0xa282ead8 = 0xc78ab0e5, which TensorBoard's masked_crc32c(b'123456789') also gives
    expect(maskedCrc32c(ascii('123456789'))).toBe(0xc78ab0e5);
  });

  // The expected records were produced by Python protobuf's SerializeToString() with TensorBoard's
  // own masked_crc32c (tensorboard 2.21) around them.
  test('records are byte for byte what protobuf and TensorBoard write', () => {
    expect(hex(frameRecord(encodeEvent({ wallTime: 1700000000.25, step: 0, fileVersion: FILE_VERSION })))).toBe(
      '1800000000000000a37f4b220900001040fc54d9411a0d627261696e2e4576656e743a32338d2fe9',
    );
    expect(hex(frameRecord(encodeEvent({ wallTime: 1700000001.5, step: 3, values: [{ kind: 'scalar', tag: 'loss', value: 0.5 }] })))).toBe(
      '1a00000000000000129bd82d0900006040fc54d94110032a0d0a0b0a046c6f7373150000003f96253a59',
    );
    expect(hex(frameRecord(encodeEvent({ wallTime: 1700000001.5, step: 3, values: [{ kind: 'text', tag: 'note', text: 'hi' }] })))).toBe(
      '2b00000000000000861bc34b0900006040fc54d94110032a1e0a1c0a046e6f7465420808071200420268694a0a0a060a04746578742002e453b977',
    );
  });

  test('varints: 300 is ac 02, and a negative int64 takes ten bytes and comes back', () => {
    expect(hex(encodeField.varint(2, 300))).toBe('10ac02');
    const negative = encodeField.varint(2, -1);
    expect(negative.length).toBe(11);
    expect(decodeEvent(concatBytes([encodeField.double(1, 5), negative])).step).toBe(-1);
  });

  test('fields the reader does not know are skipped', () => {
    const event = concatBytes([
      encodeEvent({ wallTime: 2, step: 9, values: [{ kind: 'scalar', tag: 'x', value: 1 }] }),
      encodeField.string(6, 'a log message'),
      encodeField.varint(99, 12345),
    ]);
    expect(decodeFields(event).map((f) => f.field)).toEqual([1, 2, 5, 6, 99]);
    expect(decodeEvent(event)).toEqual({ wallTime: 2, step: 9, scalars: { x: 1 }, texts: {}, images: {} });
  });
});

describe('writing and reading back', () => {
  test('scalars, text and images round trip, after a first event that carries only the file version', () => {
    const dir = scratch();
    let clock = 1700000000.5;
    const writer = new EventFileWriter(dir, { now: () => (clock += 1), hostname: 'box' });
    expect(writer.path).toBe(join(dir, 'events.out.tfevents.1700000001.box'));
    const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 1, 2, 3);
    writer.write(0, [
      { kind: 'scalar', tag: 'actor/pg_loss', value: -0.125 },
      { kind: 'scalar', tag: 'zero', value: 0 },
    ]);
    writer.write(7, [
      { kind: 'text', tag: 'val/episode_0', text: '**bold** · ünïcode\n```\ngrid\n```' },
      { kind: 'image', tag: 'frame', width: 3, height: 2, encoded: png },
    ]);
    const events = readEventFile(writer.path);
    expect(events).toHaveLength(3);
    expect(events[0]).toEqual({ wallTime: 1700000001.5, step: 0, fileVersion: 'brain.Event:2', scalars: {}, texts: {}, images: {} });
    expect(events[1]).toEqual({ wallTime: 1700000002.5, step: 0, scalars: { 'actor/pg_loss': -0.125, zero: 0 }, texts: {}, images: {} });
    expect(events[2]!.step).toBe(7);
    expect(events[2]!.texts).toEqual({ 'val/episode_0': '**bold** · ünïcode\n```\ngrid\n```' });
    expect(events[2]!.images.frame).toEqual({ width: 3, height: 2, colorspace: 3, data: png });
  });

  test('scalars are stored as float32, as TensorBoard keeps them', () => {
    const dir = scratch();
    const writer = new EventFileWriter(dir, { now: () => 1, hostname: 'h' });
    writer.write(1, [{ kind: 'scalar', tag: 'x', value: 0.1 }]);
    expect(readEventFile(writer.path)[1]!.scalars.x).toBe(Math.fround(0.1));
  });

  test('two writers started in the same second in one folder write separate files', () => {
    const dir = scratch();
    const a = new EventFileWriter(dir, { now: () => 1700000000, hostname: 'h' });
    const b = new EventFileWriter(dir, { now: () => 1700000000, hostname: 'h' });
    expect(a.path).not.toBe(b.path);
    expect(readdirSync(dir).sort()).toEqual(['events.out.tfevents.1700000000.h', 'events.out.tfevents.1700000000.h.1']);
  });
});

describe('a damaged file is refused with one line naming the file and the byte', () => {
  /** A file of three records; returns its path and where the second record starts. */
  function threeRecords(): { path: string; second: number; bytes: Uint8Array } {
    const writer = new EventFileWriter(scratch(), { now: () => 1, hostname: 'h' });
    writer.write(1, [{ kind: 'scalar', tag: 'a', value: 1 }]);
    writer.write(2, [{ kind: 'scalar', tag: 'b', value: 2 }]);
    const bytes = new Uint8Array(readFileSync(writer.path));
    const second = 16 + Number(new DataView(bytes.buffer).getBigUint64(0, true));
    return { path: writer.path, second, bytes };
  }

  const damaged = (mend: (bytes: Uint8Array, second: number) => Uint8Array) => {
    const { path, second, bytes } = threeRecords();
    writeFileSync(path, mend(bytes, second));
    let message = '';
    try {
      readEventFile(path);
    } catch (error) {
      message = (error as Error).message;
    }
    return { path, second, message };
  };

  test('a flipped byte in a length', () => {
    const { path, second, message } = damaged((b, at) => {
      b[at + 1]! ^= 0x01;
      return b;
    });
    expect(message).toMatch(
      new RegExp(`^${path.replace(/[.]/g, '\\.')}: record at byte ${second}: length CRC mismatch \\(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\\)$`),
    );
  });

  test('a flipped byte in the data', () => {
    const { path, second, message } = damaged((b, at) => {
      b[at + 14]! ^= 0x40;
      return b;
    });
    expect(message).toStartWith(`${path}: record at byte ${second}: data CRC mismatch (stored 0x`);
    expect(message).not.toContain('\n');
  });

  test('a flipped byte in the data CRC itself', () => {
    const { second, message } = damaged((b, at) => {
      const dataEnd = at + 12 + Number(new DataView(b.buffer).getBigUint64(at, true));
      b[dataEnd]! ^= 0xff;
      return b;
    });
    expect(message).toContain(`record at byte ${second}: data CRC mismatch`);
  });

  test('a file cut in the middle of a record (a crash while writing)', () => {
    const { second, message } = damaged((b, at) => b.subarray(0, at + 20));
    expect(message).toMatch(new RegExp(`record at byte ${second}: truncated data \\(record needs \\d+ bytes, 20 left\\)$`));
    expect(damaged((b, at) => b.subarray(0, at + 5)).message).toEndWith(`record at byte ${second}: truncated header (5 of 12 bytes)`);
  });

  test('a record whose CRCs hold but whose data is not an Event', () => {
    const path = join(scratch(), 'events.out.tfevents.1.h');
    writeFileSync(
      path,
      concatBytes([frameRecord(encodeEvent({ wallTime: 1, step: 0, fileVersion: FILE_VERSION })), frameRecord(Uint8Array.of(0x0a, 0x05, 0x01))]),
    );
    expect(() => readEventFile(path)).toThrow(`${path}: record at byte 40: not an Event (field of 5 bytes at byte 2 runs past the end (3))`);
  });
});
