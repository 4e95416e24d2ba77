/**
 * The two CRC-32s the file formats we write need: PNG chunks use the ISO-HDLC polynomial (zlib's
 * crc32), TFRecord framing uses Castagnoli's (CRC-32C). Both are the reflected, table-driven form
 * with an all-ones start and a final inversion; only the polynomial differs.
 */

function tableFor(reflectedPolynomial: number): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? reflectedPolynomial ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

function crcWith(table: Uint32Array): (bytes: Uint8Array, previous?: number) => number {
  return (bytes, previous = 0) => {
    let c = ~previous >>> 0;
    for (let i = 0; i < bytes.length; i++) c = table[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
    return ~c >>> 0;
  };
}

/** CRC-32 as PNG and zlib define it; `previous` continues a running CRC over several pieces. */
export const crc32 = crcWith(tableFor(0xedb88320));

/** CRC-32C (Castagnoli), as TFRecord framing uses it. */
export const crc32c = crcWith(tableFor(0x82f63b78));
