// The main lab's state in the address bar, so a link reproduces the view:
//   #load=0.95&mode=closed&workload=rag&seqs=64&chunked=1&budget=2048&kv=440000&ttft=2000&tpot=200&knee=p99&preset=llama-3-8b-a100
// Written with history.replaceState (no history spam, no scroll jump), read on load and on
// hashchange. Anything unknown or invalid is ignored, never fatal. A plain in-page anchor
// (#goodput) carries no state and is left to the browser.

import { BUDGETS, BURSTINESS, DEFAULT_STATE, KNEE_RULES, KV_CACHE_TOKENS, PRESETS, SEQS, WORKLOADS } from '../knee-lab.js';
import { changed, debounce } from './live.js';

const number = (min, max) => (text) => {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text)) return undefined;
  const v = Number(text);
  return Number.isFinite(v) && v >= min && v <= max ? v : undefined;
};
const oneOf = (values) => (text) => {
  const v = values.find((x) => String(x) === text);
  return v;
};

/** Hash key -> [state key, parse(text) -> value | undefined, format(value) -> text]. */
const FIELDS = {
  load: ['load', (t) => {
    const v = number(0, 1.2)(t);
    return v === undefined ? undefined : Math.round(v * 100) / 100;
  }, (v) => String(Math.round(v * 100) / 100)],
  mode: ['mode', oneOf(['open', 'closed']), String],
  workload: ['workload', oneOf(Object.keys(WORKLOADS)), String],
  preset: ['preset', oneOf(Object.keys(PRESETS)), String],
  seqs: ['maxNumSeqs', oneOf(SEQS), String],
  chunked: ['chunkedPrefill', (t) => (t === '1' || t === 'true' ? true : t === '0' || t === 'false' ? false : undefined), (v) => (v ? '1' : '0')],
  budget: ['maxNumBatchedTokens', oneOf(BUDGETS), String],
  kv: ['kvCacheTokens', oneOf(KV_CACHE_TOKENS), String],
  ttft: ['sloTtftMs', number(1, 600000), String],
  tpot: ['sloTpotMs', number(1, 60000), String],
  knee: ['kneeRule', oneOf(Object.keys(KNEE_RULES)), String],
  burst: ['burstiness', oneOf(BURSTINESS.map((c) => c.shape)), String],
  scale: ['latencyScale', oneOf(['linear', 'log']), String],
};

/** The valid state fields in a hash (`#a=1&b=2`), as a partial state. */
export function parseHash(hash) {
  const text = hash.replace(/^#/, '');
  if (!text.includes('=')) return {};
  const out = {};
  for (const [key, raw] of new URLSearchParams(text)) {
    const field = FIELDS[key];
    if (!field) continue;
    const value = field[1](raw.trim());
    if (value !== undefined) out[field[0]] = value;
  }
  return out;
}

/** The hash for a state. */
export function toHash(state) {
  const parts = [];
  for (const [key, [stateKey, , format]] of Object.entries(FIELDS)) {
    const v = state[stateKey];
    if (v === undefined || (typeof v === 'number' && !Number.isFinite(v))) continue;
    parts.push(`${key}=${encodeURIComponent(format(v))}`);
  }
  return `#${parts.join('&')}`;
}

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
