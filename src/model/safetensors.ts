/**
 * The safetensors weight format, read and written without a library: an 8-byte little-endian
 * header length, a JSON header ({name: {dtype, shape, data_offsets}}, optional `__metadata__`),
 * then the raw little-endian tensor bytes. Weights load as float32 (the model computes in
 * float32 on every backend) and save as float32, float16 or bfloat16.
 *
 * Also reads sharded checkpoints: `model.safetensors.index.json` maps each tensor to a shard file.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { firstLine, ModelError } from '../errors';
import { temporarySibling } from '../util/atomic';
import { displayPath } from '../util/paths';

/** A tensor in host memory, row-major. */
export interface HostTensor {
  shape: number[];
  data: Float32Array;
}

export type Weights = Map<string, HostTensor>;

export interface SafetensorsFile {
  tensors: Weights;
  /** The header's `__metadata__` string map ({} when absent). */
  metadata: Record<string, string>;
}

/** The dtypes we write. */
export type SaveDtype = 'F32' | 'F16' | 'BF16';

export const SINGLE_FILE = 'model.safetensors';
export const INDEX_FILE = 'model.safetensors.index.json';

/** Bytes per element of the dtypes we can read. */
const READABLE: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };
/** Dtypes of the format that we refuse rather than convert approximately. */
const UNSUPPORTED = ['F8_E4M3', 'F8_E5M2', 'F8_E8M0', 'F6_E2M3', 'F6_E3M2', 'F4', 'U16', 'U32', 'U64', 'C64'];
/** Python's safetensors refuses headers larger than this; so do we, before allocating one. */
const MAX_HEADER_BYTES = 100_000_000;

/** The save dtype for model_args.dtype (fp32|fp16|bf16) or a torch-style name (float32, ...). */
export function saveDtype(name: string): SaveDtype {
  switch (name.toLowerCase()) {
    case 'fp32':
    case 'float32':
    case 'f32':
      return 'F32';
    case 'fp16':
    case 'float16':
    case 'f16':
    case 'half':
      return 'F16';
    case 'bf16':
    case 'bfloat16':
      return 'BF16';
    default:
      throw new ModelError(`unknown weight dtype '${name}'; use fp32, fp16 or bf16`);
  }
}

/** The torch_dtype name config.json uses for a save dtype. */
export function torchDtypeName(dtype: SaveDtype): string {
  return { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype];
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

interface HeaderEntry {
  name: string;
  dtype: string;
  shape: number[];
  begin: number;
  end: number;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Checks the header against the data region's size; every problem is one line naming the tensor. */
function parseHeader(header: unknown, dataBytes: number, fail: (message: string) => never): { entries: HeaderEntry[]; metadata: Record<string, string> } {
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('the header is not a JSON object');
  const metadata: Record<string, string> = {};
  const entries: HeaderEntry[] = [];
  for (const [name, value] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('__metadata__ is not a map of strings');
      for (const [key, text] of Object.entries(value as Record<string, unknown>)) {
        if (typeof text !== 'string') fail(`__metadata__.${key} is not a string`);
        metadata[key] = text;
      }
      continue;
    }
    const tensor = `tensor '${name}'`;
    if (value === null || typeof value !== 'object') fail(`${tensor}: header entry is not an object`);
    const { dtype, shape, data_offsets: offsets } = value as Record<string, unknown>;
    if (typeof dtype !== 'string') fail(`${tensor}: missing dtype`);
    if (UNSUPPORTED.includes(dtype)) fail(`${tensor}: dtype ${dtype} is not supported (readable: ${Object.keys(READABLE).join(', ')})`);
    const itemBytes = READABLE[dtype];
    if (itemBytes === undefined) fail(`${tensor}: unknown dtype '${dtype}'`);
    if (!Array.isArray(shape) || !shape.every(isCount)) fail(`${tensor}: shape must be a list of non-negative integers`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) fail(`${tensor}: data_offsets must be [begin, end]`);
    const [begin, end] = offsets as [number, number];
    if (begin > end) fail(`${tensor}: data_offsets [${begin}, ${end}] end before they begin`);
    if (end > dataBytes) fail(`${tensor}: data_offsets [${begin}, ${end}] run past the end of the data (${dataBytes} bytes; truncated file?)`);
    const needed = elementCount(shape as number[]) * itemBytes;
    if (end - begin !== needed) {
      fail(`${tensor}: data_offsets [${begin}, ${end}] hold ${end - begin} bytes, but ${dtype} shape [${(shape as number[]).join(', ')}] needs ${needed}`);
    }
    entries.push({ name, dtype, shape: shape as number[], begin, end });
  }
  const byOffset = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < byOffset.length; i++) {
    const previous = byOffset[i - 1]!;
    const current = byOffset[i]!;
    if (current.begin < previous.end && current.end > current.begin) {
      fail(`tensor '${current.name}': data_offsets [${current.begin}, ${current.end}] overlap tensor '${previous.name}' [${previous.begin}, ${previous.end}]`);
    }
  }
  return { entries, metadata };
}

