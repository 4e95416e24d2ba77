import { describe, expect, test } from 'bun:test';
import { ConfigError } from '../../src/errors';
import { applyOverrides, looksLikeOverride, parseOverride, parseOverrideValue, type KeyOracle } from '../../src/config/overrides';
import type { TreeObject } from '../../src/config/tree';

describe('override forms', () => {
  test('key=value sets, +key adds, ++key forces, ~key deletes', () => {
    expect(parseOverride('a.b.c=1')).toMatchObject({ op: 'set', path: ['a', 'b', 'c'], value: 1 });
    expect(parseOverride('+a.new=x')).toMatchObject({ op: 'add', path: ['a', 'new'], value: 'x' });
    expect(parseOverride('++a.b=2')).toMatchObject({ op: 'force', path: ['a', 'b'], value: 2 });
    expect(parseOverride('~a.b')).toMatchObject({ op: 'delete', path: ['a', 'b'] });
    expect(parseOverride('~a.b').value).toBeUndefined();
    expect(parseOverride('~a.b=3')).toMatchObject({ op: 'delete', path: ['a', 'b'], value: 3 });
  });

  test('list indices in keys', () => {
    expect(parseOverride('tags[1]=x').path).toEqual(['tags', 1]);
    expect(parseOverride('tags.1=x').path).toEqual(['tags', '1']);
  });

  test('an empty value is the empty string', () => {
    expect(parseOverride('exp_name=').value).toBe('');
  });

  test('malformed overrides name themselves', () => {
    expect(() => parseOverride('seed')).toThrow("override 'seed': expected key=value");
    expect(() => parseOverride('+seed')).toThrow('expected key=value');
    expect(() => parseOverride('a..b=1')).toThrow("'a..b' is not a key");
    expect(() => parseOverride('=1')).toThrow(ConfigError);
  });

  test('looksLikeOverride tells overrides from paths and names', () => {
    for (const arg of ['a=1', '+a=1', '++a.b=2', '~a', '~a=1', 'a.b[0]=x']) expect(looksLikeOverride(arg)).toBe(true);
    for (const arg of ['./my_env.ts', 'plugins/', 'frozen_lake', '=1']) expect(looksLikeOverride(arg)).toBe(false);
  });
});

describe('typed values', () => {
  const cases: Array<[string, unknown]> = [
    ['123', 123],
    ['-5', -5],
    ['+7', 7],
    ['1.5', 1.5],
    ['1e-3', 0.001],
    ['1.0e-6', 0.000001],
    ['.5', 0.5],
    ['5.', 5],
    ['true', true],
    ['False', false],
    ['null', null],
    ['NULL', null],
    ['inf', Infinity],
    ['-inf', -Infinity],
    ['abc', 'abc'],
    ['./path/to.yaml', './path/to.yaml'],
    ['http://host:80/x', 'http://host:80/x'],
    ['${a.b}', '${a.b}'],
    ['${oc.env:HOME,/tmp}', '${oc.env:HOME,/tmp}'],
    ['pre_${a}_post', 'pre_${a}_post'],
    ['list(range(0,8))', 'list(range(0,8))'],
    ['a b', 'a b'],
    ["'123'", '123'],
    ['"true"', 'true'],
    ["'a,b'", 'a,b'],
    ["'it\\'s'", "it's"],
    ['[1,2,3]', [1, 2, 3]],
    ['[]', []],
    ['[a, "b", 3.5, null]', ['a', 'b', 3.5, null]],
    ['[[1,2],[3]]', [[1, 2], [3]]],
    ['{a: 1, b: [x, y]}', { a: 1, b: ['x', 'y'] }],
    ['{}', {}],
    ["{'k:1': v}", { 'k:1': 'v' }],
    ['[${a}, ${b.c}]', ['${a}', '${b.c}']],
    ['{url: http://x:1/y}', { url: 'http://x:1/y' }],
    ['a\\,b', 'a,b'],
    ['9007199254740993', '9007199254740993'],
  ];
  for (const [text, expected] of cases) {
    test(`${text} -> ${JSON.stringify(expected)}`, () => {
      expect(parseOverrideValue(text)).toEqual(expected as never);
    });
  }

  test('nan is NaN', () => {
    expect(parseOverrideValue('nan')).toBeNaN();
  });

  test('syntax errors say what is wrong', () => {
    expect(() => parseOverrideValue('[1,2', 'x=[1,2')).toThrow("override 'x=[1,2': unclosed '['");
    expect(() => parseOverrideValue('{a: 1', 'x={a: 1')).toThrow("unclosed '{'");
    expect(() => parseOverrideValue('{a 1}', 'x')).toThrow("expected ':' after key 'a 1'");
    expect(() => parseOverrideValue('{a: 1, a: 2}', 'x')).toThrow("duplicate key 'a'");
    expect(() => parseOverrideValue("'abc", 'x')).toThrow("unclosed '");
    expect(() => parseOverrideValue('${a', 'x')).toThrow("unclosed '${'");
    expect(() => parseOverrideValue('a]', 'x')).toThrow("unbalanced ']'");
    expect(() => parseOverrideValue("'a'b", 'x')).toThrow('text after a quoted string');
  });

  test('a top-level comma is a sweep, which is refused', () => {
    expect(() => parseOverrideValue('1,2,3', 'seed=1,2,3')).toThrow('a top-level comma is a Hydra sweep');
  });
});

