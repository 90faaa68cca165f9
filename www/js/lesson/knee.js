// Beat 4 around the main lab: sentences that quote its live numbers, and the open-versus-closed
// comparison, which the lab computes from its config and capacity (`compareLoops`, on the page's
// third module: the other load mode at the same config and slider position, and an open loop at
// the closed loop's achieved throughput).

import {
  coalesced,
  configKey,
  debounce,
  fill,
  fillMetrics,
  formatMetric,
  formatPercent,
  formatRate,
  formatSeconds,
  formatTimes,
  meanVsTail,
  onUpdate,
  p99Crossing,
  say,
  setText,
  watchNear,
  words,
} from './live.js';

/** What the SLO knee is judged on, in words, for a lab's state and readouts. */
export function kneeDefinition(state, r) {
  return state.kneeRule === 'p99'
    ? 'TTFT p99 and TPOT p99 both stay within their SLOs'
    : `at least ${formatPercent(r.attainment_target)} of requests meet both SLOs`;
}

/**
 * Where the slider sits relative to the SLO knee: which of the page's sentences (the templates
 * of `slot`, `#knee-position`) applies, and the numbers it quotes.
 */
function position(slot, r, state, sweepDone) {
  if (r.load == null) return ['none', {}];
  if (!(r.load > 0)) return ['no-traffic', {}];
  const mode = state.mode === 'closed' ? 'closed' : 'open';
  const values = {
    load: formatPercent(r.load),
    users: formatMetric('users', r.users),
    saturation_rps: formatRate(r.saturation_rps),
    knee_beyond: formatPercent(r.knee_beyond_sweep),
    ttft_p99: formatSeconds(r.ttft_p99),
    ttft_p99_times: formatTimes(r.ttft_p99 / r.slo_ttft_s),
    knee_ttft_p99: formatSeconds(r.knee_ttft_p99_s),
    knee_ttft_p99_times: formatTimes(r.knee_ttft_p99_s / r.slo_ttft_s),
    headroom_rps: formatRate(r.capacity_rps - r.throughput_rps),
    waiting: formatMetric('num_requests_waiting', r.num_requests_waiting),
  };
  values.at = words(slot, `at-${mode}`, values);
  if (r.knee_beyond_sweep != null) return [`no-knee-${mode}`, values];
  if (r.knee_load == null) return [sweepDone ? 'none-knee' : 'unknown-knee', values];
  if (r.load < r.knee_load - 1e-9) {
    // What the tail is made of, from the run: the queue's own p99 against TTFT's.
    values.queue_p99 = formatSeconds(r.queue_p99);
    values.tail = words(slot, r.queue_p99 > 0.5 * r.ttft_p99 ? 'tail-wait' : 'tail-prefill', values);
    if (r.ttft_p99 > r.slo_ttft_s) {
      const over = { slo: formatSeconds(r.slo_ttft_s), target: formatPercent(r.attainment_target) };
      values.tail += ` ${words(slot, 'tail-over', over)}`;
    }
    return ['below-knee', values];
  }
  if (r.load <= r.knee_load + 1e-9) {
    const p99Broken = state.kneeRule !== 'p99' && r.knee_ttft_p99_s > r.slo_ttft_s;
    values.p99_note = p99Broken ? words(slot, 'p99-note', values) : '';
    return ['at-knee', values];
  }
  // Within a percent of capacity (a run's own noise) there is nothing left to give.
  return [r.capacity_rps - r.throughput_rps > 0.01 * r.capacity_rps ? 'past-knee' : 'saturated', values];
}

/** The SLO knee's place, and the saturation point's, in the page's words (`#knee-at`, `#saturation-at`). */
function kneeAndSaturation(r, state, sweepDone) {
  const at = document.getElementById('knee-at');
  if (r.knee_beyond_sweep != null) say(at, 'beyond', { knee_beyond: formatPercent(r.knee_beyond_sweep) });
  else if (r.knee_load != null) {
    say(at, 'found', { knee_load: formatPercent(r.knee_load), knee_rps: formatRate(r.knee_rps), knee_ttft_p99: formatSeconds(r.knee_ttft_p99_s) });
  } else say(at, sweepDone ? 'none' : 'unknown', {});
  const saturation = document.getElementById('saturation-at');
  if (r.saturation_load == null) return say(saturation, '', {});
  say(saturation, state.mode === 'closed' ? 'closed' : 'open', {
    saturation_load: formatPercent(r.saturation_load),
    saturation_rps: formatRate(r.saturation_rps),
    capacity_rps: formatRate(r.capacity_rps),
  });
}

