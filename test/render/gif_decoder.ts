/**
 * A small GIF decoder written from the GIF89a specification, for checking the encoder: it reads
 * every block, decodes LZW back to colour indices and paints whole frames as RGB. It refuses
 * anything malformed (bad signature, wrong block sizes, codes that are not yet in the table, data
 * past the end code), so an encoder bug shows up as a thrown error or a wrong pixel.
 */
export interface DecodedFrame {
  width: number;
  height: number;
  rgb: Uint8Array;
  delay: number;
  disposal: number;
  usesLocalPalette: boolean;
  paletteSize: number;
}

export interface DecodedGif {
  width: number;
  height: number;
  globalPaletteSize: number | null;
  loop: number | null;
  frames: DecodedFrame[];
}

class Reader {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}
  byte(): number {
    if (this.at >= this.bytes.length) throw new Error(`GIF ends early at byte ${this.at}`);
    return this.bytes[this.at++]!;
  }
  word(): number {
    const low = this.byte();
    return low | (this.byte() << 8);
  }
  take(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw new Error(`GIF ends early: ${n} bytes wanted at ${this.at}`);
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  subBlocks(): Uint8Array {
    const parts: number[] = [];
    for (let size = this.byte(); size !== 0; size = this.byte()) parts.push(...this.take(size));
    return Uint8Array.from(parts);
  }
}

/** Decodes one image's LZW stream into `count` colour indices. */
export function lzwDecode(data: Uint8Array, minCodeSize: number, count: number): Uint8Array {
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  const out = new Uint8Array(count);
  let written = 0;
  let bitPos = 0;
  const readCode = (width: number): number => {
    let code = 0;
    for (let i = 0; i < width; i++, bitPos++) {
      const byte = data[bitPos >> 3];
      if (byte === undefined) throw new Error('LZW data ends before the end code');
      code |= ((byte >> (bitPos & 7)) & 1) << i;
    }
    return code;
  };
  let dict: number[][] = [];
  let width = minCodeSize + 1;
  let previous: number[] | null = null;
  const resetTable = () => {
    dict = Array.from({ length: clear }, (_, i) => [i]);
    dict.push([], []);
    width = minCodeSize + 1;
    previous = null;
  };
  resetTable();
  let sawClear = false;
  for (;;) {
    const code = readCode(width);
    if (code === clear) {
      resetTable();
      sawClear = true;
      continue;
    }
    if (!sawClear) throw new Error('LZW data does not start with a clear code');
    if (code === end) break;
    let entry: number[];
    if (code < dict.length && code !== clear && code !== end) {
      entry = dict[code]!;
      if (previous && dict.length < 4096) dict.push([...previous, entry[0]!]);
    } else if (code === dict.length && previous) {
      entry = [...previous, previous[0]!];
      if (dict.length < 4096) dict.push(entry);
    } else {
      throw new Error(`LZW code ${code} is not in the table (${dict.length} entries)`);
    }
    for (const index of entry) {
      if (written >= count) throw new Error('LZW data holds more pixels than the image');
      out[written++] = index;
    }
    if (dict.length === 1 << width && width < 12) width++;
    previous = entry;
  }
  if (written !== count) throw new Error(`LZW data holds ${written} pixels, the image ${count}`);
  if (Math.ceil(bitPos / 8) !== data.length) throw new Error(`LZW data has ${data.length - Math.ceil(bitPos / 8)} bytes after the end code`);
  return out;
}

export function decodeGif(bytes: Uint8Array): DecodedGif {
  const r = new Reader(bytes);
  const signature = new TextDecoder().decode(r.take(6));
  if (signature !== 'GIF89a') throw new Error(`signature ${JSON.stringify(signature)}`);
  const width = r.word();
  const height = r.word();
  const packed = r.byte();
  r.byte(); // background colour index
  r.byte(); // aspect ratio
  let global: Uint8Array | null = null;
  if (packed & 0x80) global = r.take(3 << ((packed & 7) + 1));
  const gif: DecodedGif = { width, height, globalPaletteSize: global ? global.length / 3 : null, loop: null, frames: [] };
  const canvas = new Uint8Array(width * height * 3);
  let delay = 0;
  let disposal = 0;
  for (;;) {
    const introducer = r.byte();
    if (introducer === 0x3b) break;
    if (introducer === 0x21) {
      const label = r.byte();
      if (label === 0xf9) {
        if (r.byte() !== 4) throw new Error('graphic control block size is not 4');
        const flags = r.byte();
        disposal = (flags >> 2) & 7;
        delay = r.word();
        r.byte();
        if (r.byte() !== 0) throw new Error('graphic control block is not terminated');
      } else if (label === 0xff) {
        if (r.byte() !== 11) throw new Error('application block size is not 11');
        const app = new TextDecoder().decode(r.take(11));
        const data = r.subBlocks();
        if (app === 'NETSCAPE2.0' && data.length === 3 && data[0] === 1) gif.loop = data[1]! | (data[2]! << 8);
      } else {
        r.subBlocks();
      }
      continue;
    }
    if (introducer !== 0x2c) throw new Error(`unexpected block 0x${introducer.toString(16)} at byte ${r.at - 1}`);
    const left = r.word();
    const top = r.word();
    const w = r.word();
    const h = r.word();
    const flags = r.byte();
    if (flags & 0x40) throw new Error('interlaced frames are not expected');
    const local = flags & 0x80 ? r.take(3 << ((flags & 7) + 1)) : null;
    const palette = local ?? global;
    if (!palette) throw new Error('a frame without any palette');
    const minCodeSize = r.byte();
    const indices = lzwDecode(r.subBlocks(), minCodeSize, w * h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const index = indices[y * w + x]!;
        if (index * 3 >= palette.length) throw new Error(`index ${index} is outside the palette`);
        const at = ((top + y) * width + left + x) * 3;
        canvas.set(palette.subarray(index * 3, index * 3 + 3), at);
      }
    }
    gif.frames.push({ width, height, rgb: canvas.slice(), delay, disposal, usesLocalPalette: local !== null, paletteSize: palette.length / 3 });
  }
  if (r.at !== bytes.length) throw new Error(`${bytes.length - r.at} bytes after the trailer`);
  return gif;
}
