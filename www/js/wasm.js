// Loads the simulator (Rust compiled to WebAssembly) once per page; every lab shares it.

let loading = null;

/** The initialised wasm module: `Lab`, `simulate`, `sweep`, `size`, `version`. */
export function loadKneelab() {
  loading ??= import('../pkg/kneelab_web.js').then(async (wasm) => {
    await wasm.default();
    return wasm;
  });
  return loading;
}
