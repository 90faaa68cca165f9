// People-friendly text for the engine's numbers. The numbers themselves (data-value) stay in the
// Summary's units: seconds, requests per second, fractions, counts.

import SCHEMA from '../pkg/kneelab_schema.js';

/** "45 µs", "850 ms", "1.24 s", "12.3 s", "3.2 min". */
export function formatSeconds(s) {
  if (s == null || Number.isNaN(s)) return '—';
  if (!Number.isFinite(s)) return '∞';
  const a = Math.abs(s);
  if (a === 0) return '0 s';
  if (a < 1e-3) return `${(s * 1e6).toPrecision(2).replace(/\.?0+$/, '')} µs`;
  if (a < 1) return `${Math.round(s * 1e3)} ms`;
  if (a < 10) return `${s.toFixed(2)} s`;
  if (a < 120) return `${s.toFixed(1)} s`;
  return `${(s / 60).toFixed(1)} min`;
}

/** 0.853 -> "85%", 0.0042 -> "0.4%". */
export function formatPercent(fraction) {
  if (fraction == null || !Number.isFinite(fraction)) return '—';
  const p = fraction * 100;
  return `${Math.abs(p) < 10 && p !== Math.round(p) ? p.toFixed(1) : Math.round(p)}%`;
}

/** Requests per second with sensible precision. */
export function formatRate(rps) {
  if (rps == null || !Number.isFinite(rps)) return '—';
  return `${rps < 10 ? rps.toFixed(2) : rps < 100 ? rps.toFixed(1) : Math.round(rps)} req/s`;
}

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
