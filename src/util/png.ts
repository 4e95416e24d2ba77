/**
 * PNG encoding of an env's RGB frame (8-bit truecolour, no alpha): the form TensorBoard's image
 * summaries and the HTML report embed. Rows after the first use the Up filter, because rendered
 * grids repeat row after row and Up turns those repeats into zeros that deflate packs well.
 */
import { deflateSync } from 'node:zlib';
import { AgenticError } from '../errors';
import { concatBytes } from './bytes';
import { crc32 } from './crc';

/** An RGB picture: `data` holds width*height*3 bytes, row by row from the top left (an env's RgbFrame). */
export interface RgbFrame {
  width: number;
  height: number;
  data: Uint8Array;
}

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const COLOUR_TYPE_RGB = 2;
export const FILTER_NONE = 0;
export const FILTER_UP = 2;

/** Throws a one-line error unless the frame's bytes match its size. */
export function checkFrame(frame: RgbFrame): void {
  const { width, height, data } = frame;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new AgenticError(`rgb frame: width and height must be positive integers, got ${width}x${height}`);
  }
  if (data.length !== width * height * 3) {
    throw new AgenticError(`rgb frame: ${width}x${height} needs ${width * height * 3} bytes (width*height*3), got ${data.length}`);
  }
}

function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(body, 8);
  // the CRC covers the type and the body, not the length
  view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}

export function encodePng(frame: RgbFrame): Uint8Array {
  checkFrame(frame);
  const { width, height, data } = frame;
  const stride = width * 3;
  const raw = new Uint8Array(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    const row = data.subarray(y * stride, (y + 1) * stride);
    const at = y * (stride + 1);
    if (y === 0) {
      raw[at] = FILTER_NONE;
      raw.set(row, at + 1);
    } else {
      raw[at] = FILTER_UP;
      const above = data.subarray((y - 1) * stride, y * stride);
      for (let x = 0; x < stride; x++) raw[at + 1 + x] = (row[x]! - above[x]!) & 0xff;
    }
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, COLOUR_TYPE_RGB, 0, 0, 0], 8); // bit depth, colour type, compression, filter method, no interlace
  const parts = [SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', new Uint8Array(0))];
  return concatBytes(parts);
}
