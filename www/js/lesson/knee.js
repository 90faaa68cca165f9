// Beat 4 around the main lab: sentences that quote its live numbers, and the open-versus-closed
// comparison. For the comparison a hidden twin lab runs the other load mode at the same config
// and slider position; the closed side's readouts already carry an open loop run at the same
// achieved throughput (open_same_*), so both comparisons come from the engine.

import {
  configKey,
  createLab,
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
} from './live.js';
import { mirror } from './mirror.js';

/** What the SLO knee is judged on, in words, for a lab's state and readouts. */
export function kneeDefinition(state, r) {
  return state.kneeRule === 'p99'
    ? 'TTFT p99 and TPOT p99 both stay within their SLOs'
    : `at least ${formatPercent(r.attainment_target)} of requests meet both SLOs`;
}

/** The sentence about where the slider sits relative to the SLO knee. */
function position(r, state) {
  if (r.load == null) return '';
  if (!(r.load > 0)) return 'The slider is at 0%: no traffic. Drag it up.';
  const closed = state.mode === 'closed';
  const at = closed
    ? `You have ${formatMetric('users', r.users)} users, a demand of ${formatPercent(r.load)} of capacity`
    : `You are at ${formatPercent(r.load)} of capacity`;
  if (r.knee_beyond_sweep != null) {
    return closed
      ? `${at}. Within the slider's range these users never break the SLOs: a closed loop slows down with the replica, so it has no SLO knee here, and it saturates at ${formatRate(r.saturation_rps)} achieved.`
      : `${at}. The SLOs hold across the whole sweep: no SLO knee below ${formatPercent(r.knee_beyond_sweep)}.`;
  }
  if (r.knee_load == null) return `${at}.`;
  if (r.load < r.knee_load - 1e-9) {
    return `${at}, below the SLO knee: more load still buys throughput, and TTFT p99 (${formatSeconds(r.ttft_p99)}) is set mostly by prefill.`;
  }
  if (r.load <= r.knee_load + 1e-9) {
    const p99Broken = state.kneeRule !== 'p99' && r.knee_ttft_p99_s > r.slo_ttft_s;
    return (
      `${at}, right at the SLO knee: at peak, run just below it, with a margin for the minutes a new replica takes to start.` +
      (p99Broken
        ? ` Note that TTFT p99 here is already ${formatSeconds(r.knee_ttft_p99_s)}, ${formatTimes(r.knee_ttft_p99_s / r.slo_ttft_s)} its SLO: ` +
          'if your SLO is stated on p99, judge the knee on p99 (a setting of the lab).'
        : '')
    );
  }
  return (
    `${at}, past the SLO knee: throughput has only ${formatRate(r.capacity_rps - r.throughput_rps)} left to give, ` +
    `while TTFT p99 is ${formatSeconds(r.ttft_p99)} (${formatTimes(r.ttft_p99 / r.slo_ttft_s)} the SLO) and on average ` +
    `${formatMetric('num_requests_waiting', r.num_requests_waiting)} requests wait in the queue.`
  );
}

function setupKneeText(lab) {
  const live = document.getElementById('knee-live');
  const meanLive = document.getElementById('mean-live');
  let sweptFor = null;
  onUpdate(lab, ({ readouts: r, state, sweepDone }) => {
    fill(live, {
      capacity_rps: formatRate(r.capacity_rps),
      knee_definition: kneeDefinition(state, r),
      knee_load: r.knee_beyond_sweep != null ? `more than ${formatPercent(r.knee_beyond_sweep)}` : formatPercent(r.knee_load),
      knee_rps: formatRate(r.knee_rps),
      knee_ttft_p99: formatSeconds(r.knee_ttft_p99_s),
      crossing: p99Crossing(r),
      saturation_load: formatPercent(r.saturation_load),
      saturation_rps: formatRate(r.saturation_rps),
      position: position(r, state),
    });
    const key = configKey(state);
    if (sweepDone && sweptFor !== key) {
      sweptFor = key;
      fill(meanLive, { mean_note: meanVsTail(lab.sweep, r.slo_ttft_s) ?? '' });
    }
  });
}

