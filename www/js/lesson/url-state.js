// The main lab's state in the address bar, so a link reproduces the view. The keys are Config
// paths, as the CLI's JSON names the fields (lab.html and the element's attributes take the same),
// read through the element's one table of settings; the short attribute names of older links
// are read too:
//   #load.offered_load=0.95&load.mode=closed&workload.preset=rag&engine.max_num_seqs=64&slo.knee=p99
// Written with history.replaceState (no history spam, no scroll jump), read on load and on
// hashchange. Anything unknown or unreadable is ignored, never fatal (a number the engine
// refuses is its error on the lab, as an attribute's would be). A plain in-page anchor
// (#goodput) carries no state and is left to the browser.

import { BUDGETS, BURSTINESS, KV_CACHE_TOKENS, SEQS, DEFAULT_STATE, WORKLOADS, readSettings, settingsOf } from '../knee-lab.js';
import { changed, debounce } from './live.js';

/** Settings a select shows: a link may set only one of its options. */
const OPTIONS = { maxNumSeqs: SEQS, maxNumBatchedTokens: BUDGETS, kvCacheTokens: KV_CACHE_TOKENS, burstiness: BURSTINESS.map((c) => c.shape) };

/** The valid settings in a hash (`#load.offered_load=0.9&engine.max_num_seqs=64`), as a partial state. */
export function parseHash(hash) {
  const text = hash.replace(/^#/, '');
  if (!text.includes('=')) return {};
  const out = readSettings(new URLSearchParams(text));
  for (const [key, options] of Object.entries(OPTIONS)) if (key in out && !options.includes(out[key])) delete out[key];
  return out;
}

/** The hash for a state. */
export const toHash = (state) => `#${new URLSearchParams(settingsOf(state))}`;

/** The full state a hash describes: the page's defaults, the workload's SLOs, then the hash. */
function fullState(partial, defaults) {
  const workload = partial.workload ?? defaults.workload;
  const slos = WORKLOADS[workload] ?? WORKLOADS[defaults.workload];
  return { ...defaults, workload, sloTtftMs: slos.sloTtftMs, sloTpotMs: slos.sloTpotMs, ...partial };
}

/**
 * Keeps `lab`'s state and the URL hash in step. Returns `{ scheduleWrite }` for page controls
 * that change the lab's state themselves (the element only reports the reader's own changes).
 */
export function bindUrlState(lab) {
  // The page's defaults are the lab's state before any hash is applied (its attributes).
  const defaults = { ...DEFAULT_STATE, ...lab.state };

  const apply = (hash) => {
    const partial = parseHash(hash);
    if (Object.keys(partial).length === 0) return;
    const diff = changed(lab.state, fullState(partial, defaults));
    if (Object.keys(diff).length > 0) lab.state = diff;
  };

  const write = debounce(() => {
    const hash = toHash(lab.state);
    if (location.hash !== hash) history.replaceState(history.state, '', hash);
  }, 250);

  apply(location.hash);
  addEventListener('hashchange', () => apply(location.hash));
  lab.addEventListener('kneelab-change', (e) => {
    if (e.target === lab) write();
  });
  return { scheduleWrite: write };
}
