// The simulated /metrics panel: the main lab's current run as vLLM's Prometheus text
// (`el.metricsText()`, written by the page's third module), refreshed once the lab settles, plus a reading of it the way a dashboard
// would: the gauges, the waiting queue judged over the run's last minute (never one scrape), and
// histogram_quantile(0.99, ...) over the latency histograms.

import { coalesced, fill, formatMetric, formatPercent, formatSeconds, onUpdate, say } from './live.js';

/** How far the window's average must sit from the run's to count as above or below it. */
const APART = 1.25;

/** `name{labels} value` samples of one metric family, in order. */
function samples(text, name) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    out.push({ labels, value: Number(m[4]) });
  }
  return out;
}

/** A gauge or counter's value, or null. */
export function gauge(text, name) {
  const s = samples(text, name)[0];
  return s && Number.isFinite(s.value) ? s.value : null;
}

/**
 * Prometheus's histogram_quantile over cumulative buckets: linear interpolation inside the bucket
 * holding the rank; a rank in the +Inf bucket returns the highest finite bound.
 */
export function histogramQuantile(text, name, q) {
  const buckets = samples(text, `${name}_bucket`)
    .map((s) => ({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), count: s.value }))
    .sort((a, b) => a.le - b.le);
  if (buckets.length < 2) return null;
  const total = buckets[buckets.length - 1].count;
  if (!(total > 0)) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      if (b.count === prevCount) return b.le;
      return prevLe + ((b.le - prevLe) * (rank - prevCount)) / (b.count - prevCount);
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

export function setup({ lab }) {
  const pre = document.querySelector('pre[data-panel="metrics"]');
  const reading = document.getElementById('metrics-reading');
  onUpdate(lab, coalesced(async () => {
    let text;
    try {
      text = await lab.metricsText();
    } catch (err) {
      pre.textContent = `# The simulator could not write this run's /metrics (${err.message ?? err}); change a setting to try again.`;
      return;
    }
    const r = lab.readouts; // the run the text is of: the lab has settled
    if (!text) {
      pre.textContent =
        r.load === 0 ? '# No traffic: the slider is at 0%, so there is nothing to scrape.' : 'Waiting for the simulator…';
      return;
    }
    if (pre.textContent !== text) pre.textContent = text;
    const waiting = gauge(text, 'vllm:num_requests_waiting');
    const running = gauge(text, 'vllm:num_requests_running');
    // Judge the queue over a window, as an alert rule would (avg_over_time / max_over_time).
    const [first, second] = [r.waiting_window_first_half, r.waiting_window_second_half];
    const [mean, runMean] = [r.waiting_window_mean, r.num_requests_waiting];
    const slot = document.getElementById('waiting-note');
    if (mean == null) {
      say(slot, '', {});
    } else {
      // As an alert rule would: the window's average against the run's, and its trend.
      let when = 'steady';
      if (r.waiting_window_max === 0) when = 'empty';
      else if (mean > 5 && mean > APART * runMean && second > first) when = 'growing';
      else if (mean > APART * runMean && mean - runMean > 1) when = 'above';
      else if (mean * APART < runMean && runMean - mean > 1) when = 'below';
      say(slot, when, {
        window: formatSeconds(r.waiting_window_s),
        mean: formatMetric('waiting_window_mean', mean),
        max: formatMetric('waiting_window_max', r.waiting_window_max),
        run_mean: formatMetric('num_requests_waiting', runMean),
        first: formatMetric('waiting_window_first_half', first),
        second: formatMetric('waiting_window_second_half', second),
      });
    }
    fill(reading, {
      running: running == null ? '—' : formatMetric('num_requests_running_now', running),
      waiting: waiting == null ? '—' : formatMetric('num_requests_waiting_now', waiting),
      kv: formatPercent(gauge(text, 'vllm:kv_cache_usage_perc')),
      preemptions: formatMetric('num_preemptions', gauge(text, 'vllm:num_preemptions_total')),
      ttft_q99: formatSeconds(histogramQuantile(text, 'vllm:time_to_first_token_seconds', 0.99)),
      tpot_q99: formatSeconds(histogramQuantile(text, 'vllm:request_time_per_output_token_seconds', 0.99)),
      itl_q99: formatSeconds(histogramQuantile(text, 'vllm:inter_token_latency_seconds', 0.99)),
      ttft_exact: formatSeconds(r.ttft_p99),
      tpot_exact: formatSeconds(r.tpot_p99),
      itl_exact: formatSeconds(r.itl_p99),
    });
  }));
}
