/**
 * Builds the single binary: `bun run build` -> bin/agentic (or `--outfile PATH`).
 *
 * --ignore-dce-annotations keeps tfjs's side-effect registrations (kernels, backends) that the
 * bundler would otherwise drop as pure; the wasm files are embedded through their file imports.
 * --compile-autoload-package-json lets a user's plugin or agent file import packages from its own
 * node_modules: without it a compiled Bun reads no package.json at run time, so only packages
 * with an index.js at their root resolve (`openai` does; `ai` and `@ai-sdk/*`, whose entry is
 * named by `exports`, do not).
 */
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const at = args.indexOf('--outfile');
const outfile = resolve(at === -1 ? 'bin/agentic' : args[at + 1]!);
const root = resolve(import.meta.dir, '..');
/** The entry files of threads (the rollout thread's): the binary embeds each as an entrypoint of its own. */
const THREAD_ENTRIES = ['src/rollout_sources/thread/in_thread.ts'];

const build = Bun.spawnSync(
  [
    process.execPath,
    'build',
    '--compile',
    '--ignore-dce-annotations',
    '--compile-autoload-package-json',
    '--minify-syntax',
    '--outfile',
    outfile,
    'src/cli/main.ts',
    ...THREAD_ENTRIES,
  ],
  { cwd: root, stdout: 'pipe', stderr: 'pipe' },
);
if (build.exitCode !== 0) {
  process.stderr.write(build.stdout.toString() + build.stderr.toString());
  process.exit(build.exitCode ?? 1);
}
const check = Bun.spawnSync([outfile, '--version'], { stdout: 'pipe', stderr: 'pipe' });
if (check.exitCode !== 0) {
  process.stderr.write(`built ${outfile}, but it does not run: ${check.stderr.toString()}`);
  process.exit(1);
}
console.log(`built ${outfile} (${check.stdout.toString().trim()})`);