function setupKneeText(lab) {
  const live = document.getElementById('knee-live');
  const where = document.getElementById('knee-position');
  const meanLive = document.getElementById('mean-live');
  let sweptFor = null;
  onUpdate(lab, ({ readouts: r, state, sweepDone }) => {
    fill(live, {
      capacity_rps: formatRate(r.capacity_rps),
      knee_definition: kneeDefinition(state, r),
      crossing: p99Crossing(r),
    });
    kneeAndSaturation(r, state, sweepDone);
    say(where, ...position(where, r, state, sweepDone));
    const key = configKey(state);
    if (sweepDone && sweptFor !== key) {
      sweptFor = key;
      fill(meanLive, { mean_note: meanVsTail(lab.sweep, r.slo_ttft_s) ?? '' });
    }
  });
}

/** How far apart two TTFT p99s must be for the loop comparison to call them different. */
const APART = 1.2;

function setupLoopCompare(lab) {
  const box = document.getElementById('loop-compare');
  const live = document.getElementById('loop-live');
  const slider = document.getElementById('loop-slider');
  const sameSlot = document.getElementById('loop-same');
  let near = false;
  say(slider, 'waiting', {});
  let shownLoad = null;
  const render = coalesced(async () => {
    const load = lab.state.load;
    if (load !== shownLoad) {
      // The caption names the slider's load at once; numbers of another load would sit under it.
      shownLoad = load;
      fill(box, { load: formatPercent(load) });
      for (const el of box.querySelectorAll('[data-metric^="loop_"]')) setText(el, { text: '—', value: NaN });
    }
    if (!near) return;
    let c;
    try {
      c = await lab.compareLoops();
    } catch (err) {
      say(slider, 'failed', { why: err.message ?? String(err) });
      return;
    }
    if (!c) {
      say(slider, lab.state.load > 0 ? 'running' : 'no-traffic', {});
      say(sameSlot, '', {});
      return;
    }
    fill(box, { load: formatPercent(c.load) });
    const { open, closed, open_at_closed_throughput: same, capacity_rps: cap, users } = c;
    const m = (value, text) => ({ value, text });
    const rate = (side) => m(side.throughput_rps, formatRate(side.throughput_rps));
    const share = (side) => m(side.throughput_rps / cap, formatPercent(side.throughput_rps / cap));
    const p99 = (side) => m(side.ttft_p99_s, formatSeconds(side.ttft_p99_s));
    fillMetrics(box, {
      loop_open_rps: rate(open),
      loop_closed_rps: rate(closed),
      loop_same_rps: rate(same),
      loop_open_share: share(open),
      loop_closed_share: share(closed),
      loop_same_share: share(same),
      loop_open_ttft_p99: p99(open),
      loop_closed_ttft_p99: p99(closed),
      loop_same_ttft_p99: p99(same),
      loop_users: m(users, `${formatMetric('users', users)} users`),
    });
    const values = {
      closed_p99: formatSeconds(closed.ttft_p99_s),
      open_p99: formatSeconds(open.ttft_p99_s),
      same_p99: formatSeconds(same.ttft_p99_s),
      better: formatTimes(open.ttft_p99_s / closed.ttft_p99_s),
      same_times: formatTimes(same.ttft_p99_s / closed.ttft_p99_s),
      users: formatMetric('users', users),
      closed_rps: formatRate(closed.throughput_rps),
      closed_share: formatPercent(closed.throughput_rps / cap),
      open_rps: formatRate(open.throughput_rps),
      open_share: formatPercent(open.throughput_rps / cap),
    };
    // A tail counts as hidden, or as mostly unoffered load, when it moves by more than APART.
    say(slider, open.ttft_p99_s > APART * closed.ttft_p99_s ? 'hides' : 'alike', values);
    say(sameSlot, same.ttft_p99_s * APART < open.ttft_p99_s ? 'offered' : 'bursts', values);
  });
  // Up to two more simulations: after a pause, not on every slider step.
  onUpdate(lab, debounce(render, 200));
  watchNear(box, (isNear) => {
    near = isNear;
    if (near) render();
  });
}

export function setup({ lab }) {
  setupKneeText(lab);
  setupLoopCompare(lab);
}
