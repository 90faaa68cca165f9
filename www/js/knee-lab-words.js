// <knee-lab>'s words around the numbers: the readouts, the sentences under the controls, each
// chart's description for screen readers and the limits in a sentence. Every number comes from
// the run's readouts (kneelab-web's `readouts.rs` names them).

import { formatMetric, formatPercent, formatRate, formatSeconds, grouped } from './format.js';
import { SCHEMA } from './knee-lab-settings.js';

/** The KV cache control's hint until a run says how the cache fared (`showReadouts`). */
export const KV_HINT = 'If it cannot hold the batch, vLLM preempts requests.';

/** Each registered readout's unit, by name (the schema's registry). */
const UNITS = new Map(SCHEMA.readouts.map((x) => [x.name, x.unit]));

/**
 * State `s` at the load run `r` was made at: a load the engine refused is named beside the
 * slider, and the words describe the run, at the last load it accepted.
 */
const ran = (s, r) => (typeof r.load === 'number' && r.load !== s.load ? { ...s, load: r.load } : s);

/**
 * Shows readouts `r` of a lab in state `s`: the readout boxes (a latency over its SLO marked),
 * the rate under the slider and how a closed loop's users follow from it.
 */
export function showReadouts(root, state, r, usual = null) {
  const s = ran(state, r);
  const el = (id) => root.getElementById(id);
  for (const box of root.querySelectorAll('.readouts [data-metric]')) {
    const name = box.dataset.metric;
    const value = r[name];
    const dd = box.querySelector('dd');
    if (value == null) {
      box.removeAttribute('data-value');
    } else {
      box.setAttribute('data-value', String(value));
    }
    // No knee inside the sweep (the SLOs hold at every load, as a closed loop's users often
    // manage): say how far it looked rather than leave a bare dash.
    const beyond = name === 'knee_load' && value == null ? r.knee_beyond_sweep : null;
    dd.textContent = beyond != null ? `past ${formatPercent(beyond)}` : formatMetric(name, value);
    if (beyond != null) dd.title = `The SLOs hold at every load swept, up to ${formatPercent(beyond)}: no knee in range.`;
    else dd.removeAttribute('title');
    // Only a time is held to its SLO: TTFT p99 / p50 is a ratio, not a latency.
    const timed = UNITS.get(name) === 'seconds';
    const limit = !timed ? null : name.startsWith('ttft_') ? r.slo_ttft_s : name.startsWith('tpot_') ? r.slo_tpot_s : null;
    dd.classList.toggle('over', limit != null && value != null && value > limit);
    dd.classList.toggle('ok', limit != null && value != null && value <= limit);
  }
  // After a steady run, its TTFT p99 beside the usual run's: a short run rarely holds the worst episodes, so it reads low.
  const n = (x) => formatMetric('requests_completed', x);
  const p99 = (x) => formatMetric('ttft_p99', x.ttft_p99);
  const beside = usual?.ttft_p99 != null ? `: TTFT p99 ${p99(r)}, where the usual run's ${n(usual.requests_completed)} (drawn in the charts) read ${p99(usual)}` : '';
  el('steady-note').textContent = r.requests_completed != null ? `Readouts from ${n(r.requests_completed)} measured requests${beside}.` : '';
  // The cache against this run: a preemption says it could not hold the batch.
  const preempted = r.num_preemptions;
  el('kv-hint').textContent =
    preempted == null || s.load <= 0
      ? KV_HINT
      : preempted > 0
        ? `Too small for this batch: ${grouped(preempted)} preemption${preempted === 1 ? '' : 's'} in this run (evicted, recomputed later).`
        : 'Holds this batch: no preemption in this run.';
  el('offered-load-rate').textContent =
    s.load <= 0
      ? 'No traffic: drag the slider up to send requests.'
      : s.mode === 'open'
        ? `Poisson arrivals at ${formatRate(r.offered_rps)}, ${formatPercent(s.load)} of a capacity of ${formatRate(r.capacity_rps)}` +
          (r.arrival_rate_rps != null ? `; this run drew ${formatRate(r.arrival_rate_rps)}.` : '.')
        : `Achieved ${formatRate(r.throughput_rps)} (${formatPercent(r.throughput_rps / r.capacity_rps)} of capacity).`;
  el('closed-mapping').textContent =
    s.mode === 'closed' && r.users != null
      ? `${r.users} users, each thinking ${formatSeconds(s.thinkTimeS)} on average between an answer and their next request. ` +
        `The slider picks N = load × capacity × (think + unloaded latency) = ${formatPercent(s.load)} × ${formatRate(r.capacity_rps)} × ` +
        `(${formatSeconds(s.thinkTimeS)} + ${formatSeconds(r.base_latency_s)}): if every answer took the unloaded latency they would offer the slider’s load; ` +
        `when the replica slows down, they send less.` +
        (r.open_same_ttft_p99 != null
          ? ` An open loop at the same ${formatRate(r.open_same_rps)} has a TTFT p99 of ${formatSeconds(r.open_same_ttft_p99)} (this closed loop: ${formatSeconds(r.ttft_p99)}).`
          : '')
      : s.mode === 'closed'
        ? ''
        : 'Open loop: requests arrive at a rate whatever the replica does, like public traffic.';
}

