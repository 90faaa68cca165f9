// Beat 11: worked examples, computed live. (a) SLOs for a RAG app, judged at a load the reader
// picks; (b) a fleet for that app on a chosen preset, sized by Little's Law at the sweep's knee.

import { fieldMessage, readNumber } from './calculator.js';
import {
  fill,
  fillMetrics,
  formatMetric,
  formatNumber,
  formatPercent,
  formatRate,
  formatSeconds,
  limitSentence,
  pointAt,
  say,
  sweepPoint,
  whenNear,
} from './live.js';
import { SCHEMA } from '../knee-lab.js';
import { BASE_ENGINE, sweepCached, workloadConfig } from './sweeps.js';
import { callLater } from '../later.js';
import { grouped } from '../format.js';

const CAP = BASE_ENGINE.max_num_seqs;

/** The RAG app's config on `preset`. */
function ragConfig(lab, preset) {
  return workloadConfig(lab, 'rag', preset);
}

function setupRag(wasm, lab) {
  const heading = document.getElementById('worked-rag');
  const box = heading.parentElement;
  const picker = document.getElementById('rag-load');
  const readouts = document.getElementById('rag-readouts');
  let sweep = null;
  const rag = SCHEMA.workloads.find((w) => w.name === 'rag');
  fill(box, {
    rag_prompt_tokens: grouped(rag.prompt_mean_tokens),
    rag_output_tokens: grouped(rag.output_mean_tokens),
    rag_slo_ttft: formatMetric('slo_ttft_ms', rag.slo_ttft_ms),
    rag_slo_tpot: formatMetric('slo_tpot_ms', rag.slo_tpot_ms),
  });
  say(document.getElementById('rag-served'), 'waiting', {});

  const render = () => {
    if (!sweep) return;
    const load = Number(picker.querySelector('input:checked')?.value ?? SCHEMA.defaults.load);
    const p = pointAt(sweep, load);
    const unloaded = pointAt(sweep, SCHEMA.loads[0]);
    fill(box, { ttft_unloaded: formatSeconds(unloaded?.ttft_s.p50), tpot_unloaded: formatSeconds(unloaded?.tpot_s.p50) });
    if (!p) return;
    fillMetrics(readouts, {
      rag_throughput_rps: { value: p.throughput_rps, text: formatRate(p.throughput_rps) },
      rag_goodput_rps: { value: p.goodput_rps, text: formatRate(p.goodput_rps) },
      rag_attainment: { value: p.slo_attainment, text: formatPercent(p.slo_attainment) },
      rag_ttft_p99: { value: p.ttft_s.p99, text: formatSeconds(p.ttft_s.p99) },
      rag_tpot_p99: { value: p.tpot_s.p99, text: formatSeconds(p.tpot_s.p99) },
      rag_distserve_rps: { value: sweep.distserve_goodput_rps, text: formatRate(sweep.distserve_goodput_rps) },
    });
    const knee = sweep.knee?.offered_load;
    const values = {
      load: formatPercent(load),
      throughput: formatRate(p.throughput_rps),
      goodput: formatRate(p.goodput_rps),
      attainment: formatPercent(p.slo_attainment),
      target: formatPercent(sweep.attainment_target),
      knee: formatPercent(knee),
      ttft_p99: formatSeconds(p.ttft_s.p99),
      tpot_p99: formatSeconds(p.tpot_s.p99),
    };
    const within = sweepPoint(sweep, load).p99_within_slo;
    const cases = {
      'rag-served': 'run',
      'rag-bar': p.slo_attainment >= sweep.attainment_target ? 'above' : knee == null ? 'below-all' : 'below',
      'rag-breaks': !within.tpot ? 'tpot' : !within.ttft ? 'ttft' : 'neither',
    };
    for (const [id, when] of Object.entries(cases)) say(document.getElementById(id), when, values);
  };
  picker.addEventListener('change', render);
  whenNear(box, async () => {
    sweep = await sweepCached(wasm, ragConfig(lab, SCHEMA.defaults.preset));
    render();
  });
}

