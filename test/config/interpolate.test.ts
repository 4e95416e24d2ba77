import { afterEach, describe, expect, test } from 'bun:test';
import { resolveInterpolations } from '../../src/config/interpolate';

const resolve = (tree: Record<string, unknown>) => resolveInterpolations(tree as never) as Record<string, any>;

describe('interpolation', () => {
  afterEach(() => {
    delete process.env.AGENTIC_TEST_VAR;
  });

  test('a whole-value interpolation keeps the type; inside a string it is text', () => {
    const out = resolve({ seed: 3, n: '${seed}', s: 'run-${seed}', f: '${flag}', flag: false, nul: '${none}', none: null });
    expect(out.n).toBe(3);
    expect(out.s).toBe('run-3');
    expect(out.f).toBe(false);
    expect(out.nul).toBeNull();
  });

  test('dotted paths, list indices, nested mappings and lists', () => {
    const out = resolve({
      actor_train: { model_args: { dtype: 'bf16' } },
      dtype: '${actor_train.model_args.dtype}',
      tags: ['A', 'B'],
      first: '${tags[0]}',
      second: '${tags.1}',
      copy: '${actor_train}',
      list: '${tags}',
    });
    expect(out.dtype).toBe('bf16');
    expect(out.first).toBe('A');
    expect(out.second).toBe('B');
    expect(out.copy).toEqual({ model_args: { dtype: 'bf16' } });
    expect(out.list).toEqual(['A', 'B']);
  });

  test('chains resolve, in any order', () => {
    const out = resolve({ c: '${b}/c', b: '${a}/b', a: 'root' });
    expect(out.c).toBe('root/b/c');
  });

  test('relative paths: . is the holding mapping, .. its parent', () => {
    const out = resolve({ env: { size: 4, label: 'size-${.size}', inner: { up: '${..size}' } }, top: 1 });
    expect(out.env.label).toBe('size-4');
    expect(out.env.inner.up).toBe(4);
  });

  test('an interpolated mapping resolves its own interpolations where it was defined', () => {
    const out = resolve({
      vars: { steps: 10, frozen: { max_steps: '${vars.steps}', name: 'n${.max_steps}' } },
      custom_envs: { FL: '${vars.frozen}' },
      deep: '${custom_envs.FL.max_steps}',
    });
    expect(out.custom_envs.FL).toEqual({ max_steps: 10, name: 'n10' });
    expect(out.deep).toBe(10);
  });

  test('copies are independent values', () => {
    const out = resolve({ a: { x: [1] }, b: '${a}' });
    out.b.x.push(2);
    expect(out.a.x).toEqual([1]);
  });

  test('environment variables, with defaults', () => {
    process.env.AGENTIC_TEST_VAR = '12';
    const out = resolve({
      s: '${oc.env:AGENTIC_TEST_VAR}',
      n: '${oc.decode:${oc.env:AGENTIC_TEST_VAR}}',
      d: '${oc.env:AGENTIC_TEST_UNSET,fallback}',
      q: "${oc.env:AGENTIC_TEST_UNSET,'a,b'}",
      z: '${oc.env:AGENTIC_TEST_UNSET,null}',
      p: 'x/${oc.env:AGENTIC_TEST_VAR}/y',
    });
    expect(out).toEqual({ s: '12', n: 12, d: 'fallback', q: 'a,b', z: null, p: 'x/12/y' });
  });

  test('oc.select falls back when a key is missing', () => {
    const out = resolve({ a: 1, b: '${oc.select:a,9}', c: '${oc.select:nope,9}', d: '${oc.select:nope,${a}}' });
    expect(out).toMatchObject({ b: 1, c: 9, d: 1 });
  });

  test('escapes stay literal', () => {
    expect(resolve({ a: '\\${not}', b: 'x\\${y}z' })).toEqual({ a: '${not}', b: 'x${y}z' });
  });

  test('a missing key is an error naming the path that asked', () => {
    expect(() => resolve({ a: { b: '${nope.x}' } })).toThrow('a.b: ${nope.x} refers to nope.x, which does not exist');
    expect(() => resolve({ a: '${b[5]}', b: [1] })).toThrow('a: ${b[5]} refers to b[5], which does not exist');
  });

  test('a cycle is an error naming its path', () => {
    expect(() => resolve({ a: '${b}', b: '${c}', c: '${a}' })).toThrow('interpolation cycle: a -> b -> c -> a');
    expect(() => resolve({ a: { b: '${a}' } })).toThrow('interpolation cycle');
    expect(() => resolve({ a: '${a}' })).toThrow('a: interpolation cycle: a -> a');
  });

  test('other errors', () => {
    expect(() => resolve({ a: '${oc.env:AGENTIC_TEST_UNSET}' })).toThrow('a: environment variable AGENTIC_TEST_UNSET is not set');
    expect(() => resolve({ a: '${now:%Y}' })).toThrow("a: unknown resolver 'now'");
    expect(() => resolve({ a: 'x${b}', b: { c: 1 } })).toThrow('a: ${b} is a mapping and cannot be part of a string');
    expect(() => resolve({ a: '${b' })).toThrow('a: unclosed interpolation');
    expect(() => resolve({ a: '${...x}' })).toThrow('climbs above the top');
    expect(() => resolve({ pretrain: '???' })).toThrow('pretrain: missing mandatory value (???)');
  });

  test('a tree without interpolations comes back equal', () => {
    const tree = { a: 1, b: [true, null, 'x', { c: 1.5 }] };
    expect(resolve(tree)).toEqual(tree);
  });
});
