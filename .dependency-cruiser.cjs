/**
 * The layers of src/, one way down (docs/layers.md). Each folder has a rank; a folder imports
 * only from folders of a lower rank (or from itself), which also rules out any folder-level
 * import loop. `npm run lint` checks it in CI; `npm run graph` draws the folder graph.
 */
const LAYERS = [
  ['base', ['errors.ts', 'util', 'assets.d.ts', 'sandbox', 'engine', 'model', 'plugins']],
  ['algo', ['algo']],
  ['config', ['config']],
  ['rollout', ['rollout']],
  ['loop', ['train']],
  ['run', ['tracking', 'render', 'checkpoint', 'bench', 'play', 'run', 'serve', 'worker', 'cli']],
];
const FOLDERS = LAYERS.flatMap(([, folders]) => folders);
const escape = (name) => name.replace(/\./g, '\\.');
const pathOf = (folder) => `^src/${escape(folder)}${folder.endsWith('.ts') ? '$' : '/'}`;

module.exports = {
  forbidden: [
    ...FOLDERS.map((folder, rank) => ({
      name: `${folder}-imports-up`,
      comment: `src/${folder} may import only from ${FOLDERS.slice(0, rank).join(', ') || 'nothing else in src'} (docs/layers.md)`,
      severity: 'error',
      from: { path: pathOf(folder) },
      to: { path: FOLDERS.slice(rank + 1).map(pathOf) },
    })).filter((rule) => rule.to.path.length > 0),
    {
      name: 'unknown-folder',
      comment: 'every folder of src/ has a place in the layers (.dependency-cruiser.cjs LAYERS)',
      severity: 'error',
      from: { path: '^src/', pathNot: FOLDERS.map(pathOf) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    includeOnly: '^src/',
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
