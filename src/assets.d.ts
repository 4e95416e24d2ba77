/** Files imported `with { type: 'file' }` are paths (embedded in the compiled binary). */
declare module '*.wasm' {
  const path: string;
  export default path;
}