const same = (a, b) => {
  const { mode: _m1, ...x } = a;
  const { mode: _m2, ...y } = b;
  return configKey(x) === configKey(y) && a.load === b.load;
};

function setupLoopCompare(lab) {
  const box = document.getElementById('loop-compare');
  const live = document.getElementById('loop-live');
  const slot = document.createElement('div');
  slot.hidden = true;
  box.after(slot);

  let twin = null;
  const render = () => {
    if (!twin) return;
    const main = lab.state;
    const mainR = lab.readouts;
    const twinR = twin.readouts;
    fill(box, { load: formatPercent(main.load) });
    if (!same(main, twin.state)) return; // the twin is catching up
    const open = main.mode === 'open' ? mainR : twinR;
    const closed = main.mode === 'open' ? twinR : mainR;
    const cap = open.capacity_rps ?? closed.capacity_rps;
    const m = (value, text) => ({ value, text });
    fillMetrics(box, {
      loop_open_rps: m(open.throughput_rps, formatRate(open.throughput_rps)),
      loop_closed_rps: m(closed.throughput_rps, formatRate(closed.throughput_rps)),
      loop_same_rps: m(closed.open_same_rps, formatRate(closed.open_same_rps)),
      loop_open_share: m(open.throughput_rps / cap, formatPercent(open.throughput_rps / cap)),
      loop_closed_share: m(closed.throughput_rps / cap, formatPercent(closed.throughput_rps / cap)),
      loop_same_share: m(closed.open_same_rps / cap, formatPercent(closed.open_same_rps / cap)),
      loop_open_ttft_p99: m(open.ttft_p99, formatSeconds(open.ttft_p99)),
      loop_closed_ttft_p99: m(closed.ttft_p99, formatSeconds(closed.ttft_p99)),
      loop_same_ttft_p99: m(closed.open_same_ttft_p99, formatSeconds(closed.open_same_ttft_p99)),
      loop_users: m(closed.users, closed.users == null ? '—' : `${formatMetric('users', closed.users)} users`),
    });
    if (!(main.load > 0) || open.ttft_p99 == null || closed.ttft_p99 == null || closed.open_same_ttft_p99 == null) {
      fill(live, { loop_text: main.load > 0 ? 'Simulating both loops…' : 'No traffic at 0%: drag the load up.' });
      return;
    }
    fill(live, {
      loop_text:
        `Same slider position: the closed loop's TTFT p99 (${formatSeconds(closed.ttft_p99)}) looks ` +
        `${formatTimes(open.ttft_p99 / closed.ttft_p99)} better than the open loop's (${formatSeconds(open.ttft_p99)}). ` +
        `But its ${formatMetric('users', closed.users)} users only achieved ${formatRate(closed.throughput_rps)}, ` +
        `${formatPercent(closed.throughput_rps / cap)} of capacity, where the open loop was pushed to ` +
        `${formatRate(open.throughput_rps)} (${formatPercent(open.throughput_rps / cap)}). ` +
        `Same achieved throughput: an open loop offered ${formatRate(closed.open_same_rps)} has a TTFT p99 of ` +
        `${formatSeconds(closed.open_same_ttft_p99)}, ${formatTimes(closed.open_same_ttft_p99 / closed.ttft_p99)} the closed loop's. ` +
        'Most of the “vanished” tail is load the closed loop never offered.',
    });
  };

  const start = () => {
    twin = createLab(slot, { id: 'loop-twin', panels: '', controls: '', metrics: '' });
    mirror(lab, twin, {
      transform: (s) => ({ ...s, mode: s.mode === 'open' ? 'closed' : 'open' }),
      watch: box,
      delayMs: 200,
    });
    onUpdate(twin, render);
    onUpdate(lab, render);
    fill(live, { loop_text: 'Simulating both loops…' });
  };
  const io = new IntersectionObserver(
    (entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        io.disconnect();
        start();
      }
    },
    { rootMargin: '400px' },
  );
  io.observe(box);
}

export function setup({ lab }) {
  setupKneeText(lab);
  setupLoopCompare(lab);
}
