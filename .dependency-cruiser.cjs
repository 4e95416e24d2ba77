/**
 * The layers of src/, one way down (../shared/STYLE.md, docs/layers.md): a folder imports only
 * from its own layer or below, and no folder-level import loop. `npm run lint` checks it in CI;
 * `npm run graph` draws the folder graph.
 */
module.exports = {
  forbidden: [],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
