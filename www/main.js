// The page's entry module. Contract with tests/: once the simulator is initialised,
// <html data-ready="true">; if it fails, data-ready="error" and the page says why.

import { loadKneelab } from './js/wasm.js';
import './js/knee-lab.js';

const status = document.getElementById('page-status');

try {
  const wasm = await loadKneelab();
  document.getElementById('version').textContent = wasm.version();
  status.textContent = '';
  document.documentElement.dataset.ready = 'true';
} catch (err) {
  status.textContent = `The simulator failed to load (${err.message ?? err}). Build it with \`cargo xtask build-web\`.`;
  status.setAttribute('role', 'alert');
  document.documentElement.dataset.ready = 'error';
  throw err;
}