describe('applying overrides', () => {
  const base = (): TreeObject => ({
    seed: 42,
    actor: { lr: 0.1, dims: [1, 2, 3], opts: { a: 1, b: 2 } },
    envs: { A: { type: 'x' } },
  });
  // a schema-less oracle: only what the tree holds exists, plus one declared key
  const oracle: KeyOracle = {
    isDeclared: (path) => path.join('.') === 'actor.declared_only',
    knownKeys: () => ['declared_only'],
  };
  const apply = (...texts: string[]) => applyOverrides(base(), texts.map(parseOverride), oracle);

  test('set replaces scalars and lists; mappings merge', async () => {
    const out = await apply('seed=7', 'actor.dims=[9]', 'actor.opts={b: 3, c: 4}');
    expect(out.seed).toBe(7);
    expect((out.actor as TreeObject).dims).toEqual([9]);
    expect((out.actor as TreeObject).opts).toEqual({ a: 1, b: 3, c: 4 });
  });

  test('set of a list element', async () => {
    const out = await apply('actor.dims[1]=20', 'actor.dims.2=30');
    expect((out.actor as TreeObject).dims).toEqual([1, 20, 30]);
  });

  test('set of a missing key is an error that names it, with suggestions', async () => {
    await expect(apply('sed=1')).rejects.toThrow('sed: unknown key (did you mean seed?)');
    await expect(apply('actor.lrr=1')).rejects.toThrow('actor.lrr: unknown key (did you mean lr?)');
    await expect(apply('nothing.here=1')).rejects.toThrow('nothing: unknown key; to add it, write +nothing.here=1');
  });

  test("a key inside a node that is one interpolation is set at the interpolation's source", async () => {
    const tree: TreeObject = { gem: { dapo: { env_config: { dataset_name: 'hub/name' } } }, custom_envs: { dapo: '${gem.dapo}' } };
    await expect(applyOverrides(tree, [parseOverride('custom_envs.dapo.env_config.dataset_name=./d.jsonl')], oracle)).rejects.toThrow(
      'custom_envs.dapo is ${gem.dapo}: set gem.dapo.env_config.dataset_name=./d.jsonl instead',
    );
  });

  test('set of a key the schema declares but the tree lacks', async () => {
    const out = await apply('actor.declared_only=5');
    expect((out.actor as TreeObject).declared_only).toBe(5);
  });

  test('+ adds new keys (creating parents) and refuses existing ones', async () => {
    const out = await apply('+extra.deep.key=1', '+envs.B={type: y}');
    expect(out.extra).toEqual({ deep: { key: 1 } });
    expect((out.envs as TreeObject).B).toEqual({ type: 'y' });
    await expect(apply('+seed=1')).rejects.toThrow('seed: already set; to change it, write seed=1 (or ++seed=1)');
  });

  test('++ adds or sets', async () => {
    const out = await apply('++seed=1', '++brand.new=2');
    expect(out.seed).toBe(1);
    expect(out.brand).toEqual({ new: 2 });
  });

  test('~ deletes, optionally only when the value matches', async () => {
    const out = await apply('~seed', '~actor.opts.a=1', '~actor.dims[0]');
    expect('seed' in out).toBe(false);
    expect((out.actor as TreeObject).opts).toEqual({ b: 2 });
    expect((out.actor as TreeObject).dims).toEqual([2, 3]);
    await expect(apply('~actor.lr=0.5')).rejects.toThrow('actor.lr: ~actor.lr=... expects 0.5 but the key holds 0.1');
    await expect(apply('~missing')).rejects.toThrow('missing: unknown key');
  });

  test('overrides apply in order, and the input is not modified', async () => {
    const tree = base();
    const out = await applyOverrides(tree, ['seed=1', 'seed=2', '~seed', '+seed=3'].map(parseOverride), oracle);
    expect(out.seed).toBe(3);
    expect(tree.seed).toBe(42);
  });

  test('setting below a scalar is an error', async () => {
    await expect(apply('+seed.x=1')).rejects.toThrow('seed is not a mapping');
  });
});
