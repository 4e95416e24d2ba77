import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { composeFile, composeText } from '../../src/config/compose';
import { parseYaml } from '../../src/config/yaml';
import { scratch } from '../helpers';

describe('YAML', () => {
  test('YAML 1.2 core types: 1e-3 is a number, dates and yes stay strings', () => {
    expect(parseYaml('a: 1e-3\nb: 2024-01-01\nc: yes\nd: ~\ne: 1.0e-6\n', 'f.yaml')).toEqual({
      a: 0.001,
      b: '2024-01-01',
      c: 'yes',
      d: null,
      e: 0.000001,
    });
  });

  test('syntax errors are reported as file:line:col', () => {
    expect(() => parseYaml('a: 1\nb: [1,\n', 'cfg.yaml')).toThrow(/^cfg\.yaml:3:1: /);
    expect(() => parseYaml('a: 1\n  b: 2\n', 'cfg.yaml')).toThrow(/^cfg\.yaml:\d+:\d+: /);
    expect(() => parseYaml('a: 1\na: 2\n', 'cfg.yaml')).toThrow('cfg.yaml:2:1: Map keys must be unique');
  });

  test('anchors and merge keys work', () => {
    expect(parseYaml('base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n', 'f')).toEqual({ base: { x: 1 }, other: { x: 1, y: 2 } });
  });
});

