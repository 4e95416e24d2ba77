/** `agentic doctor`: what this install has and whether its parts work. */
import pkg from '../../package.json';
import { existsSync, readdirSync } from 'node:fs';
import { loadConfig } from '../config/load';
import type { AgenticConfig } from '../config/schema';
import { BACKENDS, type BackendName } from '../engine/names';
import { runBackend } from '../config/validate';
import { PluginHost } from '../host/plugin_host';
import { checkPlugins } from './start_up';
import { PLUGIN_KINDS } from '../host/registry';
import { sandboxedPluginsUsed } from './sandbox_check';
import { sandboxSupport } from '../sandbox/python';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { out } from './log';

export function isCompiledBinary(): boolean {
  return import.meta.url.includes('$bunfs') || import.meta.url.includes('~BUN');
}

/** Backends cheap enough to check on every run; the others start only when selected. */
const ALWAYS_CHECKED: readonly BackendName[] = ['wasm', 'cpu'];

export default command(
  {
    meta: {
      name: 'doctor',
      description: 'Check this install: runtime, the selected tfjs backend and the embedded ones (a known matmul on each), plugins, configs',
    },
    args: { ...configArgs, ...overridesArg },
    async run({ args }) {
      const rows: Array<[string, string]> = [];
      let failures = 0;
      rows.push(['agentic', `${pkg.version}${isCompiledBinary() ? ' (compiled binary)' : ' (from source)'}`]);
      rows.push(['runtime', `bun ${Bun.version} on ${process.platform}-${process.arch}`]);
      const host = new PluginHost();
      const { config } = await loadConfig(configRequest(args, overridesFrom(args._)), host);
      await checkPlugins(config, host);
      const selected = runBackend(config);
      const engine = await import('../engine/backend');
      rows.push(['tfjs', engine.TFJS_VERSION]);
      rows.push(['selected', `${selected}${selected === 'webgpu' ? ` (webgpu_adapter=${config.webgpu_adapter})` : ''}`]);
      // the selected backend starts last, so it is the active one afterwards
      const order = [...ALWAYS_CHECKED.filter((b) => b !== selected), selected];
      for (const backend of order) {
        const started = performance.now();
        try {
          const result = await engine.startBackend(backend, { webgpuAdapter: config.webgpu_adapter, blas: config.blas });
          const notes = [backend === 'wasm' ? 'embedded default' : '', backend === selected ? 'selected' : ''].filter(Boolean);
          rows.push([`backend ${backend}`, `ok (matmul checked, ${(performance.now() - started).toFixed(0)} ms)${notes.map((n) => `, ${n}`).join('')}`]);
          if (result.detail) rows.push([backend === 'webgpu' ? '  adapter' : backend === 'wasm' ? '  threads' : '  package', result.detail]);
          if (result.matmuls) rows.push(['  matmuls', result.matmuls]);
          if (result.adapter) {
            rows.push(['  features', result.adapter.features.join(', ') || 'none']);
            rows.push([
              '  limits',
              Object.entries(result.adapter.limits)
                .map(([name, value]) => `${name} ${value}`)
                .join(', '),
            ]);
          }
        } catch (error) {
          failures++;
          rows.push([`backend ${backend}`, `FAILED: ${(error as Error).message}`]);
        }
      }
      for (const backend of BACKENDS.filter((b) => !order.includes(b))) rows.push([`backend ${backend}`, await unselectedNote(backend)]);
      failures += await sandboxRows(config, host, rows);
      rows.push(['plugins', PLUGIN_KINDS.map((k) => `${host.registry.names(k).length} ${k}`).join(', ') + ' built in']);
      const configs = existsSync('configs') ? readdirSync('configs').filter((f) => /\.(ya?ml|json|toml|ts)$/.test(f)) : [];
      rows.push(['configs', configs.length ? `${configs.length} in ./configs` : 'none in ./configs (the built-in default is used)']);
      const width = Math.max(...rows.map(([k]) => k.length));
      out(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n'));
      return failures === 0 ? 0 : 1;
    },
  },
  `${OVERRIDES_HELP}

EXAMPLES
  agentic doctor
  agentic doctor backend=webgpu                          # start webgpu and show its adapter
  agentic doctor backend=webgpu webgpu_adapter=opengles  # Mesa on the CPU (slow, correct)
  agentic doctor -c my.yaml                              # the backend my.yaml selects`,
);

/** What doctor says about a backend it did not start. */
async function unselectedNote(backend: BackendName): Promise<string> {
  if (backend === 'tensorflow') {
    const { findTensorflowPackage } = await import('../engine/tensorflow');
    const found = findTensorflowPackage();
    return found
      ? `${found.name} installed; not started (check it with backend=tensorflow)`
      : 'not installed (optional: @tensorflow/tfjs-node or @tensorflow/tfjs-node-gpu)';
  }
  return `not started (check it with backend=${backend})`;
}

/**
 * The Python sandbox's rows: the interpreter, bwrap and whether it contains runs here (as which
 * uid), or why not. A failure only when the config's envs use a sandboxed plugin and need bwrap.
 */
async function sandboxRows(config: AgenticConfig, host: PluginHost, rows: Array<[string, string]>): Promise<number> {
  let support: Awaited<ReturnType<typeof sandboxSupport>>;
  try {
    support = await sandboxSupport();
  } catch (error) {
    rows.push(['python', `not found: ${(error as Error).message}`]);
    return 0;
  }
  rows.push(['python', `${support.python}${support.prefixes.length > 0 ? ` (binds ${support.prefixes.join(', ')})` : ''}`]);
  const used = await sandboxedPluginsUsed(config, host);
  const need = used.length > 0 ? `needed by ${used.join(', ')}` : 'no env of this config runs code';
  const mode = `python_sandbox=${config.python_sandbox}`;
  if (support.problem === null) {
    const who = support.staged ? 'uid 65534 (agentic is root: setpriv drops to it)' : `uid ${support.uid}, 65534 inside`;
    rows.push(['sandbox', `bwrap ok: ${support.bwrapVersion} at ${support.bwrap}; namespaces work; code runs as ${who}; ${mode}`]);
    return 0;
  }
  const fails = config.python_sandbox === 'bwrap' && used.length > 0;
  rows.push(['sandbox', `${fails ? 'FAILED' : 'not usable'}: ${support.problem}; ${support.remedy}; ${mode}; ${need}`]);
  return fails ? 1 : 0;
}
