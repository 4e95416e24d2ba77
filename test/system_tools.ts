/**
 * The system tools some tests need, each with the Debian package that brings it (.ci/run installs
 * them all). A test file asks `missing(need)` once and skips with it (`describe.skipIf`,
 * `test.skipIf`). Outside CI a missing tool skips those tests, and the run ends with one line
 * saying what to install (this file is the test preload, see bunfig.toml; under `npm test` the
 * runner, scripts/test.ts, prints it for the whole run). Under CI (CI=1 or
 * true) nothing is skipped: the tests run, and one more test fails naming the package, so a
 * runner that lost a package cannot pass by skipping.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, test } from 'bun:test';
import { dlopen, FFIType } from 'bun:ffi';
import { findBlas } from '../src/engine/blas';
import { findChromium } from './render/chromium';
import { skippedLine } from './skipped_line';

export const IN_CI = ['1', 'true'].includes((process.env.CI ?? '').toLowerCase());

interface Tool {
  name: string;
  packages: readonly string[];
  found: () => boolean;
}

const onPath = (name: string, pkg = name): Tool => ({ name, packages: [pkg], found: () => Bun.which(name) !== null });

/** Dawn opens the unversioned libEGL.so, as src/engine/webgpu.ts checks (not imported here: it loads Dawn). */
function hasEgl(): boolean {
  if (process.platform !== 'linux') return true;
  try {
    dlopen('libEGL.so', { eglGetProcAddress: { args: [FFIType.ptr], returns: FFIType.ptr } }).close();
    return true;
  } catch {
    return false;
  }
}

const PYTHON = onPath('python3');

/** What the tests need, by the name they ask for. */
const NEEDS = {
  // as root the sandbox drops to uid 65534 with setpriv first
  sandbox: [
    onPath('bwrap', 'bubblewrap'),
    { name: 'setpriv', packages: ['util-linux'], found: () => process.getuid?.() !== 0 || Bun.which('setpriv') !== null },
    PYTHON,
    // a test refuses bwrap its namespaces from an unmapped user namespace
    onPath('unshare', 'util-linux'),
  ],
  python: [PYTHON],
  // the distributed tests show a worker another machine's folders with it
  bwrap: [onPath('bwrap', 'bubblewrap')],
  // redis-cli comes with redis-server (in redis-tools, which it depends on)
  redis: [onPath('redis-server'), onPath('redis-cli', 'redis-server')],
  chromium: [{ name: 'chromium', packages: ['chromium'], found: () => findChromium() !== null }],
  tmux: [onPath('tmux')],
  mesa: [{ name: "Mesa's libEGL.so", packages: ['libegl1', 'libegl-dev', 'libegl-mesa0', 'libgl1-mesa-dri'], found: hasEgl }],
  // the BLAS CI installs and the recorded replays name; blas=auto takes it first
  openblas: [{ name: 'OpenBLAS', packages: ['libopenblas0-pthread'], found: () => findBlas('auto')?.name === 'openblas' }],
} satisfies Record<string, Tool[]>;

/** The packages of the tools whose tests were skipped in this run, for the line at its end. */
const skippedPackages = new Set<string>();

/**
 * Whether tests that need `need` are to be skipped: a tool is missing and this is not CI. Under
 * CI it is false, and a test of the calling file fails naming what to install.
 */
export function missing(need: keyof typeof NEEDS): boolean {
  const tools = NEEDS[need].filter((tool) => !tool.found());
  if (tools.length === 0) return false;
  const packages = [...new Set(tools.flatMap((tool) => tool.packages))];
  if (IN_CI) {
    const names = tools.map((tool) => tool.name).join(', ');
    test(`${names} installed, as CI needs for this file`, () => {
      throw new Error(`${names} not installed, and CI runs this file's tests that need it: apt-get install ${packages.join(' ')}`);
    });
    return false;
  }
  for (const pkg of packages) skippedPackages.add(pkg);
  return true;
}

afterAll(() => {
  if (skippedPackages.size === 0) return;
  const packages = [...skippedPackages];
  // under `npm test` (scripts/test.ts) each file runs in a worker of its own: the runner prints the run's one line
  const runFile = process.env.AGENTIC_SKIPPED_PACKAGES;
  if (runFile) appendFileSync(runFile, packages.map((pkg) => `${pkg}\n`).join(''));
  else console.warn(skippedLine(packages));
});
