import { describe, expect, test } from 'bun:test';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelError } from '../../src/errors';
import { readCheckpoint, readSafetensors, saveDtype, writeSafetensors, type HostTensor, type Weights } from '../../src/model/safetensors';
import { ROOT, scratch } from '../helpers';

const FIXTURES = join(ROOT, 'test/fixtures/safetensors');
const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as {
  mixed: Record<string, { shape: number[]; values: number[] }>;
  mixed_metadata: Record<string, string>;
  rounding_source: Record<string, { shape: number[]; values: number[] }>;
};

function tensor(shape: number[], values: number[]): HostTensor {
  return { shape, data: Float32Array.from(values) };
}

function fromRecord(record: Record<string, { shape: number[]; values: number[] }>): Weights {
  return new Map(Object.entries(record).map(([name, t]) => [name, tensor(t.shape, t.values)]));
}

/** A header-only file: the 8-byte length, then `header` as given (no padding), then `data`. */
function rawFile(header: string, data: Uint8Array = new Uint8Array(0), declaredLength?: bigint): Uint8Array {
  const json = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, declaredLength ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function errorOf(fn: () => unknown): ModelError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).not.toContain('\n');
    return error as ModelError;
  }
  throw new Error('expected a ModelError');
}

describe('reading files written by Python safetensors', () => {
  test('every dtype converts to the float32 values torch gives', () => {
    const file = readSafetensors(join(FIXTURES, 'python_mixed.safetensors'));
    expect(file.metadata).toEqual(expected.mixed_metadata);
    expect([...file.tensors.keys()].sort()).toEqual(Object.keys(expected.mixed).sort());
    for (const [name, want] of Object.entries(expected.mixed)) {
      const got = file.tensors.get(name)!;
      expect(got.shape).toEqual(want.shape);
      expect(Array.from(got.data)).toEqual(Array.from(Float32Array.from(want.values)));
    }
  });

  test('our F16 and BF16 writes are byte-identical to Python (rounding included)', () => {
    const source = fromRecord(expected.rounding_source);
    const dir = scratch();
    for (const [dtype, fixture] of [
      ['F16', 'python_f16'],
      ['BF16', 'python_bf16'],
    ] as const) {
      const path = join(dir, `${fixture}.safetensors`);
      writeSafetensors(path, source, { dtype });
      expect(Buffer.from(readFileSync(path)).equals(readFileSync(join(FIXTURES, `${fixture}.safetensors`)))).toBe(true);
    }
  });
});

describe('round trip', () => {
  const weights: Weights = new Map([
    ['z.last', tensor([2, 3], [1, -2, 3.5, 0, -0, 1e-3])],
    ['a.first', tensor([4], [0.1, 0.2, 65504, -1e5])],
    ['m.scalar', tensor([], [42])],
    ['m.empty', tensor([0, 3], [])],
  ]);

  test('F32 is exact, keeps metadata, and lays tensors out by name with an 8-byte aligned header', () => {
    const path = join(scratch(), 'model.safetensors');
    writeSafetensors(path, weights, { metadata: { step: '7' } });
    const file = readSafetensors(path);
    expect(file.metadata).toEqual({ format: 'pt', step: '7' });
    for (const [name, t] of weights) {
      expect(file.tensors.get(name)!.shape).toEqual(t.shape);
      expect(Array.from(file.tensors.get(name)!.data)).toEqual(Array.from(t.data));
    }
    const bytes = readFileSync(path);
    const headerLength = Number(bytes.readBigUInt64LE(0));
    expect(headerLength % 8).toBe(0);
    const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString());
    expect(Object.keys(header)).toEqual(['__metadata__', 'a.first', 'm.empty', 'm.scalar', 'z.last']);
    expect(header['a.first'].data_offsets).toEqual([0, 16]);
  });

  test('F16 and BF16 round to the nearest representable value', () => {
    const dir = scratch();
    const values = Float32Array.from([1, 1 + 2 ** -9, 1 + 3 * 2 ** -9, 0.1, -70000, 1e-8]);
    const one: Weights = new Map([['x', { shape: [6], data: values }]]);
    writeSafetensors(join(dir, 'h.safetensors'), one, { dtype: 'F16' });
    writeSafetensors(join(dir, 'b.safetensors'), one, { dtype: 'BF16' });
    const half = readSafetensors(join(dir, 'h.safetensors')).tensors.get('x')!.data;
    const brain = readSafetensors(join(dir, 'b.safetensors')).tensors.get('x')!.data;
    expect(Array.from(half)).toEqual([1, 1 + 2 ** -9, 1 + 3 * 2 ** -9, Math.f16round(0.1), -Infinity, 0]);
    // bfloat16 has 8 significant bits: 1 + 2^-9 ties to even (1), 1 + 3*2^-9 rounds up to 1 + 2^-7.
    expect(Array.from(brain)).toEqual([1, 1, 1 + 2 ** -7, 0.10009765625, -70144, 1.0011717677116394e-8]);
  });

  test('writing leaves no temporary file and refuses tensors whose data does not fill the shape', () => {
    const dir = scratch();
    writeSafetensors(join(dir, 'ok.safetensors'), weights);
    expect(readdirSync(dir)).toEqual(['ok.safetensors']);
    const error = errorOf(() => writeSafetensors(join(dir, 'bad.safetensors'), new Map([['w', tensor([2, 2], [1, 2, 3])]])));
    expect(error.message).toBe(`${join(dir, 'bad.safetensors')}: tensor 'w': 3 values do not fill shape [2, 2]`);
    expect(readdirSync(dir)).toEqual(['ok.safetensors']);
  });

  test('saveDtype reads model_args.dtype names', () => {
    expect([saveDtype('fp32'), saveDtype('fp16'), saveDtype('bf16'), saveDtype('bfloat16')]).toEqual(['F32', 'F16', 'BF16', 'BF16']);
    expect(errorOf(() => saveDtype('int4')).message).toBe("unknown weight dtype 'int4'; use fp32, fp16 or bf16");
  });
});

