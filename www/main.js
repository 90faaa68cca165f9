// The page's entry module. Contract with tests/: once the simulator is initialised and the
// lesson is wired, <html data-ready="true">; if it fails, data-ready="error" and the page says why
// (role="alert").
//
// One state: the knee lab (#lab) is the replica the page talks about. Its state lives in the
// URL hash; the page's own controls (SLO sliders, engine knobs) change it through `setMain`,
// and secondary labs follow it (mirror.js). The predict-then-reveal steps and the two-clocks
// timeline have labs of their own, set up for the point each one makes. Each lesson module
// exports `setup({ wasm, lab, setMain })` and owns one beat or role.

import { loadKneelab } from './js/wasm.js';
import { SCHEMA } from './js/knee-lab.js';
import { grouped } from './js/format.js';
import { either } from './js/lesson/numbers.js';
import { changed, fill, say, whenNear } from './js/lesson/live.js';
import { bindUrlState } from './js/lesson/url-state.js';
import * as toc from './js/lesson/toc.js';
import * as recall from './js/lesson/recall.js';
import * as colleague from './js/lesson/colleague.js';
import * as analogy from './js/lesson/analogy.js';
import * as steps from './js/lesson/steps.js';
import * as clocks from './js/lesson/clocks.js';
import * as knee from './js/lesson/knee.js';
import * as goodput from './js/lesson/goodput.js';
import * as hero from './js/lesson/hero.js';

const status = document.getElementById('page-status');
// Enter never submits the page's calculator forms (no inline handler: a strict CSP holds).
document.addEventListener('submit', (e) => e.preventDefault());
const lab = document.getElementById('lab');

// Before the simulator loads, so the lab's first run is already the linked one.
const url = bindUrlState(lab);

/** Changes the main lab's state from a page control, and records it in the URL. */
function setMain(partial) {
  const diff = changed(lab.state, partial);
  if (Object.keys(diff).length === 0) return;
  lab.state = diff;
  url.scheduleWrite();
}

try {
  const wasm = await loadKneelab();
  document.getElementById('version').textContent = wasm.version();
  // The model and GPUs the prose names, from the engine's presets.
  const gpus = SCHEMA.presets.map((p) => p.gpu);
  fill(document.body, {
    model_label: SCHEMA.model_label,
    gpus: `${either(gpus)} GPUs`,
    default_gpu: SCHEMA.presets.find((p) => p.name === SCHEMA.defaults.preset).gpu,
    // The course's baseline engine, as the prose names it.
    base_seqs: SCHEMA.engine.max_num_seqs,
    base_budget: grouped(SCHEMA.engine.max_num_batched_tokens),
  });
  const context = { wasm, lab, setMain };
  for (const module of [hero, toc, recall, colleague, analogy, steps, clocks, knee, goodput]) {
    module.setup(context);
  }
  // The beats further down load their modules as their sections come near (500 px ahead), so the
  // page's first load carries only what its top needs. Each sets itself up from the state it
  // finds then (a value typed before is read, the main lab's state is shown); its section then
  // says data-ready="true". A button clicked while its module is still loading is clicked again
  // once it is set up, so the reader's click is not lost.
  const near = (id, loads, extra = {}) => {
    const section = document.getElementById(id);
    let clicked = null;
    // The innermost section loading on approach owns a click (#paste-form sits in #cluster).
    section.dataset.near = '';
    const early = (e) => {
      const button = e.target.closest?.('button');
      if (button && button.closest('[data-near]') === section) clicked = button;
    };
    section.addEventListener('click', early);
    whenNear(section, async () => {
      for (const m of await Promise.all(loads.map((load) => load()))) await m.setup({ ...context, ...extra });
      section.removeEventListener('click', early);
      section.dataset.ready = 'true';
      if (clicked?.isConnected && !clicked.disabled) clicked.click();
    });
  };
  near('sizing', [() => import('./js/lesson/calculator.js')]);
  near('cluster', [() => import('./js/lesson/cluster.js'), () => import('./js/lesson/metrics-panel.js')]);
  near('worked', [() => import('./js/lesson/worked.js'), () => import('./js/lesson/tutor.js')]);
  // "Your replica on its knee": most readers never paste.
  near('paste-form', [() => import('./js/lesson/paste.js')]);
  // The fleet lab (its element and the third wasm module) as "Route and autoscale" comes near.
  near('fleet', [() => import('./js/lesson/fleet.js')], { say, fill, modelLabel: SCHEMA.model_label });
  status.textContent = '';
  status.hidden = true;
  document.documentElement.dataset.ready = 'true';
} catch (err) {
  status.hidden = false;
  status.textContent = `The simulator failed to load (${err.message ?? err}). Build it with \`cargo xtask build-web\`.`;
  status.setAttribute('role', 'alert');
  document.documentElement.dataset.ready = 'error';
  throw err;
}