/** Little-endian bytes of one tensor as float32 (this assumes a little-endian host, as every supported one is). */
function toFloat32(bytes: Uint8Array, dtype: string): Float32Array {
  const buffer = bytes.buffer;
  switch (dtype) {
    case 'F32':
      return new Float32Array(buffer, bytes.byteOffset, bytes.byteLength / 4);
    case 'F16':
      return new Float32Array(new Float16Array(buffer, bytes.byteOffset, bytes.byteLength / 2));
    case 'BF16': {
      const halves = new Uint16Array(buffer, bytes.byteOffset, bytes.byteLength / 2);
      const out = new Float32Array(halves.length);
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < halves.length; i++) bits[i] = halves[i]! << 16;
      return out;
    }
    case 'F64':
      return new Float32Array(new Float64Array(buffer, bytes.byteOffset, bytes.byteLength / 8));
    case 'I64': {
      const wide = new BigInt64Array(buffer, bytes.byteOffset, bytes.byteLength / 8);
      const out = new Float32Array(wide.length);
      for (let i = 0; i < wide.length; i++) out[i] = Number(wide[i]!);
      return out;
    }
    case 'I32':
      return new Float32Array(new Int32Array(buffer, bytes.byteOffset, bytes.byteLength / 4));
    case 'I16':
      return new Float32Array(new Int16Array(buffer, bytes.byteOffset, bytes.byteLength / 2));
    case 'I8':
      return new Float32Array(new Int8Array(buffer, bytes.byteOffset, bytes.byteLength));
    default:
      return new Float32Array(bytes); // U8, BOOL
  }
}

/** Reads one .safetensors file, tensor by tensor (the file is never held in memory whole). */
export function readSafetensors(path: string): SafetensorsFile {
  const shown = displayPath(path);
  const fail = (message: string): never => {
    throw new ModelError(`${shown}: ${message}`);
  };
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return fail(`cannot open: ${firstLine(error)}`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size < 8) fail(`truncated: ${size} bytes, too short for the 8-byte header length`);
    const prefix = new Uint8Array(8);
    readSync(fd, prefix, 0, 8, 0);
    const headerLength = new DataView(prefix.buffer).getBigUint64(0, true);
    if (headerLength > BigInt(size - 8)) fail(`header length ${headerLength} is beyond the file's ${size} bytes (truncated, or not a safetensors file)`);
    if (headerLength > BigInt(MAX_HEADER_BYTES)) fail(`header length ${headerLength} is larger than ${MAX_HEADER_BYTES} bytes`);
    const headerBytes = new Uint8Array(Number(headerLength));
    readSync(fd, headerBytes, 0, headerBytes.length, 8);
    let header: unknown;
    try {
      header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
    } catch (error) {
      fail(`header is not valid JSON: ${firstLine(error)}`);
    }
    const dataStart = 8 + headerBytes.length;
    const { entries, metadata } = parseHeader(header, size - dataStart, fail);
    const tensors: Weights = new Map();
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const bytes = new Uint8Array(entry.end - entry.begin);
      const read = bytes.length === 0 ? 0 : readSync(fd, bytes, 0, bytes.length, dataStart + entry.begin);
      if (read !== bytes.length) fail(`tensor '${entry.name}': file ended after ${read} of ${bytes.length} bytes`);
      tensors.set(entry.name, { shape: entry.shape, data: toFloat32(bytes, entry.dtype) });
    }
    return { tensors, metadata };
  } finally {
    closeSync(fd);
  }
}

/** float32 -> bfloat16 bits with round-to-nearest-even, NaN kept NaN (as torch converts). */
function toBfloat16(data: Float32Array): Uint16Array {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i]!;
    if ((b & 0x7fffffff) > 0x7f800000) out[i] = (b >>> 16) | 0x0040;
    else out[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return out;
}

function encodeTensor(data: Float32Array, dtype: SaveDtype): Uint8Array {
  const typed = dtype === 'F32' ? data : dtype === 'F16' ? new Float16Array(data) : toBfloat16(data);
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
}

export interface WriteOptions {
  dtype?: SaveDtype;
  /** Extra `__metadata__` entries; `format: pt` is always written (transformers expects it). */
  metadata?: Record<string, string>;
}

/**
 * The header bytes (length prefix included) for tensors sorted by name, padded with spaces to a
 * multiple of 8 bytes as Python's safetensors does, so a single-dtype file is byte-identical.
 */
