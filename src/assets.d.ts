/** Files imported `with { type: 'file' }` are paths (embedded in the compiled binary). */
declare module '*.wasm' {
  const path: string;
  export default path;
}

/** Files imported `with { type: 'text' }` are their text (embedded in the compiled binary). */
declare module '*.py' {
  const text: string;
  export default text;
}
declare module '*.jsonl' {
  const text: string;
  export default text;
}

declare module '*.jinja' {
  const text: string;
  export default text;
}

declare module '*.txt' {
  const text: string;
  export default text;
}
