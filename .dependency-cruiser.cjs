/**
 * The layers of src/, one way down (docs/layers.md). Each folder has a rank; a folder imports
 * only from folders of a lower rank (or from itself), which also rules out any folder-level
 * import loop. The built-in plugins (the top-level plugins/) have a rank too: above the SDK they
 * are written against, below the host that registers them; of the SDK they import only its entry
 * (`import ... from 'agentic'`, src/sdk/index.ts). No file imports itself round a loop of files
 * either (no-circular). `npm run lint` checks it in CI; `npm run graph` draws the folder graph.
 */
const LAYERS = [
  ['base', ['src/errors.ts', 'src/util', 'src/assets.d.ts', 'src/sandbox', 'src/engine', 'src/model', 'src/sdk']],
  ['plugins', ['plugins', 'src/host']],
  ['algo', ['src/algo']],
  ['config', ['src/config']],
  ['rollout', ['src/rollout']],
  ['remote', ['src/remote']],
  ['loop', ['src/train']],
  // the rollout seam's implementations (in this thread, a rollout thread, agentic worker processes):
  // they implement train's RolloutSource and use its stages; the run hands the trainer their opener
  ['sources', ['src/rollout_sources']],
  ['run', ['src/tracking', 'src/render', 'src/checkpoint', 'src/bench', 'src/play', 'src/serve', 'src/worker', 'src/cli']],
];
const FOLDERS = LAYERS.flatMap(([, folders]) => folders);
const escape = (name) => name.replace(/\./g, '\\.');
const pathOf = (folder) => `^${escape(folder)}${folder.endsWith('.ts') ? '$' : '/'}`;
const nameOf = (folder) => folder.replace(/^src\//, '');

/** The SDK's public entry: all of the SDK that plugins/ may import. */
const SDK_ENTRY = '^src/sdk/index\\.ts$';

module.exports = {
  forbidden: [
    ...FOLDERS.map((folder, rank) => ({
      name: `${nameOf(folder)}-imports-up`,
      comment: `${folder} may import only from ${FOLDERS.slice(0, rank).join(', ') || 'nothing else in src'} (docs/layers.md)`,
      severity: 'error',
      from: { path: pathOf(folder) },
      to: { path: FOLDERS.slice(rank + 1).map(pathOf) },
    })).filter((rule) => rule.to.path.length > 0),
    {
      name: 'plugins-import-the-sdk-entry',
      comment: "plugins/ imports the SDK through its entry ('agentic', src/sdk/index.ts), never its internals (docs/layers.md)",
      severity: 'error',
      from: { path: '^plugins/' },
      to: { path: '^src/sdk/', pathNot: SDK_ENTRY },
    },
    {
      name: 'unknown-folder',
      comment: 'every folder of src/ has a place in the layers (.dependency-cruiser.cjs LAYERS)',
      severity: 'error',
      from: { path: '^src/', pathNot: FOLDERS.map(pathOf) },
      to: {},
    },
    {
      name: 'no-circular',
      comment: 'no file imports itself round a loop of imports (docs/layers.md)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    includeOnly: '^(src|plugins)/',
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