function setupFleet(wasm, lab) {
  const box = document.getElementById('fleet-box');
  const preset = document.getElementById('fleet-preset');
  for (const p of SCHEMA.presets) preset.add(new Option(p.label, p.name));
  const peakInput = document.getElementById('fleet-peak');
  const peakError = document.getElementById('fleet-peak-error');
  let near = false;
  // The peak the reader starts from is the field's own value, written once in the page.
  let peak = peakInput.valueAsNumber;
  const showPeakError = (message) => {
    peakError.textContent = message ?? '';
    if (message) peakInput.setAttribute('aria-invalid', 'true');
    else peakInput.removeAttribute('aria-invalid');
  };
  let generation = 0;

  const render = async () => {
    if (!near) return;
    const mine = ++generation;
    const sweep = await sweepCached(wasm, ragConfig(lab, preset.value));
    if (mine !== generation) return; // a newer choice took over
    const knee = sweep.knee;
    const sat = sweep.saturation;
    if (!knee || !sat) {
      fill(box, { fleet_ceiling_note: 'this replica misses the SLOs even at the lowest load swept.' });
      return;
    }
    const atKnee = pointAt(sweep, knee.offered_load);
    const atSat = pointAt(sweep, sat.offered_load);
    const ll = atKnee.littles_law_batch;
    // The sweep's own sizing basis: the batch time at saturation, the knee's and saturation's QPS.
    let s;
    try {
      s = await callLater('size', { max_num_seqs: CAP, peak_qps: peak, ...sweep.sizing });
    } catch (err) {
      // The engine says what a peak may be; the last good result stays.
      if (err.path !== 'peak_qps') throw err;
      showPeakError(fieldMessage(err));
      return;
    }
    if (mine !== generation) return;
    showPeakError(null);
    fillMetrics(box, {
      fleet_knee_load: { value: knee.offered_load, text: formatPercent(knee.offered_load) },
      fleet_knee_rps: { value: knee.throughput_rps, text: formatRate(knee.throughput_rps) },
      fleet_replicas_knee: { value: s.replicas_at_knee, text: grouped(s.replicas_at_knee) },
      fleet_replicas_saturation: { value: s.replicas_at_saturation, text: grouped(s.replicas_at_saturation) },
    });
    fill(box, {
      fleet_l: formatNumber(ll.l, 1),
      fleet_lambda: formatRate(ll.lambda_rps),
      fleet_w: formatSeconds(ll.w_s),
      fleet_l_all: formatNumber(atKnee.littles_law.l, 1),
      fleet_e2e: formatSeconds(atKnee.littles_law.w_s),
      fleet_w_bare: formatSeconds(atSat.batch_s.mean),
      fleet_sat_running: formatNumber(atSat.num_requests_running_mean, 1),
      fleet_cap: String(CAP),
      fleet_fill_note:
        atSat.num_requests_running_mean >= CAP - 0.5
          ? ': the batch is full there, so that is what the cap allows'
          : `, which overstates what the cap allows: filled to ${CAP}, every step would be longer`,
      fleet_ceiling: formatRate(s.per_replica_max_qps),
      fleet_ceiling_note: limitSentence(sweep),
      fleet_knee_def:
        `at least ${formatPercent(sweep.attainment_target)} of requests within ${formatMetric('slo_ttft_ms', atKnee.slo_ttft_ms)} TTFT ` +
        `and ${formatMetric('slo_tpot_ms', atKnee.slo_tpot_ms)} TPOT`,
      fleet_peak: formatNumber(peak),
      fleet_knee_bare: formatNumber(knee.throughput_rps, 3),
      fleet_sat: formatRate(sat.throughput_rps),
    });
  };

  preset.addEventListener('change', render);
  peakInput.addEventListener('input', () => {
    const r = readNumber(peakInput);
    showPeakError(r.error);
    if (r.error) return;
    peak = r.value;
    render();
  });
  whenNear(box, () => {
    near = true;
    render();
  });
}

export function setup({ wasm, lab }) {
  setupRag(wasm, lab);
  setupFleet(wasm, lab);
}
