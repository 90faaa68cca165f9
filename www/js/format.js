// People-friendly text for the engine's numbers. The numbers themselves (data-value) stay in the
// Summary's units: seconds, requests per second, fractions, counts.

import SCHEMA from '../pkg/kneelab_schema.js';
import { kneelabNow } from './wasm.js';

// Durations, percentages and rates are written by the engine's own formatter (kneelab-plot's,
// through the wasm module), the one the charts use: a chart's "SLO 2 s" and the sentence beside
// it read alike. Until the module is up there is nothing to format, so a dash stands in.
const viaEngine = (name) => (v) => {
  if (v == null || Number.isNaN(v)) return '—';
  const wasm = kneelabNow();
  return wasm ? wasm[name](v) : '—';
};

/** "45 µs", "850 ms", "1.2 s", "12 s", "1234 s". */
export const formatSeconds = viaEngine('formatSeconds');

/** 0.853 -> "85%", 0.0042 -> "0.4%". */
export const formatPercent = viaEngine('formatPercent');

/** Requests per second with sensible precision: "4.25 req/s", "13.7 req/s". */
export const formatRate = viaEngine('formatRate');

/** Each readout's unit, from the schema's registry (`kneelab_sim::schema::READOUTS`). */
const UNITS = new Map(SCHEMA.readouts.map((r) => [r.name, r.unit]));

/** Formats a readout by its name's unit. */
export function formatMetric(name, value) {
  if (value == null || Number.isNaN(value)) return '—';
  // Names outside the registry (the lesson's own) read by their suffix.
  const unit = UNITS.get(name) ?? (name.endsWith('_rps') ? 'rate' : /(_s|_(mean|p50|p90|p99))$/.test(name) ? 'seconds' : null);
  switch (unit) {
    case 'percent':
      return formatPercent(value);
    case 'count':
      return Math.round(value).toLocaleString('en-US');
    case 'mean_count':
      return value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString('en-US');
    case 'ratio':
      return `${value < 10 ? value.toFixed(1) : Math.round(value)}×`;
    case 'tokens_per_second':
      return `${Math.round(value).toLocaleString('en-US')} tok/s`;
    case 'rate':
      return formatRate(value);
    case 'seconds':
      return formatSeconds(value);
    default:
      return String(value);
  }
}