describe('bad files are one line naming the file and the tensor', () => {
  const dir = scratch();
  const cases: Array<[string, Uint8Array, string]> = [
    ['short', new Uint8Array([1, 2, 3]), 'truncated: 3 bytes, too short for the 8-byte header length'],
    ['beyond', rawFile('{}', new Uint8Array(0), 1000n), "header length 1000 is beyond the file's 10 bytes (truncated, or not a safetensors file)"],
    ['json', rawFile('{"a": '), 'header is not valid JSON'],
    ['array', rawFile('[1, 2]'), 'the header is not a JSON object'],
    ['dtype', rawFile('{"w":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}}', new Uint8Array(1)), "tensor 'w': unknown dtype 'Q7'"],
    ['fp8', rawFile('{"w":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}', new Uint8Array(1)), "tensor 'w': dtype F8_E4M3 is not supported"],
    [
      'range',
      rawFile('{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', new Uint8Array(4)),
      "tensor 'w': data_offsets [0, 8] run past the end of the data (4 bytes; truncated file?)",
    ],
    [
      'size',
      rawFile('{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', new Uint8Array(8)),
      "tensor 'w': data_offsets [0, 8] hold 8 bytes, but F32 shape [3] needs 12",
    ],
    ['order', rawFile('{"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}}', new Uint8Array(8)), "tensor 'w': data_offsets [8, 4] end before they begin"],
    [
      'shape',
      rawFile('{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', new Uint8Array(4)),
      "tensor 'w': shape must be a list of non-negative integers",
    ],
    [
      'overlap',
      rawFile('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', new Uint8Array(12)),
      "tensor 'b': data_offsets [4, 12] overlap tensor 'a' [0, 8]",
    ],
    ['metadata', rawFile('{"__metadata__":{"n":1}}'), '__metadata__.n is not a string'],
  ];
  for (const [name, bytes, message] of cases) {
    test(name, () => {
      const path = join(dir, `${name}.safetensors`);
      writeFileSync(path, bytes);
      expect(errorOf(() => readSafetensors(path)).message).toStartWith(`${path}: ${message}`);
    });
  }

  test('a file cut short inside the tensor data', () => {
    const path = join(dir, 'cut.safetensors');
    const whole = readFileSync(join(FIXTURES, 'python_mixed.safetensors'));
    writeFileSync(path, whole.subarray(0, whole.length - 10));
    expect(errorOf(() => readSafetensors(path)).message).toMatch(new RegExp(`^${path}: tensor '[^']+': data_offsets \\[\\d+, \\d+\\] run past the end`));
  });

  test('a missing file', () => {
    expect(errorOf(() => readSafetensors(join(dir, 'none.safetensors'))).message).toStartWith(`${join(dir, 'none.safetensors')}: cannot open: `);
  });
});

describe('sharded checkpoints', () => {
  function shardedFolder(): string {
    const dir = scratch();
    writeSafetensors(
      join(dir, 'model-00001-of-00002.safetensors'),
      new Map([
        ['a', tensor([2], [1, 2])],
        ['b', tensor([1], [3])],
      ]),
    );
    writeSafetensors(join(dir, 'model-00002-of-00002.safetensors'), new Map([['c', tensor([1, 1], [4])]]));
    const weight_map = { a: 'model-00001-of-00002.safetensors', b: 'model-00001-of-00002.safetensors', c: 'model-00002-of-00002.safetensors' };
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: 16 }, weight_map }));
    return dir;
  }

  test('the index gathers every tensor from its shard', () => {
    const file = readCheckpoint(shardedFolder());
    expect([...file.tensors.keys()]).toEqual(['a', 'b', 'c']);
    expect(Array.from(file.tensors.get('c')!.data)).toEqual([4]);
    expect(file.tensors.get('c')!.shape).toEqual([1, 1]);
  });

  test('a missing shard or a tensor absent from its shard is named', () => {
    const dir = shardedFolder();
    const index = join(dir, 'model.safetensors.index.json');
    const map = JSON.parse(readFileSync(index, 'utf8'));
    writeFileSync(index, JSON.stringify({ weight_map: { ...map.weight_map, d: 'model-00002-of-00002.safetensors' } }));
    expect(errorOf(() => readCheckpoint(dir)).message).toBe(
      `${join(dir, 'model-00002-of-00002.safetensors')}: tensor 'd' is listed in model.safetensors.index.json but not in this shard`,
    );
    writeFileSync(index, JSON.stringify({ weight_map: { a: 'model-00003-of-00003.safetensors' } }));
    expect(errorOf(() => readCheckpoint(dir)).message).toBe(`${index}: shard 'model-00003-of-00003.safetensors' is missing (listed for tensor 'a')`);
    writeFileSync(index, '{"weight_map": 3}');
    expect(errorOf(() => readCheckpoint(dir)).message).toBe(`${index}: no weight_map object`);
  });

  test('a folder without weights says what it looked for', () => {
    const dir = scratch();
    copyFileSync(join(FIXTURES, 'expected.json'), join(dir, 'config.json'));
    expect(errorOf(() => readCheckpoint(dir)).message).toBe(
      `${dir}: no model.safetensors or model.safetensors.index.json (only safetensors weights are supported)`,
    );
  });
});
