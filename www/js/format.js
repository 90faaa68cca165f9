// People-friendly text for the engine's numbers. The numbers themselves (data-value) stay in the
// Summary's units: seconds, requests per second, fractions, counts.

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

const PERCENT = new Set([
  'slo_attainment',
  'kv_cache_usage',
  'load',
  'offered_load',
  'knee_load',
  'saturation_load',
  'littles_rel_error',
  'littles_batch_rel_error',
  'knee_slo_attainment',
  'attainment_target',
  'prefill_step_share',
  'ttft_p99_crossing_load',
  'tpot_p99_crossing_load',
]);
const COUNT = new Set([
  'num_preemptions',
  'users',
  'requests_completed',
  'num_requests_running_now',
  'num_requests_waiting_now',
  'sweep_points',
  'waiting_window_max',
]);
const MEAN_COUNT = new Set([
  'num_requests_running',
  'num_requests_waiting',
  'littles_l',
  'littles_batch_l',
  'knee_running',
  'saturation_running',
  'waiting_window_mean',
  'waiting_window_first_half',
  'waiting_window_second_half',
]);

/** Formats a readout by its name's unit. */
export function formatMetric(name, value) {
  if (value == null || Number.isNaN(value)) return '—';
  if (PERCENT.has(name)) return formatPercent(value);
  if (COUNT.has(name)) return Math.round(value).toLocaleString('en-US');
  if (MEAN_COUNT.has(name)) return value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString('en-US');
  if (name === 'ttft_p99_over_p50') return `${value < 10 ? value.toFixed(1) : Math.round(value)}×`;
  if (name === 'output_tokens_per_s' || name === 'limit_prefill_tokens_per_s') return `${Math.round(value).toLocaleString('en-US')} tok/s`;
  if (name.endsWith('_rps')) return formatRate(value);
  if (name.endsWith('_s') || /_(mean|p50|p90|p99)$/.test(name)) return formatSeconds(value);
  return String(value);
}
