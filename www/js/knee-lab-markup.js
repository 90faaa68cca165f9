// <knee-lab>'s markup: the controls, the readouts and a figure per panel, inside its shadow
// root. Options and ranges come from the schema; the words around the numbers are here and in
// knee-lab-words.js.

import { BUDGETS, BURSTINESS, DEFAULT_STATE, KNEE_RULES, KV_CACHE_TOKENS, LOAD_PCT, METRIC_LABELS, PRESETS, SCHEMA, SEQS, WORKLOADS, kvLabel } from './knee-lab-settings.js';
import { playerMarkup } from './replica-player-view.js';
import { grouped } from './format.js';
import { KV_HINT } from './knee-lab-words.js';

/** The lab's markup; `id` makes its label ids unique on the page. */
export function template(id) {
  const opt = (v, label, selected) => `<option value="${v}"${v === selected ? ' selected' : ''}>${label}</option>`;
  return `
<div class="lab" part="lab">
  <form class="controls" part="controls" aria-label="Knee lab controls">
    <div class="control load" data-group="load">
      <label for="offered-load" id="${id}-load-label"><span class="load-name">Offered load</span> <span class="hint load-hint">(% of the replica's capacity)</span></label>
      <div class="load-row">
        <input type="range" id="offered-load" min="${LOAD_PCT.min}" max="${LOAD_PCT.max}" step="${LOAD_PCT.step}"
               aria-describedby="offered-load-rate">
        <output id="offered-load-value" class="big" for="offered-load"></output>
      </div>
      <p class="hint" id="offered-load-rate" aria-live="off"></p>
      <p class="error" id="offered-load-error" role="alert"></p>
    </div>
    <div class="control check wide-sm" data-group="mode">
      <input type="checkbox" id="closed-loop" aria-describedby="closed-mapping">
      <label for="closed-loop">Closed loop <span class="hint">(users wait for each answer)</span></label>
    </div>
    <p class="hint mapping" id="closed-mapping" data-group="mode"></p>
    <div class="control wide-sm" data-group="mode" id="burst-box">
      <label for="burstiness"><code>--burstiness</code> <span class="hint">(gamma shape of arrival gaps: 1 is Poisson, lower is burstier)</span></label>
      <div class="load-row"><input type="range" id="burstiness" min="0" max="${BURSTINESS.length - 1}" step="1"><output id="burstiness-value" for="burstiness"></output></div>
      <p class="error" id="burstiness-error" role="alert"></p>
    </div>
    <div class="control check wide-sm" data-group="engine">
      <input type="checkbox" id="chunked-prefill" checked aria-describedby="budget-hint">
      <label for="chunked-prefill"><code>--enable-chunked-prefill</code></label>
    </div>
    <div class="control" data-group="engine">
      <label for="max-num-batched-tokens"><code>--max-num-batched-tokens</code></label>
      <select id="max-num-batched-tokens" aria-describedby="budget-hint">${BUDGETS.map((b) => opt(b, grouped(b), DEFAULT_STATE.maxNumBatchedTokens)).join('')}</select>
      <p class="hint" id="budget-hint"></p>
      <p class="error" id="max-num-batched-tokens-error" role="alert"></p>
    </div>
    <div class="control" data-group="engine">
      <label for="max-num-seqs"><code>--max-num-seqs</code></label>
      <select id="max-num-seqs">${SEQS.map((s) => opt(s, String(s), DEFAULT_STATE.maxNumSeqs)).join('')}</select>
      <p class="error" id="max-num-seqs-error" role="alert"></p>
    </div>
    <div class="control" data-group="engine">
      <label for="kv-cache-tokens">KV cache (tokens)</label>
      <select id="kv-cache-tokens" aria-describedby="kv-hint">${KV_CACHE_TOKENS.map((k) => opt(k, kvLabel(k), DEFAULT_STATE.kvCacheTokens)).join('')}</select>
      <p class="hint" id="kv-hint">${KV_HINT}</p>
      <p class="error" id="kv-cache-tokens-error" role="alert"></p>
    </div>
    <div class="control" data-group="slo">
      <label for="slo-ttft-ms">TTFT SLO (ms)</label>
      <input type="number" id="slo-ttft-ms" step="any" inputmode="decimal" required>
      <p class="error" id="slo-ttft-ms-error" role="alert"></p>
    </div>
    <div class="control" data-group="slo">
      <label for="slo-tpot-ms">TPOT SLO (ms)</label>
      <input type="number" id="slo-tpot-ms" step="any" inputmode="decimal" required>
      <p class="error" id="slo-tpot-ms-error" role="alert"></p>
    </div>
    <div class="control" data-group="knee">
      <label for="knee-rule">The SLO knee is the highest load where</label>
      <select id="knee-rule">${Object.entries(KNEE_RULES).map(([k, label]) => opt(k, label)).join('')}</select>
      <p class="error" id="knee-rule-error" role="alert"></p>
    </div>
    <div class="control" data-group="model">
      <label for="preset">GPU (${SCHEMA.model_label})</label>
      <select id="preset" aria-describedby="preset-hint">${Object.entries(PRESETS).map(([k, p]) => opt(k, p.label)).join('')}</select>
      <p class="hint" id="preset-hint"></p>
    </div>
    <div class="control" data-group="model">
      <label for="workload">Workload</label>
      <select id="workload">${Object.entries(WORKLOADS).map(([k, w]) => opt(k, w.label)).join('')}</select>
    </div>
  </form>
  <p class="status" role="status" id="status" part="status">Loading the simulator…</p>
  <p class="steady" part="steady" data-group="load"><span id="steady-note"></span> <button type="button" id="steady"
     title="Re-run this load long enough for p99 to hold still">Steady tails</button></p>
  <p class="error" role="alert" id="general-error"></p>
  <dl class="readouts" part="readouts"></dl>
  <div class="charts" part="charts">
    <figure data-panel="latency">
      <canvas id="chart-latency" role="img" aria-label="TTFT p50 and p99 against offered load"></canvas>
      <figcaption>Time to first token against offered load: p50, p99 and the mean (green, dashed). The vertical line is the slider;
        the labelled dashed line the SLO. Past 100% an open loop has no steady state: the queue grows for as long as a run lasts, so the shaded
        numbers depend on the run's length. <label class="inline"><input type="checkbox" id="latency-log"> log scale</label></figcaption>
    </figure>
    <figure data-panel="throughput">
      <canvas id="chart-throughput" role="img" aria-label="Throughput and goodput against offered load"></canvas>
      <figcaption>Throughput (dashed) counts every answer; goodput (solid) only those that met both SLOs.</figcaption>
    </figure>
    <figure data-panel="queue">
      <canvas id="chart-queue" role="img" aria-label="num_requests_running and num_requests_waiting over time"></canvas>
      <figcaption><code>num_requests_running</code> and <code>num_requests_waiting</code> over one simulated run at the slider's load.</figcaption>
    </figure>
    <figure data-panel="timeline" class="wide">
      <canvas id="chart-timeline" role="img" aria-label="Timeline of a few requests"></canvas>
      <figcaption>Six consecutive requests at the slider's load: queue wait, prefill, then one token per decode step. <span id="timeline-pick"></span></figcaption>
    </figure>
    <figure data-panel="tail" class="wide">
      <canvas id="chart-tail" role="img" aria-label="TTFT by percentile at two loads and at the slider's"></canvas>
      <figcaption>Every request's TTFT, sorted: the median at the left, the slowest one in a thousand at the right. Dashed, the
        sweep's runs at <span id="tail-loads"></span>; solid, the slider's load. The axes stay put while you drag, so the two loads
        compare by eye.</figcaption>
    </figure>${playerMarkup()}
    <figure data-panel="goodput">
      <canvas id="chart-goodput" role="img" aria-label="Goodput against the TTFT SLO"></canvas>
      <figcaption>Goodput at the slider's load for every TTFT SLO (TPOT SLO held); throughput does not care.</figcaption>
    </figure>
    <figure data-panel="limits">
      <canvas id="chart-limits" role="img" aria-label="The replica's limits and its measured saturation"></canvas>
      <figcaption>The replica's limits, estimated from its engine and workload, beside the engine's measured saturation:
        <span id="limits-sentence">measuring…</span></figcaption>
    </figure>
  </div>
  <p class="sr-only" aria-live="polite" id="live-summary"></p>
</div>`;
}

/** Fills the readouts list with a box per metric in `metrics`, each showing "—" until a run. */
export function buildReadouts(dl, metrics) {
  dl.replaceChildren(
    ...metrics.map((m) => {
      const box = document.createElement('div');
      box.dataset.metric = m;
      const dt = document.createElement('dt');
      // vLLM's metric names wrap after an underscore, never inside a word.
      METRIC_LABELS[m].split('_').forEach((part, i) => {
        if (i > 0) dt.append('_', document.createElement('wbr'));
        dt.append(part);
      });
      const dd = document.createElement('dd');
      dd.textContent = '—';
      box.append(dt, dd);
      return box;
    }),
  );
  dl.hidden = metrics.length === 0;
}
