import { afterEach, describe, expect, test } from 'bun:test';
import { resolveInterpolations, resolveLazily, throwIfRead } from '../../src/config/interpolate';
import { strftime } from '../../src/config/strftime';

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
    expect(() => resolve({ a: '${oc.nope:x}' })).toThrow(
      "a: unknown resolver 'oc.nope' (available: oc.env, oc.decode, oc.select, oc.create, oc.deprecated, now, hydra)",
    );
    expect(() => resolve({ a: 'x${b}', b: { c: 1 } })).toThrow('a: ${b} is a mapping and cannot be part of a string');
    expect(() => resolve({ a: '${b' })).toThrow('a: unclosed interpolation');
    expect(() => resolve({ a: '${...x}' })).toThrow('climbs above the top');
    expect(() => resolve({ pretrain: '???' })).toThrow('pretrain: missing mandatory value (???)');
  });

  test('a tree without interpolations comes back equal', () => {
    const tree = { a: 1, b: [true, null, 'x', { c: 1.5 }] };
    expect(resolve(tree)).toEqual(tree);
  });

  test('oc.env: a variable that is not set and has no default is an error; a default of null is null', () => {
    expect(() => resolve({ a: '${oc.env:AGENTIC_TEST_UNSET}' })).toThrow('a: environment variable AGENTIC_TEST_UNSET is not set');
    expect(resolve({ a: '${oc.env:AGENTIC_TEST_UNSET,null}', b: '${oc.env:AGENTIC_TEST_UNSET,3}' })).toEqual({ a: null, b: '3' });
  });

  test('now: the local time in Python strftime codes, one time for the whole config', () => {
    const now = new Date(2024, 0, 5, 7, 8, 9, 123);
    const out = resolveInterpolations(
      { model_name: 'run-${now:%Y%m%d_%H%M%S}', day: '${now:%a %b %d %j %I%p %y}', f: '${now:%f}', again: '${now:%H%M%S}' } as never,
      { now },
    ) as Record<string, unknown>;
    expect(out).toEqual({ model_name: 'run-20240105_070809', day: 'Fri Jan 05 005 07AM 24', f: '123000', again: '070809' });
    expect(() => resolveInterpolations({ a: '${now:%Q}' } as never, { now })).toThrow('a: ${now:%Q}: %Q is not a strftime code');
  });

  test('strftime: week numbers, ISO weeks and the C locale forms', () => {
    const sunday = new Date(2023, 0, 1, 13, 0, 0);
    expect(strftime('%U %W %G-%V %u %w', sunday)).toBe('01 00 2022-52 7 0');
    expect(strftime('%c|%x|%X|%%', sunday)).toBe('Sun Jan  1 13:00:00 2023|01/01/23|13:00:00|%');
  });

  test('oc.create: a mapping or list from a literal or from a YAML string', () => {
    const out = resolve({ n: 2, a: '${oc.create:{x: 1, y: [a, b]}}', b: "${oc.create:'{k: ${n}}'}", c: '${oc.create:${yaml}}', yaml: '[1, 2]' });
    expect(out.a).toEqual({ x: 1, y: ['a', 'b'] });
    expect(out.b).toEqual({ k: 2 });
    expect(out.c).toEqual([1, 2]);
  });

  test('oc.deprecated: reads the new key and warns, in OmegaConf words or the message given', () => {
    const { tree, warnings } = resolveLazily({
      new_key: 5,
      old_key: '${oc.deprecated:new_key}',
      other: "${oc.deprecated:new_key,'use $NEW_KEY, not $OLD_KEY'}",
    } as never);
    expect(tree).toEqual({ new_key: 5, old_key: 5, other: 5 });
    expect(warnings).toEqual(["'old_key' is deprecated. Change your code and config to use 'new_key'", 'use new_key, not other']);
    expect(() => resolve({ old: '${oc.deprecated:gone}' })).toThrow('old: ${oc.deprecated:gone} points to gone, which does not exist');
  });

  test("hydra: Hydra's runtime values of one run", () => {
    const run = { configName: 'agentic_val_sokoban', cwd: '/work/here', now: new Date(2024, 0, 5, 7, 8, 9) };
    const tree = {
      cwd: '${hydra:runtime.cwd}',
      out: '${hydra:runtime.output_dir}',
      job: '${hydra:job.name}',
      config: '${hydra:job.config_name}',
    };
    expect(resolveInterpolations(tree as never, run)).toEqual({
      cwd: '/work/here',
      out: '/work/here/outputs/2024-01-05/07-08-09',
      job: 'agentic_val_sokoban',
      config: 'agentic_val_sokoban',
    });
    // ROLL's hydra.run.dir: . is the output folder; hydra.job.name names the job
    const own = resolveInterpolations({ hydra: { run: { dir: '.' }, job: { name: 'sweep' } }, ...tree } as never, run) as Record<string, unknown>;
    expect(own).toMatchObject({ out: '/work/here', job: 'sweep', config: 'agentic_val_sokoban' });
    expect(() => resolveInterpolations({ n: '${hydra:job.num}' } as never, run)).toThrow('n: ${hydra:job.num} is set only in a multirun sweep');
    expect(() => resolveInterpolations({ n: '${hydra:job.id}' } as never, run)).toThrow('n: ${hydra:job.id} is set only in a multirun sweep');
    expect(() => resolveInterpolations({ n: '${hydra:nope}' } as never, run)).toThrow('n: ${hydra:nope}: not a Hydra value agentic knows');
  });

  test('lazy, as OmegaConf: a value that fails is an error only if it is read', () => {
    const { tree, unresolved } = resolveLazily({ tracker_kwargs: { api_key: '${oc.env:AGENTIC_TEST_UNSET}', log_dir: 'x' }, seed: 1 } as never);
    expect(tree).toEqual({ tracker_kwargs: { api_key: '${oc.env:AGENTIC_TEST_UNSET}', log_dir: 'x' }, seed: 1 });
    expect(() => throwIfRead(tree, unresolved)).toThrow('tracker_kwargs.api_key: environment variable AGENTIC_TEST_UNSET is not set');
    delete (tree.tracker_kwargs as Record<string, unknown>).api_key;
    expect(() => throwIfRead(tree, unresolved)).not.toThrow();
    // a value that reads a failing one fails itself
    expect(() => resolve({ a: { k: '${oc.env:AGENTIC_TEST_UNSET}' }, b: '${a}' })).toThrow('environment variable AGENTIC_TEST_UNSET is not set');
  });
});
