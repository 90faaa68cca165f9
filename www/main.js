// Stub entry module: the lesson replaces this. Contract with tests/: once the wasm module is
// initialised, <html data-ready="true">; if it fails, data-ready="error" and the page says why.

const status = document.getElementById('status');

try {
  // A dynamic import, so a missing build (no www/pkg/) is reported in the page too.
  const wasm = await import('./pkg/kneelab_web.js');
  await wasm.default();
  document.getElementById('version').textContent = wasm.version();
  status.textContent = 'Ready.';
  document.documentElement.dataset.ready = 'true';
} catch (err) {
  status.textContent = `The simulator failed to load (${err}). Build it with \`cargo xtask build-web\`.`;
  status.setAttribute('role', 'alert');
  document.documentElement.dataset.ready = 'error';
  throw err;
}
