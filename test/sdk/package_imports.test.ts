import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { PluginError } from '../../src/errors';
import { checkPackagesInstalled, missingPackageIn, packageName } from '../../src/sdk/package_imports';
import { scratch } from '../helpers';

/** A package folder as npm installs it. */
const installed = (name: string) => ({
  [`node_modules/${name}/package.json`]: JSON.stringify({ name, version: '1.0.0', main: 'index.js' }),
  [`node_modules/${name}/index.js`]: 'module.exports = 1;',
});

/** What checkPackagesInstalled throws for `entry` in `dir`, or null. */
function failure(dir: string, entry: string): string | null {
  try {
    checkPackagesInstalled(join(dir, entry), dir);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(PluginError);
    return (error as Error).message;
  }
}

describe('packageName', () => {
  test('the package of a bare specifier, scoped or not, with or without a subpath', () => {
    expect(packageName('openai')).toBe('openai');
    expect(packageName('openai/resources/chat/completions')).toBe('openai');
    expect(packageName('@ai-sdk/openai-compatible')).toBe('@ai-sdk/openai-compatible');
    expect(packageName('@modelcontextprotocol/sdk/client/index.js')).toBe('@modelcontextprotocol/sdk');
  });

  test('no package: paths, built-in modules, URLs, subpath imports and the SDK', () => {
    for (const specifier of ['./helper', '../shared/util.ts', '/abs/file.js', 'fs', 'node:path', 'bun', 'bun:ffi', 'file:///x.js', '#internal', 'agentic']) {
      expect({ specifier, name: packageName(specifier) }).toEqual({ specifier, name: null });
    }
  });
});

describe('checkPackagesInstalled', () => {
  test('a package the file imports that is in no node_modules above it names the file, the package and the install command', () => {
    const dir = scratch({ 'pads.ts': "import pad from 'left-pad';\nexport default pad;\n" });
    expect(failure(dir, 'pads.ts')).toBe(`pads.ts imports 'left-pad', which is not installed: run \`npm install left-pad\` in ${dir}`);
  });

  test("installed in the file's own node_modules or in a folder's above it: Node's rule", () => {
    const dir = scratch({
      'project/plugins/own.ts': "import a from 'alpha';\nexport default a;\n",
      ...Object.fromEntries(Object.entries(installed('alpha')).map(([path, text]) => [`project/plugins/${path}`, text])),
      'project/plugins/deep/parent.ts': "import b from '@scope/beta/sub';\nexport default b;\n",
      ...Object.fromEntries(Object.entries(installed('@scope/beta')).map(([path, text]) => [`project/${path}`, text])),
    });
    expect(failure(dir, 'project/plugins/own.ts')).toBeNull();
    expect(failure(dir, 'project/plugins/deep/parent.ts')).toBeNull();
  });

  test("the files of the user's it imports are checked too; the install folder is the nearest with a package.json", () => {
    const dir = scratch({
      'project/package.json': '{"name": "mine", "private": true}',
      'project/plugins/env.ts': "import { word } from './_helper';\nexport default word;\n",
      'project/plugins/_helper.ts': "export { word } from '@made-up/words/list';\n",
    });
    expect(failure(dir, 'project/plugins/env.ts')).toBe(
      `project/plugins/_helper.ts imports '@made-up/words', which is not installed: run \`npm install @made-up/words\` in ${join(dir, 'project')}`,
    );
  });

  test('every import the file names counts, import() and require() too; type-only imports and built-ins do not', () => {
    const dir = scratch({
      'types.ts':
        "import type { A } from 'typed-only';\nimport { type B } from 'inline-type';\nimport { join } from 'node:path';\nimport fs from 'fs';\nimport { z } from 'agentic';\nexport default [join, fs, z];\n",
      'lazy.ts': "export const later = () => import('lazy-package');\n",
      'required.cjs': "module.exports = require('required-package');\n",
    });
    expect(failure(dir, 'types.ts')).toBeNull();
    expect(failure(dir, 'lazy.ts')).toStartWith("lazy.ts imports 'lazy-package', which is not installed");
    expect(failure(dir, 'required.cjs')).toStartWith("required.cjs imports 'required-package', which is not installed");
  });

  test('a file that does not parse, and an import of a file that does not exist, are left to the import to report', () => {
    const dir = scratch({ 'syntax.ts': "import x from 'left-pad';\nconst = 1;\n", 'gone.ts': "import x from './nowhere';\nexport default x;\n" });
    expect(failure(dir, 'syntax.ts')).toBeNull();
    expect(failure(dir, 'gone.ts')).toBeNull();
  });
});

describe('missingPackageIn', () => {
  test("Bun's own failure to find a package (a computed import) reads as the same line; other failures do not", async () => {
    const dir = scratch({ 'computed.ts': "export default await import(['agentic-test', 'computed-missing-pkg'].join('-'));\n" });
    const error = await import(join(dir, 'computed.ts')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(missingPackageIn(error, dir)).toBe(
      `computed.ts imports 'agentic-test-computed-missing-pkg', which is not installed: run \`npm install agentic-test-computed-missing-pkg\` in ${dir}`,
    );
    const relative = await import(join(dir, 'nowhere.ts')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(relative).not.toBeNull();
    expect(missingPackageIn(relative, dir)).toBeNull();
  });
});
