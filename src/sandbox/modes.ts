/**
 * How model-written Python is contained (the config's python_sandbox): `bwrap`, the bubblewrap
 * boundary (the default, required), or `unconfined`, the explicit opt-out (docs/sandbox.md). A
 * leaf: the config schema and the runner both read it.
 */
export const PYTHON_SANDBOX_MODES = ['bwrap', 'unconfined'] as const;
export type PythonSandboxMode = (typeof PYTHON_SANDBOX_MODES)[number];
