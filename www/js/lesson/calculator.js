// Beat 6: the Little's Law calculator, on the batch: cap / time in the batch = the sequence-cap
// limit; ceil(peak / that) = replicas, by the engine's own `size()` (on the page's third module;
// it forgives float noise: 64 / 8 is 8). Bad input shows an alert beside its field and keeps the
// last good result; nothing shows NaN. "Use the engine's numbers" fills the cap and the time in
// the batch with the batch full (the engine's sequence-cap limit, so the result is that limit,
// the one the limits sentence quotes, even where the batch never fills), names the binding limit,
// and divides the peak by the knee's and saturation's throughputs.

import { describeLimits } from '../knee-lab.js';
import { fill, fillMetrics, formatMetric, formatNumber, formatRate, formatSeconds, onUpdate, say, whenNear, withoutPath } from './live.js';
import { SIZING, sizingFromEngine } from './steps.js';
import { callLater } from '../later.js';
import { grouped } from '../format.js';

/** The calculator's fields by the name the engine's `size()` gives them in its errors. */
const FIELDS = { max_num_seqs: 'll-cap', batch_s: 'll-batch-s', peak_qps: 'll-peak-qps' };

/**
 * The field's number, or an error when it is not one. What a number may be (a whole cap in the
 * engine's range, a time above 0, ...) is the engine's to say: `size()` names the field at fault.
 */
export function readNumber(input) {
  const text = input.value.trim();
  if (text === '' && input.validity.badInput) return { error: 'That is not a number.' };
  if (text === '') return { error: 'Enter a number.' };
  const v = Number(text);
  return Number.isFinite(v) ? { value: v } : { error: 'That is not a number.' };
}

/** An engine error as a sentence beside its field: "must be ..." without the path in front. */
export function fieldMessage(err) {
  const rest = withoutPath(err);
  return `${rest.charAt(0).toUpperCase()}${rest.slice(1)}.`;
}

function showError(input, message) {
  const el = document.getElementById(`${input.id}-error`);
  el.textContent = message ?? '';
  if (message) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}

