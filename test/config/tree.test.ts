import { describe, expect, test } from 'bun:test';
import { deleteAt, formatPath, lookup, mergeLayers, mergeOver, parseKeyPath, setAt } from '../../src/config/tree';

describe('paths', () => {
  test('format and parse', () => {
    expect(formatPath(['a', 'b', 0, 'c'])).toBe('a.b[0].c');
    expect(formatPath([])).toBe('<root>');
    expect(parseKeyPath('a.b[0].c')).toEqual(['a', 'b', 0, 'c']);
    expect(parseKeyPath('custom_envs.Frozen-Lake.env_config')).toEqual(['custom_envs', 'Frozen-Lake', 'env_config']);
    for (const bad of ['', '.a', 'a.', 'a..b', '[0]', 'a[x]', 'a b']) expect(parseKeyPath(bad)).toBeNull();
  });

  test('lookup, set and delete', () => {
    const tree = { a: { b: [1, { c: 2 }] } };
    expect(lookup(tree, ['a', 'b', 1, 'c'])).toEqual({ found: true, value: 2 });
    expect(lookup(tree, ['a', 'b', '0'])).toEqual({ found: true, value: 1 });
    expect(lookup(tree, ['a', 'x', 'y'])).toEqual({ found: false, missingAt: 1 });
    setAt(tree, ['a', 'new', 'deep'], 5);
    expect(tree.a).toMatchObject({ new: { deep: 5 } });
    expect(deleteAt(tree, ['a', 'b', 0])).toBe(true);
    expect(tree.a.b).toEqual([{ c: 2 }]);
    expect(deleteAt(tree, ['a', 'nope'])).toBe(false);
  });
});

describe('merging layers (Hydra semantics on defu)', () => {
  test('mappings merge, lists and scalars are replaced by the higher layer', () => {
    const lower = { a: { x: 1, list: [1, 2, 3] }, keep: true };
    const higher = { a: { y: 2, list: [9] } };
    expect(mergeOver(lower, higher)).toEqual({ a: { x: 1, list: [9], y: 2 }, keep: true });
  });

  test('an explicit null overrides (defu alone would skip it)', () => {
    expect(mergeOver({ a: 1, b: { c: 2 } }, { a: null, b: null })).toEqual({ a: null, b: null });
    expect(mergeOver({ a: null }, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
  });

  test('a mapping replaces a scalar and the reverse', () => {
    expect(mergeOver({ a: 1 }, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
    expect(mergeOver({ a: { b: 1 } }, { a: 'x' })).toEqual({ a: 'x' });
  });

  test('nulls inside lists survive', () => {
    expect(mergeOver({}, { a: [null, { b: null }] })).toEqual({ a: [null, { b: null }] });
  });

  test('many layers, highest first, inputs untouched', () => {
    const l1 = { a: 1, list: [1] };
    const l2 = { a: 2, b: 2 };
    const l3 = { a: 3, b: 3, c: 3, list: [3, 3] };
    expect(mergeLayers(l1, l2, l3)).toEqual({ a: 1, b: 2, c: 3, list: [1] });
    expect(l3).toEqual({ a: 3, b: 3, c: 3, list: [3, 3] });
  });

  test('the lower layer keeps its key order', () => {
    expect(Object.keys(mergeOver({ z: 1, a: 1, m: 1 }, { a: 2, new: 1 }))).toEqual(['z', 'a', 'm', 'new']);
  });
});
