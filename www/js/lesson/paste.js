// Beat 7, on the reader's own server: two pasted /metrics scrapes read by the engine's probe (the
// CLI's `kneelab probe`, through the wasm `Paste`) and placed on a simulated sweep of the GPU and
// workload the reader picks. A bad paste is named at its field and the last good reading stays;
// the sweep runs a slice per task. "Paste two scrapes of the lab's replica" fills both boxes with
// the lab's simulated replica at its current load, so the dot lands where the slider is.

import { PRESETS, WORKLOADS } from '../knee-lab.js';
import { fillMetrics, formatNumber, formatPercent, formatRate, formatSeconds, say, withoutPath } from './live.js';
import { stepped, workloadConfig } from './sweeps.js';
import { pkgUrl } from '../wasm.js';
import { grouped } from '../format.js';

/** Simulated seconds before the example's first scrape, and between its two. */
const EXAMPLE_WARMUP_S = 300;
const EXAMPLE_GAP_S = 600;

/** The form's fields by the `path` the wasm names in its errors. */
const FIELD_IDS = { first: 'paste-first', second: 'paste-second', seconds: 'paste-seconds', peak_qps: 'paste-peak' };

let module = null;

/**
 * The paste module (kneelab-web with its probe), fetched on first use: the text parser and the
 * reading stay out of the page's first load.
 */
function loadPaste() {
  module ??= import(pkgUrl('kneelab_paste.js').href).then(async (m) => {
    await m.default();
    return m;
  });
  return module;
}

