// The simulated /metrics panel: the main lab's current run as vLLM's Prometheus text, refreshed
// once the lab settles, plus a reading of it the way a dashboard would: the gauges, the waiting
// queue judged over the run's last minute (never one scrape), and histogram_quantile(0.99, ...)
// over the latency histograms. The text and its reading are the page's third module's
// (`el.metricsReading()`): the quantiles come from the buckets the text lists, by the function
// `kneelab probe` reads a real scrape with.

import { coalesced, fill, formatMetric, formatPercent, formatSeconds, onUpdate, say } from './live.js';

/** How far the window's average must sit from the run's to count as above or below it. */
const APART = 1.25;

export function setup({ lab }) {
  const pre = document.querySelector('pre[data-panel="metrics"]');
  const reading = document.getElementById('metrics-reading');
  onUpdate(lab, coalesced(async () => {
    let text;
    let d;
    try {
      ({ text, dashboard: d } = await lab.metricsReading());
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
      running: formatMetric('num_requests_running_now', d.values['vllm:num_requests_running']),
      waiting: formatMetric('num_requests_waiting_now', d.values['vllm:num_requests_waiting']),
      kv: formatPercent(d.values['vllm:kv_cache_usage_perc']),
      preemptions: formatMetric('num_preemptions', d.values['vllm:num_preemptions_total']),
      ttft_q99: formatSeconds(d.p99['vllm:time_to_first_token_seconds']?.value),
      tpot_q99: formatSeconds(d.p99['vllm:request_time_per_output_token_seconds']?.value),
      itl_q99: formatSeconds(d.p99['vllm:inter_token_latency_seconds']?.value),
      ttft_exact: formatSeconds(r.ttft_p99),
      tpot_exact: formatSeconds(r.tpot_p99),
      itl_exact: formatSeconds(r.itl_p99),
    });
  }));
}