function encodeHeader(names: readonly string[], weights: ReadonlyMap<string, HostTensor>, dtype: SaveDtype, metadata: Record<string, string>): Uint8Array {
  const itemBytes = READABLE[dtype]!;
  const sortedMetadata = Object.fromEntries(Object.entries({ ...metadata, format: 'pt' }).sort(([a], [b]) => (a < b ? -1 : 1)));
  const header: Record<string, unknown> = { __metadata__: sortedMetadata };
  let offset = 0;
  for (const name of names) {
    const { shape } = weights.get(name)!;
    const bytes = elementCount(shape) * itemBytes;
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + padded).fill(0x20, 8 + json.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  return out;
}

function checkTensors(path: string, weights: ReadonlyMap<string, HostTensor>): string[] {
  const names = [...weights.keys()].sort((a, b) => (a < b ? -1 : 1));
  for (const name of names) {
    const { shape, data } = weights.get(name)!;
    if (name === '__metadata__' || name === '') throw new ModelError(`${displayPath(path)}: '${name}' cannot be a tensor name`);
    if (!shape.every((n) => isCount(n)))
      throw new ModelError(`${displayPath(path)}: tensor '${name}': shape [${shape.join(', ')}] is not a list of non-negative integers`);
    if (data.length !== elementCount(shape)) {
      throw new ModelError(`${displayPath(path)}: tensor '${name}': ${data.length} values do not fill shape [${shape.join(', ')}]`);
    }
  }
  return names;
}

/** Writes a .safetensors file atomically (temporary file, then rename). */
export function writeSafetensors(path: string, weights: ReadonlyMap<string, HostTensor>, options: WriteOptions = {}): void {
  const dtype = options.dtype ?? 'F32';
  const names = checkTensors(path, weights);
  const temporary = temporarySibling(path);
  const fd = openSync(temporary, 'w');
  try {
    writeAll(fd, encodeHeader(names, weights, dtype, options.metadata ?? {}));
    for (const name of names) writeAll(fd, encodeTensor(weights.get(name)!.data, dtype));
    closeSync(fd);
    renameSync(temporary, path);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
    rmSync(temporary, { force: true });
    throw new ModelError(`${displayPath(path)}: cannot write: ${firstLine(error)}`, { cause: error });
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** The whole checkpoint of a folder: model.safetensors, or the shards named by its index. */
export function readCheckpoint(folder: string): SafetensorsFile {
  const single = join(folder, SINGLE_FILE);
  const index = join(folder, INDEX_FILE);
  if (existsSync(single)) return readSafetensors(single);
  if (existsSync(index)) return readShardedCheckpoint(index);
  throw new ModelError(`${displayPath(folder)}: no ${SINGLE_FILE} or ${INDEX_FILE} (only safetensors weights are supported)`);
}

/** Reads the shards listed in a `model.safetensors.index.json` ({metadata, weight_map: {tensor: shard}}). */
export function readShardedCheckpoint(indexPath: string): SafetensorsFile {
  const shown = displayPath(indexPath);
  const weightMap = shardMap(indexPath);
  const byShard = new Map<string, string[]>();
  for (const [tensor, shard] of Object.entries(weightMap)) byShard.set(shard, [...(byShard.get(shard) ?? []), tensor]);
  const tensors: Weights = new Map();
  let metadata: Record<string, string> = {};
  for (const [shard, names] of [...byShard].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const shardPath = join(dirname(indexPath), shard);
    if (!existsSync(shardPath)) throw new ModelError(`${shown}: shard '${shard}' is missing (listed for tensor '${names[0]}')`);
    const file = readSafetensors(shardPath);
    metadata = { ...file.metadata, ...metadata };
    for (const name of names) {
      const tensor = file.tensors.get(name);
      if (!tensor) throw new ModelError(`${displayPath(shardPath)}: tensor '${name}' is listed in ${INDEX_FILE} but not in this shard`);
      tensors.set(name, tensor);
    }
  }
  return { tensors: new Map([...tensors].sort(([a], [b]) => (a < b ? -1 : 1))), metadata };
}

/** The index's weight_map: tensor name -> shard file name (relative to the index's folder). */
export function shardMap(indexPath: string): Record<string, string> {
  const shown = displayPath(indexPath);
  let index: unknown;
  try {
    index = JSON.parse(readFileSync(indexPath, 'utf8'));
  } catch (error) {
    throw new ModelError(`${shown}: not valid JSON: ${firstLine(error)}`);
  }
  const weightMap = (index as { weight_map?: unknown } | null)?.weight_map;
  if (weightMap === null || typeof weightMap !== 'object' || Array.isArray(weightMap)) throw new ModelError(`${shown}: no weight_map object`);
  for (const [tensor, shard] of Object.entries(weightMap)) {
    if (typeof shard !== 'string' || shard === '' || shard.includes('..') || shard.startsWith('/')) {
      throw new ModelError(`${shown}: weight_map['${tensor}'] is not a shard file name in this folder`);
    }
  }
  return weightMap as Record<string, string>;
}
