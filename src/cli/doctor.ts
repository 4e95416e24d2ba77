/** `agentic doctor`: what this install has and whether its parts work. */
import pkg from '../../package.json';
import { existsSync, readdirSync } from 'node:fs';
import { PluginHost } from '../plugins/host';
import { PLUGIN_KINDS } from '../plugins/registry';
import { debugArg } from './args';
import { command } from './command';
import { out } from './log';

export function isCompiledBinary(): boolean {
  return import.meta.url.includes('$bunfs') || import.meta.url.includes('~BUN');
}

export default command({
  meta: { name: 'doctor', description: 'Check this install: runtime, tfjs backends (runs a matmul on each), plugins, configs' },
  args: { ...debugArg },
  async run() {
    const rows: Array<[string, string]> = [];
    let failures = 0;
    rows.push(['agentic', `${pkg.version}${isCompiledBinary() ? ' (compiled binary)' : ' (from source)'}`]);
    rows.push(['runtime', `bun ${Bun.version} on ${process.platform}-${process.arch}`]);
    const engine = await import('../engine/backend');
    rows.push(['tfjs', engine.TFJS_VERSION]);
    for (const backend of ['wasm', 'cpu'] as const) {
      const started = performance.now();
      try {
        await engine.startBackend(backend);
        await engine.checkMatMul();
        rows.push([`backend ${backend}`, `ok (matmul checked, ${(performance.now() - started).toFixed(0)} ms)${backend === 'wasm' ? ', embedded default' : ''}`]);
      } catch (error) {
        failures++;
        rows.push([`backend ${backend}`, `FAILED: ${(error as Error).message}`]);
      }
    }
    for (const backend of ['webgpu', 'tensorflow']) rows.push([`backend ${backend}`, 'not wired up yet (arrives with the model engine, issue #3)']);
    const host = new PluginHost();
    rows.push(['plugins', PLUGIN_KINDS.map((k) => `${host.registry.names(k).length} ${k}`).join(', ') + ' built in']);
    const configs = existsSync('configs') ? readdirSync('configs').filter((f) => /\.(ya?ml|json|toml|ts)$/.test(f)) : [];
    rows.push(['configs', configs.length ? `${configs.length} in ./configs` : 'none in ./configs (the built-in default is used)']);
    const width = Math.max(...rows.map(([k]) => k.length));
    out(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n'));
    return failures === 0 ? 0 : 1;
  },
});
