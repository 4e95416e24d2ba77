/** The pthread worker script of tfjs-backend-wasm's threaded build, shipped as a string. */
declare module '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.worker.js' {
  export const wasmWorkerContents: string;
}
