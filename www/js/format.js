// People-friendly text for the engine's numbers. The numbers themselves (data-value) stay in the
// Summary's units: seconds, requests per second, fractions, counts.

import { kneelabNow } from './wasm.js';

// Every number is written by the engine's own formatter (kneelab-plot's,
// through the wasm module), the one the charts use: a chart's "SLO 2 s" and the sentence beside
// it read alike. Until the module is up there is nothing to format, so a dash stands in.
// The value is the last argument.
const viaEngine = (name) => (...args) => {
  const v = args.at(-1);
  if (v == null || Number.isNaN(v)) return '—';
  const wasm = kneelabNow();
  return wasm ? wasm[name](...args) : '—';
};

/**
 * A count as en-US writes it, "12,345" (rounded to a whole number), without `Intl`: a page's
 * first `toLocaleString` loads the browser's locale data, 10-20 ms of the task that makes it, and
 * a lab writes counts into its markup as it opens.
 */
export function grouped(n) {
  const digits = String(Math.round(Math.abs(n))).replace(/\B(?=(\d{3})+$)/g, ',');
  return n <= -0.5 ? `-${digits}` : digits;
}

/** "45 µs", "850 ms", "1.2 s", "12 s", "1234 s". */
export const formatSeconds = viaEngine('formatSeconds');

/** 0.853 -> "85%", 0.0042 -> "0.4%". */
export const formatPercent = viaEngine('formatPercent');

/** Requests per second with sensible precision: "4.25 req/s", "13.7 req/s". */
export const formatRate = viaEngine('formatRate');

/**
 * A readout by its name's unit (the schema's registry; a lesson's own name by its suffix), in the
 * engine's words too: "27", "2.5", "3.2×", "12,345 tok/s", "4.25 req/s".
 */
export const formatMetric = viaEngine('formatMetric');