describe('composing config files', () => {
  test('a plain file', async () => {
    const dir = scratch({ 'main.yaml': 'seed: 3\nactor: {lr: 0.1}\n' });
    const { tree, files } = await composeFile(join(dir, 'main.yaml'));
    expect(tree).toEqual({ seed: 3, actor: { lr: 0.1 } });
    expect(files).toEqual([join(dir, 'main.yaml')]);
  });

  test('defaults list: files and packages; the file itself wins (implicit _self_ last)', async () => {
    const dir = scratch({
      'main.yaml': 'defaults:\n  - base\n  - envs/fl@custom_envs.FL\n  - shared/vars@_here_\nseed: 9\nlist: [own]\n',
      'base.yaml': 'seed: 1\nexp_name: from_base\nlist: [a, b, c]\n',
      'envs/fl.yaml': 'env_type: frozen_lake\nenv_config: {size: 4}\n',
      'shared/vars.yaml': 'vars: {steps: 10}\n',
    });
    const { tree, files } = await composeFile(join(dir, 'main.yaml'));
    expect(tree).toEqual({
      seed: 9,
      exp_name: 'from_base',
      list: ['own'],
      custom_envs: { FL: { env_type: 'frozen_lake', env_config: { size: 4 } } },
      vars: { steps: 10 },
    });
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['main.yaml', 'base.yaml', 'envs/fl.yaml', 'shared/vars.yaml']);
  });

  test('_self_ first lets the defaults override the file', async () => {
    const dir = scratch({ 'main.yaml': 'defaults:\n  - _self_\n  - base\nseed: 9\n', 'base.yaml': 'seed: 1\n' });
    expect((await composeFile(join(dir, 'main.yaml'))).tree).toEqual({ seed: 1 });
  });

  test('group: option entries, lists of options, optional and null', async () => {
    const dir = scratch({
      'main.yaml': 'defaults:\n  - optimizer: adamw\n  - extras: [one, two]\n  - optional local: mine\n  - skipped: null\n',
      'optimizer/adamw.yaml': 'lr: 0.001\n',
      'extras/one.yaml': 'a: 1\n',
      'extras/two.yaml': 'b: 2\n',
    });
    expect((await composeFile(join(dir, 'main.yaml'))).tree).toEqual({ optimizer: { lr: 0.001 }, extras: { a: 1, b: 2 } });
  });

  test('a file without a package goes where its folder says; ../ climbs, @_here_ stays', async () => {
    const dir = scratch({
      'exp/main.yaml': 'defaults:\n  - sub/x\n  - ../config/traj@_here_\n  - ../config/plain\n',
      'exp/sub/x.yaml': 'k: 1\n',
      'config/traj.yaml': 'max_steps: 10\n',
      'config/plain.yaml': 'p: 1\n',
    });
    expect((await composeFile(join(dir, 'exp/main.yaml'))).tree).toEqual({ sub: { k: 1 }, max_steps: 10, config: { p: 1 } });
  });

  test('nested defaults resolve relative to the file that lists them; packages nest', async () => {
    const dir = scratch({
      'main.yaml': 'defaults:\n  - envs/all@custom_envs\n',
      'envs/all.yaml': 'defaults:\n  - fl@FL\n  - sk@SK\n',
      'envs/fl.yaml': 'env_type: frozen_lake\n',
      'envs/sk.yaml': 'env_type: sokoban\n',
    });
    expect((await composeFile(join(dir, 'main.yaml'))).tree).toEqual({
      custom_envs: { FL: { env_type: 'frozen_lake' }, SK: { env_type: 'sokoban' } },
    });
  });

  test('a leading / is relative to the primary config folder; _global_ places at the top', async () => {
    const dir = scratch({
      'main.yaml': 'defaults:\n  - groups/g@inner\n',
      'groups/g.yaml': 'defaults:\n  - /common@_global_\nx: 1\n',
      'common.yaml': 'top: true\n',
    });
    expect((await composeFile(join(dir, 'main.yaml'))).tree).toEqual({ inner: { x: 1 }, top: true });
  });

  test('extends (c12): the file wins over what it extends; paths are relative to the file', async () => {
    const dir = scratch({
      'a/main.yaml': 'extends: ../base/base.yaml\nseed: 5\nlist: [x]\n',
      'base/base.yaml': 'extends: ./root\nseed: 1\nname: base\nlist: [1, 2]\n',
      'base/root.yaml': 'root_key: r\nname: root\n',
    });
    expect((await composeFile(join(dir, 'a/main.yaml'))).tree).toEqual({ seed: 5, name: 'base', list: ['x'], root_key: 'r' });
  });

  test('a file that extends and has a defaults list', async () => {
    const dir = scratch({
      'main.yaml': 'extends: ./parent.yaml\nmine: 1\n',
      'parent.yaml': 'defaults:\n  - envs/e@custom_envs.E\nparent: 1\n',
      'envs/e.yaml': 'env_type: bandit\n',
    });
    expect((await composeFile(join(dir, 'main.yaml'))).tree).toEqual({ custom_envs: { E: { env_type: 'bandit' } }, parent: 1, mine: 1 });
  });

  test('extends across formats: YAML extends JSON extends TOML (no extensions written)', async () => {
    const dir = scratch({
      'main.yaml': 'extends: ./sub/base\nseed: 2\n',
      'sub/base.json': '{"seed": 1, "exp_name": "from_json", "extends": "./root"}',
      'sub/root.toml': 'max_steps = 9\nexp_name = "from_toml"\n',
    });
    expect((await composeFile(join(dir, 'main.yaml'))).tree).toEqual({ seed: 2, exp_name: 'from_json', max_steps: 9 });
  });

  test('JSONC, JSON5 and a TS config that exports a function', async () => {
    const dir = scratch({
      'main.jsonc': '{\n  // a comment\n  "defaults": ["five", "fn"],\n  "seed": 1,\n}',
      'five.json5': "{exp_name: 'five', list: [1, 2,],}",
      'fn.ts': 'export default () => ({ vars: { made: true } });',
    });
    expect((await composeFile(join(dir, 'main.jsonc'))).tree).toEqual({ exp_name: 'five', list: [1, 2], vars: { made: true }, seed: 1 });
  });

  test('JSON, TOML and TypeScript configs load through c12', async () => {
    const dir = scratch({
      'main.json': JSON.stringify({ defaults: ['t', 'y'], seed: 1 }),
      't.toml': 'exp_name = "from_toml"\n[actor]\nlr = 0.5\n',
      'y.ts': 'export default { vars: { fromTs: [1, 2] } };\n',
    });
    expect((await composeFile(join(dir, 'main.json'))).tree).toEqual({ exp_name: 'from_toml', actor: { lr: 0.5 }, vars: { fromTs: [1, 2] }, seed: 1 });
  });

  test('errors name the file', async () => {
    const dir = scratch({
      'missing.yaml': 'defaults:\n  - nope\n',
      'cycle_a.yaml': 'defaults:\n  - cycle_b\n',
      'cycle_b.yaml': 'defaults:\n  - cycle_a\n',
      'bad.yaml': 'a: [1,\n',
      'badext.yaml': 'extends: ./nowhere.yaml\n',
      'remote.yaml': 'extends: gh:someone/repo\n',
      'list.yaml': '- 1\n- 2\n',
      'override.yaml': 'defaults:\n  - override db: x\n',
      'notalist.yaml': 'defaults: base\n',
      'badentry.yaml': 'defaults:\n  - {a: 1, b: 2}\n',
      'bad.json': '{"seed": 1,',
      'bad.ts': 'export default { seed: ;',
      'list.ts': 'export default [1];',
    });
    const at = (name: string) => composeFile(join(dir, name));
    await expect(at('missing.yaml')).rejects.toThrow(/missing\.yaml: defaults: 'nope': no config file .*nope\.yaml/);
    await expect(at('cycle_a.yaml')).rejects.toThrow(/defaults cycle: .*cycle_a\.yaml -> .*cycle_b\.yaml -> .*cycle_a\.yaml/);
    await expect(at('bad.yaml')).rejects.toThrow(/bad\.yaml:2:1: /);
    await expect(at('badext.yaml')).rejects.toThrow("extends './nowhere.yaml'");
    await expect(at('remote.yaml')).rejects.toThrow('remote configs are not supported');
    await expect(at('list.yaml')).rejects.toThrow('the top level must be a mapping');
    await expect(at('override.yaml')).rejects.toThrow('override entries are not supported');
    await expect(at('notalist.yaml')).rejects.toThrow('defaults: expected a list');
    await expect(at('badentry.yaml')).rejects.toThrow("each entry is a name, 'group: option' or _self_");
    await expect(at('bad.json')).rejects.toThrow(/bad\.json: cannot load: JSON Parse error/);
    await expect(at('bad.ts')).rejects.toThrow(/bad\.ts: cannot load: /);
    await expect(at('list.ts')).rejects.toThrow(/list\.ts: the top level must be a mapping/);
  });

  test('embedded text cannot pull in other files', () => {
    expect(composeText('seed: 1\n', 'builtin').tree).toEqual({ seed: 1 });
    expect(() => composeText('defaults: [x]\n', 'builtin')).toThrow('cannot use defaults or extends');
  });
});
