// Beat 5: goodput. Two SLO sliders drive the main lab's SLOs (so they live in the URL too); both
// published definitions are shown from the main lab's readouts; a follower lab draws goodput
// against the TTFT SLO for the same replica (Step 4 and the main lab already draw it against load).

import {
  configKey,
  createLab,
  fill,
  fillMetrics,
  formatMetric,
  formatPercent,
  formatRate,
  formatSeconds,
  onUpdate,
  pointAt,
  say,
  whenNear,
} from './live.js';
import { mirror } from './mirror.js';
import { SCHEMA } from '../knee-lab.js';

/** Slider stops, in ms (the schema's; each workload's SLOs among them). */
const TTFT_STOPS_MS = SCHEMA.lesson.slo_ttft_stops_ms;
const TPOT_STOPS_MS = SCHEMA.lesson.slo_tpot_stops_ms;

const nearestIndex = (stops, v) =>
  stops.reduce((best, s, i) => (Math.abs(Math.log(s / v)) < Math.abs(Math.log(stops[best] / v)) ? i : best), 0);

function setupSliders(lab, setMain) {
  const sliders = [
    ['slo-ttft-range', 'slo-ttft-out', 'sloTtftMs', TTFT_STOPS_MS, 'slo_ttft_ms'],
    ['slo-tpot-range', 'slo-tpot-out', 'sloTpotMs', TPOT_STOPS_MS, 'slo_tpot_ms'],
  ].map(([id, outId, key, stops, name]) => {
    const input = document.getElementById(id);
    const out = document.getElementById(outId);
    input.max = String(stops.length - 1);
    input.addEventListener('input', () => setMain({ [key]: stops[Number(input.value)] }));
    return { input, out, key, stops, name };
  });
  const sync = (state) => {
    for (const { input, out, key, stops, name } of sliders) {
      const v = state[key];
      if (!Number.isFinite(v)) continue;
      const idx = nearestIndex(stops, v);
      // Don't fight the reader mid-drag: the state already matches the stop under the thumb.
      if (stops[Number(input.value)] !== v) input.value = String(idx);
      const text = formatMetric(name, v);
      out.value = text;
      input.setAttribute('aria-valuetext', text);
    }
  };
  sync(lab.state);
  onUpdate(lab, ({ state }) => sync(state));
}

function setupDefinitions(lab) {
  const section = document.getElementById('goodput');
  const defs = section.querySelector('.defs');
  let sweptFor = null;
  onUpdate(lab, ({ readouts: r, state, sweepDone }) => {
    fill(defs, { load: formatPercent(r.load) });
    fillMetrics(defs, {
      gp_vllm_rps: { value: r.goodput_rps, text: formatRate(r.goodput_rps) },
      gp_throughput_rps: { value: r.throughput_rps, text: formatRate(r.throughput_rps) },
      gp_attainment: { value: r.slo_attainment, text: formatPercent(r.slo_attainment) },
      gp_distserve_rps: {
        value: r.distserve_goodput_rps,
        text: sweepDone && r.distserve_goodput_rps == null ? 'none: even the lowest load misses' : formatRate(r.distserve_goodput_rps),
      },
    });
    const key = configKey(state);
    if (!sweepDone || sweptFor === key) return;
    const sweep = lab.sweep;
    if (!sweep) return;
    sweptFor = key;
    const knee = sweep.knee ? pointAt(sweep, sweep.knee.offered_load) : null;
    const high = pointAt(sweep, SCHEMA.lesson.overload);
    // The engine's readouts say when the knee is the sweep's top: no knee found below it.
    const kneeCase = !sweep.knee ? 'none' : r.knee_beyond_sweep != null ? 'beyond' : 'knee';
    say(document.getElementById('goodput-knee'), kneeCase, {
      knee_load: formatPercent(sweep.knee?.offered_load),
      g_knee: formatRate(knee?.goodput_rps),
    });
    // "Still ... but only" where goodput has fallen to under half of throughput, as the sweep shows.
    say(document.getElementById('goodput-over'), high && high.goodput_rps < 0.5 * high.throughput_rps ? 'collapsed' : 'holds', {
      overload: formatPercent(SCHEMA.lesson.overload),
      t_over: formatRate(high?.throughput_rps),
      g_over: formatRate(high?.goodput_rps),
    });
  });
}

export function setup({ lab, setMain }) {
  const slos = {};
  for (const w of SCHEMA.workloads) {
    slos[`${w.name}_ttft`] = formatSeconds(w.slo_ttft_ms / 1000);
    slos[`${w.name}_tpot`] = formatSeconds(w.slo_tpot_ms / 1000);
  }
  fill(document.getElementById('slo-scope'), slos);
  setupSliders(lab, setMain);
  setupDefinitions(lab);
  const slot = document.getElementById('goodput-slot');
  whenNear(slot, () => {
    const follower = createLab(slot, {
      id: 'goodput-lab',
      panels: 'goodput',
      controls: 'load',
      metrics: 'ttft_p99 tpot_p99 slo_attainment',
    });
    mirror(lab, follower, { setMain });
  });
}