export function setup({ lab }) {
  const $ = (id) => document.getElementById(id);
  const form = $('paste-form');
  const status = $('paste-status');
  const result = $('paste-result');
  const canvas = $('paste-chart');
  const preset = $('paste-preset');
  const workload = $('paste-workload');
  for (const [k, p] of Object.entries(PRESETS)) preset.add(new Option(p.label, k));
  for (const [k, w] of Object.entries(WORKLOADS)) workload.add(new Option(w.label, k));
  const sync = () => {
    preset.value = lab.state.preset;
    workload.value = lab.state.workload;
  };
  sync();

  let paste = null;
  const dark = matchMedia('(prefers-color-scheme: dark)');
  let reading = null; // the last good reading
  let busy = false;

  // An error names its field as the form does ("First scrape: is empty"), not by the wasm's path.
  const named = (err) => {
    const label = document.querySelector(`label[for="${FIELD_IDS[err.path]}"]`)?.textContent;
    const rest = withoutPath(err);
    return label && rest !== err.message ? `${label}: ${rest}` : err.message;
  };
  const mark = (path, message) => {
    for (const [p, id] of Object.entries(FIELD_IDS)) {
      const input = $(id);
      const text = p === path ? message : '';
      $(`${id}-error`).textContent = text;
      if (text) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    }
  };

  const draw = () => {
    if (!reading || !paste) return;
    try {
      if (paste.draw(canvas, dark.matches)) canvas.dataset.drawn = 'true';
    } catch (err) {
      status.textContent = `The chart could not be drawn: ${err.message}`;
    }
  };
  new ResizeObserver(() => requestAnimationFrame(draw)).observe(canvas);
  dark.addEventListener('change', draw);

  const show = (r) => {
    const rep = r.report;
    const pct = (q) => (q ? formatSeconds(q.value) : '—');
    // Two scrapes are two instants: their mean, and no trend (a window of scrapes, as `kneelab
    // probe` takes, shows one).
    const gauge = (g, f) => (g ? f(g.mean) : '—');
    fillMetrics(result, {
      paste_rate: { value: rep.request_rate_rps, text: formatRate(rep.request_rate_rps) },
      paste_ttft_p99: { value: rep.ttft?.p99?.value ?? NaN, text: pct(rep.ttft?.p99) },
      paste_tpot_p99: { value: rep.tpot?.p99?.value ?? NaN, text: pct(rep.tpot?.p99) },
      paste_running: { value: rep.running?.mean ?? NaN, text: gauge(rep.running, (x) => formatNumber(x, 1)) },
      paste_waiting: { value: rep.waiting?.mean ?? NaN, text: gauge(rep.waiting, (x) => formatNumber(x, 1)) },
      paste_kv: { value: rep.kv_cache_usage?.mean ?? NaN, text: gauge(rep.kv_cache_usage, formatPercent) },
    });
    const k = r.knee;
    const where = $('paste-where');
    if (k) {
      const p = k.placement;
      const values = {
        rate: formatRate(k.rate_per_engine_rps),
        load: p.offered_load == null ? '—' : formatPercent(p.offered_load),
        of_knee: p.of_knee == null ? '—' : formatPercent(p.of_knee),
        knee_rps: k.knee_rps == null ? '—' : formatRate(k.knee_rps),
        saturation_rps: formatRate(k.saturation_rps),
        limit: k.binding.charAt(0).toUpperCase() + k.binding.slice(1),
      };
      const when = p.zone === 'saturated' ? 'saturated' : k.knee_rps == null ? 'no-knee' : p.zone.replace('_', '-');
      say(where, when, values);
      where.dataset.zone = p.zone;
      where.dataset.load = p.offered_load == null ? '' : String(p.offered_load);
      const s = k.sizing;
      if (s?.replicas_at_knee != null) {
        say($('paste-fleet'), 'fleet', {
          peak: formatRate(s.peak_qps),
          replicas: grouped(s.replicas_at_knee),
          replicas_sat: grouped(s.replicas_at_saturation ?? NaN),
        });
      } else say($('paste-fleet'), 'none', {});
    } else {
      say(where, 'none', {});
      say($('paste-fleet'), 'none', {});
    }
    const law = rep.littles_law_batch;
    say(
      $('paste-law'),
      law ? 'law' : 'none',
      law
        ? {
            running: formatNumber(law.l, 1),
            rate_total: formatRate(law.lambda_rps),
            batch_s: formatSeconds(law.w_s),
            predicted: formatNumber(law.predicted, 1),
            error: `${law.rel_error >= 0 ? '+' : '−'}${formatPercent(Math.abs(law.rel_error))}`,
          }
        : {},
    );
    const list = $('paste-warnings');
    list.replaceChildren(...rep.warnings.map((w) => Object.assign(document.createElement('li'), { textContent: w })));
  };

  const place = async () => {
    if (busy) return;
    try {
      paste ??= new (await loadPaste()).Paste();
    } catch (err) {
      status.textContent = `The reader could not be loaded: ${err.message ?? err}`;
      return;
    }
    try {
      paste.read($('paste-first').value, $('paste-second').value, Number($('paste-seconds').value), '');
      const peakText = $('paste-peak').value.trim();
      paste.setConfig(workloadConfig(lab, workload.value, preset.value), peakText === '' ? null : Number(peakText));
    } catch (err) {
      mark(err.path, named(err));
      status.textContent = reading ? 'Not read: the reading below is the last good one.' : '';
      if (reading) result.dataset.stale = '';
      return;
    }
    mark(null, '');
    delete result.dataset.stale;
    busy = true;
    form.setAttribute('aria-busy', 'true');
    try {
      status.textContent = 'Sweeping the simulated replica…';
      await stepped(paste);
      reading = paste.result();
      result.hidden = false;
      show(reading);
      draw();
      status.textContent = '';
      form.dataset.placed = 'true';
    } catch (err) {
      status.textContent = `The replica could not be simulated: ${err.message}`;
    } finally {
      busy = false;
      form.removeAttribute('aria-busy');
    }
  };

  $('paste-place').addEventListener('click', place);
  $('paste-example').addEventListener('click', async () => {
    sync();
    const config = workloadConfig(lab, lab.state.workload, lab.state.preset);
    config.load = { mode: 'open', offered_load: lab.state.load };
    let first, second;
    try {
      [first, second] = (await loadPaste()).exampleScrapes(config, EXAMPLE_WARMUP_S, EXAMPLE_GAP_S);
    } catch (err) {
      status.textContent = `The example could not be made: ${err.message ?? err}`;
      return;
    }
    $('paste-first').value = first;
    $('paste-second').value = second;
    $('paste-seconds').value = String(EXAMPLE_GAP_S);
    status.textContent = `Two scrapes of the lab's replica at ${formatPercent(lab.state.load)} of its capacity, ${formatSeconds(EXAMPLE_GAP_S)} apart: place them.`;
  });
}
