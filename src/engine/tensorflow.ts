/**
 * The tensorflow backend: libtensorflow through @tensorflow/tfjs-node-gpu (CUDA) or
 * @tensorflow/tfjs-node (CPU). Neither ships with agentic: their install scripts download
 * libtensorflow, so the user installs one next to their configs. The package name is built at
 * run time, so the bundler neither needs nor embeds it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { AgenticError, firstLine } from '../errors';

/** Tried in this order: the GPU build first. */
export const TENSORFLOW_PACKAGES = ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'] as const;

const INSTALL =
  'run `bun add @tensorflow/tfjs-node` (CPU) or `bun add @tensorflow/tfjs-node-gpu` (NVIDIA, CUDA) in the folder you run agentic from, then `bun pm trust` it so its install script runs (npm: `npm install @tensorflow/tfjs-node`); the script downloads libtensorflow, so it needs network access';

/**
 * The package's folder in the nearest node_modules above `from`, found by walking the folders
 * ourselves: asking Bun's resolver outside a project would auto-install the package from npm.
 */
function packageFolder(name: string, from: string): string | null {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const folder = join(dir, 'node_modules', name);
    if (existsSync(join(folder, 'package.json'))) return folder;
    if (dirname(dir) === dir) return null;
  }
}

/** Where a package is looked up: the working folder's node_modules, then agentic's own (from source). */
function locate(name: string, cwd: string): string | null {
  return packageFolder(name, cwd) ?? packageFolder(name, import.meta.dir);
}

export interface TensorflowPackage {
  name: (typeof TENSORFLOW_PACKAGES)[number];
  /** The package's folder. */
  path: string;
}

/** The first of the packages that is installed, without loading it. */
export function findTensorflowPackage(cwd = process.cwd()): TensorflowPackage | null {
  for (const name of TENSORFLOW_PACKAGES) {
    const path = locate(name, cwd);
    if (path) return { name, path };
  }
  return null;
}

/** Loads the installed package, which registers tfjs's 'tensorflow' backend; returns its name. */
export async function registerTensorflow(cwd = process.cwd()): Promise<string> {
  const found = findTensorflowPackage(cwd);
  if (!found) {
    throw new AgenticError(
      `the tensorflow backend needs @tensorflow/tfjs-node-gpu or @tensorflow/tfjs-node, and neither is installed: ${INSTALL}; or use backend=wasm, the embedded default`,
    );
  }
  try {
    const manifest = JSON.parse(readFileSync(join(found.path, 'package.json'), 'utf8')) as { main?: string };
    await import(join(found.path, manifest.main ?? 'index.js'));
  } catch (error) {
    throw new AgenticError(
      `${found.name} is installed but did not load (${firstLine(error)}); its install script must have run to fetch libtensorflow: ${INSTALL}; or use backend=wasm, the embedded default`,
      { cause: error },
    );
  }
  return found.name;
}