export function setup({ wasm, lab }) {
  const form = document.getElementById('ll-form');
  const formula = document.getElementById('ll-formula');
  const inputs = Object.fromEntries(Object.values(FIELDS).map((id) => [id, document.getElementById(id)]));
  let good = null; // the last valid { cap, batch, peak }

  const compute = async () => {
    const values = {};
    let ok = true;
    for (const [name, id] of Object.entries(FIELDS)) {
      const r = readNumber(inputs[id]);
      showError(inputs[id], r.error);
      if (r.error) ok = false;
      else values[name] = r.value;
    }
    if (!ok) return; // keep the last good result on screen
    let s;
    try {
      s = await callLater('size', values);
    } catch (err) {
      const id = FIELDS[err.path];
      if (!id) throw err;
      showError(inputs[id], fieldMessage(err));
      return;
    }
    good = { cap: values.max_num_seqs, batch: values.batch_s, peak: values.peak_qps };
    fillMetrics(form, {
      ll_max_qps: { value: s.per_replica_max_qps, text: formatRate(s.per_replica_max_qps) },
      ll_replicas: { value: s.replicas, text: grouped(s.replicas) },
    });
    formula.textContent =
      `${formatNumber(good.cap, 0)} ÷ ${formatSeconds(good.batch)} in the batch = ${formatRate(s.per_replica_max_qps)} per replica; ` +
      `⌈${formatNumber(good.peak)} ÷ ${formatNumber(s.per_replica_max_qps, 3)}⌉ = ${grouped(s.replicas)} replicas.`;
    renderEngine();
  };
  form.addEventListener('input', compute);

  /** Puts an engine-measured time in the batch in its field, to the hundredth a reader would type. */
  const showBatch = (seconds) => (inputs['ll-batch-s'].value = String(Math.round(seconds * 100) / 100));

  // It opens on Step 5's replica: its cap and peak, and the time in the batch the engine measures
  // for it (the same cached sweep), until the reader types or follows the lab.
  let typed = false;
  form.addEventListener('input', () => (typed = true));
  inputs['ll-cap'].value = String(SIZING.cap);
  inputs['ll-peak-qps'].value = String(SIZING.peakQps);
  whenNear(form, async () => {
    const sizing = await sizingFromEngine(wasm, lab);
    if (!sizing || typed || following) return;
    showBatch(sizing.batchS);
    compute();
  });

  // --- the engine's knee ---------------------------------------------------------------------
  const button = document.getElementById('ll-use-knee');
  const status = document.getElementById('ll-engine-status');
  const results = document.getElementById('ll-engine');
  let following = false;
  let filledFor = null;

  async function renderEngine() {
    if (!following) return;
    const r = lab.readouts;
    if (r.knee_rps == null || r.saturation_rps == null) {
      status.textContent =
        r.sweep_points == null || lab.hasAttribute('data-busy')
          ? 'Measuring the replica’s knee…'
          : 'This replica misses its SLOs even at the lowest load, so it has no knee to size with: loosen the SLOs in Goodput.';
      return;
    }
    const st = lab.state;
    // Fill the inputs from the engine once per sweep: the cap, and its time in the batch with the
    // batch full (at saturation the batch is full only where the cap binds).
    const key = `${st.maxNumSeqs} ${r.limit_seq_cap_batch_s}`;
    if (key !== filledFor && r.limit_seq_cap_batch_s != null) {
      filledFor = key;
      inputs['ll-cap'].value = String(st.maxNumSeqs);
      showBatch(r.limit_seq_cap_batch_s);
      compute();
      return;
    }
    if (!good) return; // a field the reader left invalid: its alert says so
    const s = await callLater('size', {
      max_num_seqs: good.cap,
      batch_s: good.batch,
      peak_qps: good.peak,
      knee_qps: r.knee_rps,
      saturation_qps: r.saturation_rps,
    });
    results.hidden = false;
    status.textContent =
      `Following the knee lab: ${st.workload === 'rag' ? 'RAG' : 'chat'} traffic, --max-num-seqs ${st.maxNumSeqs}, ` +
      `TTFT SLO ${formatMetric('slo_ttft_ms', st.sloTtftMs)}, TPOT SLO ${formatMetric('slo_tpot_ms', st.sloTpotMs)}, ${st.mode} loop.`;
    fillMetrics(results, {
      ll_replicas_knee: { value: s.replicas_at_knee, text: grouped(s.replicas_at_knee) },
      ll_replicas_saturation: { value: s.replicas_at_saturation, text: grouped(s.replicas_at_saturation) },
    });
    const extra = s.replicas_at_knee - s.replicas_at_saturation;
    say(document.getElementById('ll-provision'), extra > 0 ? 'knee' : 'same', {
      extra: `${grouped(extra)} replica${extra === 1 ? '' : 's'}`,
    });
    fill(results, {
      knee_rps: formatRate(r.knee_rps),
      saturation_rps: formatRate(r.saturation_rps),
      why:
        `At its knee (${formatMetric('knee_load', r.knee_load)} of capacity) this replica completes ${formatRate(r.knee_rps)} ` +
        `with about ${formatMetric('knee_running', r.knee_running)} requests running, each ${formatSeconds(r.knee_batch_s)} in the batch: ` +
        `Little's Law on the batch, with the concurrency it actually holds. At saturation the batch holds ` +
        `${formatMetric('saturation_running', r.saturation_running)} of ${st.maxNumSeqs}, and ` +
        `${describeLimits(r) ?? ''} ` +
        `Saturation squeezes out ${formatRate(r.saturation_rps - r.knee_rps)} more per replica than the knee, but only with a ` +
        'queue that breaks the SLOs.',
    });
  }
  button.addEventListener('click', () => {
    following = true;
    button.setAttribute('aria-pressed', 'true');
    button.textContent = 'Using the engine’s numbers (follows the lab)';
    renderEngine();
  });
  onUpdate(lab, () => renderEngine());
}
