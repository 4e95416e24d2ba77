/** Files imported `with { type: 'file' }` are paths (embedded in the compiled binary). */
declare module '*.wasm' {
  const path: string;
  export default path;
}

/** Files imported `with { type: 'text' }` are their contents (built-in datasets). */
declare module '*.jsonl' {
  const text: string;
  export default text;
}