/** What a screen reader hears after a run settles. */
export const liveSummary = (state, r, s = ran(state, r)) =>
  s.load <= 0
    ? 'No traffic.'
    : `At ${formatPercent(s.load)} offered load: TTFT p99 ${formatSeconds(r.ttft_p99)} against a ${formatSeconds(r.slo_ttft_s)} SLO; ` +
      `goodput ${formatRate(r.goodput_rps)} of ${formatRate(r.throughput_rps)} throughput; ` +
      `${formatMetric('num_requests_waiting', r.num_requests_waiting)} requests waiting on average.`;

const liveTimers = new WeakMap();
/**
 * Says a run's `liveSummary` in the lab's live region once its readouts have rested for a moment
 * (a drag says only where it stopped); `readouts` null cancels what was pending.
 */
export function sayLater(root, s, readouts) {
  clearTimeout(liveTimers.get(root));
  if (!readouts) return;
  liveTimers.set(root, setTimeout(() => (root.getElementById('live-summary').textContent = liveSummary(s, readouts)), 700));
}

/** Each chart's description (its `aria-label`) and the sentences in the captions, from the run. */
export function describeCharts(root, state, r) {
  const s = ran(state, r);
  const el = (id) => root.getElementById(id);
  const at = `at ${formatPercent(s.load)} load`;
  const knee = r.knee_load != null ? `; the knee is at ${formatPercent(r.knee_load)}` : '';
  el('chart-latency').setAttribute(
    'aria-label',
    `TTFT against offered load: ${at}, p50 ${formatSeconds(r.ttft_p50)} and p99 ${formatSeconds(r.ttft_p99)}, SLO ${formatSeconds(r.slo_ttft_s)}${knee}.`,
  );
  el('chart-throughput').setAttribute(
    'aria-label',
    `Throughput and goodput against offered load: ${at}, throughput ${formatRate(r.throughput_rps)}, goodput ${formatRate(r.goodput_rps)}, capacity ${formatRate(r.capacity_rps)}${knee}.`,
  );
  el('chart-queue').setAttribute(
    'aria-label',
    `Requests running and waiting over time ${at}: on average ${formatMetric('num_requests_running', r.num_requests_running)} running and ${formatMetric('num_requests_waiting', r.num_requests_waiting)} waiting.`,
  );
  el('tail-loads').textContent = SCHEMA.compare_loads.map(formatPercent).join(' and ');
  if (r.timeline_wait_mean_s != null) {
    const pick =
      `They come from the middle of the run, picked as the six whose mean wait, ${formatSeconds(r.timeline_wait_mean_s)}, ` +
      `is nearest the run's mean wait of ${formatSeconds(r.queue_mean)}: waits typical of this load.`;
    el('timeline-pick').textContent = pick;
    el('chart-timeline').setAttribute('aria-label', `Timeline of six requests ${at}. ${pick}`);
  }
  const limits = describeLimits(r);
  if (limits) {
    el('limits-sentence').textContent = limits;
    el('chart-limits').setAttribute('aria-label', `The replica's limits: ${limits}`);
  }
}

/** The limits a readout map names (`limit_*_rps`), in the order the chart draws them. */
const LIMITS = [
  ['seq_cap', 'the sequence cap'],
  ['kv_cache', 'the KV cache'],
  ['prefill', 'prefill'],
];

/**
 * Which limit binds and by how much, in words, from readouts (`limit_seq_cap_rps`,
 * `limit_kv_cache_rps`, `limit_prefill_rps`, `limit_prefill_tokens_per_s`, `limit_rps`,
 * `capacity_rps`); null until they are known. The binding limit is the one whose rate is the
 * engine's estimate (`limit_rps`): the rule that picks it lives in the engine.
 */
export function describeLimits(r) {
  if (r.limit_rps == null) return null;
  const binding = LIMITS.find(([key]) => r[`limit_${key}_rps`] === r.limit_rps);
  const name = binding ? binding[1] : 'none of them';
  // On a near tie the engine names prefill, though a batch bar may sit a little lower: a tie,
  // said as one (past saturation the batch fills just as prefill runs out).
  const lower = LIMITS.find(([key]) => r[`limit_${key}_rps`] < r.limit_rps);
  const verdict = lower
    ? `so ${lower[1]} and ${name} nearly tie: either stops the replica at about that rate, and raising ${lower[1]} ` +
      `alone buys almost nothing, with ${name} right behind it`
    : `so ${name} binds`;
  return (
    `the sequence cap ÷ time in the batch allows ${formatRate(r.limit_seq_cap_rps)}, prefill ` +
    `${formatRate(r.limit_prefill_rps)} (${grouped(r.limit_prefill_tokens_per_s)} prefill tokens/s ÷ the mean prompt) ` +
    `and the KV cache ${formatRate(r.limit_kv_cache_rps)}, ${verdict}; the engine saturates at ${formatRate(r.capacity_rps)}.`
  );
}
