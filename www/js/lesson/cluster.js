// Beat 7: on your cluster. Page-level knobs (load, the knob table's two --max-num-seqs, chunked
// prefill, token budget, KV cache size) that drive the main lab; its live signals; and a table of
// full sweeps with one knob changed at a time (wasm `sweep`, one per task so the page stays
// responsive).

import { BUDGETS, KV_CACHE_TOKENS, LOAD_PCT, MAX_MODEL_LEN, SCHEMA, kvLabel } from '../knee-lab.js';
import {
  fill,
  formatMetric,
  formatPercent,
  formatRate,
  formatSeconds,
  formatTimes,
  nearestPoint,
  onUpdate,
  say,
  watchNear,
} from './live.js';
import { sweepCached } from './sweeps.js';
import { grouped } from '../format.js';

function setupControls(lab, setMain) {
  const load = document.getElementById('cluster-load');
  const loadOut = document.getElementById('cluster-load-out');
  const seqs = [...document.querySelectorAll('input[name="cluster-seqs"]')];
  const seqsOther = document.getElementById('cluster-seqs-other');
  const chunked = document.getElementById('cluster-chunked');
  const budget = document.getElementById('cluster-budget');
  const kv = document.getElementById('cluster-kv');
  Object.assign(load, LOAD_PCT);
  // The two caps on offer are the knobs table's (the schema's columns), named once.
  for (const radio of seqs) {
    radio.value = String(column(radio.dataset.column).engine.max_num_seqs);
    radio.nextElementSibling.textContent = radio.value;
  }
  // (The baseline's cap is the page's `base_seqs`.)
  fill(document.getElementById('knobs').nextElementSibling, { cluster_seqs_low: column('seqs').engine.max_num_seqs });
  for (const b of BUDGETS) budget.add(new Option(grouped(b), String(b)));
  for (const k of KV_CACHE_TOKENS) kv.add(new Option(kvLabel(k), String(k)));

  load.addEventListener('input', () => setMain({ load: Number(load.value) / 100 }));
  for (const radio of seqs) radio.addEventListener('change', () => radio.checked && setMain({ maxNumSeqs: Number(radio.value) }));
  chunked.addEventListener('change', () => setMain({ chunkedPrefill: chunked.checked }));
  budget.addEventListener('change', () => setMain({ maxNumBatchedTokens: Number(budget.value) }));
  kv.addEventListener('change', () => setMain({ kvCacheTokens: Number(kv.value) }));

  const sync = (s) => {
    const pct = Math.round(s.load * 100);
    if (Number(load.value) !== pct) load.value = String(pct);
    loadOut.value = `${pct}%`;
    load.setAttribute('aria-valuetext', `${pct}% of capacity`);
    let matched = false;
    for (const radio of seqs) {
      radio.checked = Number(radio.value) === s.maxNumSeqs;
      matched ||= radio.checked;
    }
    // The lab allows other caps; say so rather than show a wrong choice.
    seqsOther.hidden = matched;
    seqsOther.textContent = matched ? '' : `now ${s.maxNumSeqs} (set in the lab)`;
    chunked.checked = s.chunkedPrefill;
    budget.disabled = !s.chunkedPrefill;
    const b = String(s.chunkedPrefill ? s.maxNumBatchedTokens : MAX_MODEL_LEN);
    if (![...budget.options].some((o) => o.value === b)) budget.add(new Option(grouped(Number(b)), b));
    budget.value = b;
    kv.value = String(s.kvCacheTokens);
  };
  sync(lab.state);
  onUpdate(lab, ({ state }) => sync(state));

  const readouts = document.getElementById('cluster-readouts');
  onUpdate(lab, ({ readouts: r }) => {
    fill(readouts, {
      ttft_p99: formatSeconds(r.ttft_p99),
      tpot_p99: formatSeconds(r.tpot_p99),
      itl_p99: formatSeconds(r.itl_p99),
      throughput_rps: formatRate(r.throughput_rps),
      goodput_rps: formatRate(r.goodput_rps),
      num_requests_running: formatMetric('num_requests_running', r.num_requests_running),
      num_requests_waiting: formatMetric('num_requests_waiting', r.num_requests_waiting),
      kv_cache_usage: formatPercent(r.kv_cache_usage),
      num_preemptions: formatMetric('num_preemptions', r.num_preemptions),
    });
  });
}

// --- the knobs side by side -------------------------------------------------------------------

/** Columns: the course's baseline and one knob changed from it (the schema's). */
const COLUMNS = SCHEMA.lesson.knob_columns;
const column = (id) => COLUMNS.find((c) => c.id === id);
const ROWS = [
  ['Capacity', (s) => formatRate(s.capacity_rps)],
  ['Knee', (s) => (s.knee ? `${formatPercent(s.knee.offered_load)} · ${formatRate(s.knee.throughput_rps)}` : 'none')],
  ['TTFT p99', (_s, p) => formatSeconds(p.ttft_s.p99)],
  ['TPOT p99', (_s, p) => formatSeconds(p.tpot_s.p99)],
  ['ITL p99', (_s, p) => formatSeconds(p.itl_s.p99)],
  ['Running (mean)', (_s, p) => formatMetric('num_requests_running', p.num_requests_running_mean)],
  ['KV cache used (mean)', (_s, p) => formatPercent(p.kv_cache_usage_mean)],
  ['Preemptions', (_s, p) => formatMetric('num_preemptions', p.num_preemptions)],
];

/** The sweep of each column, for the lab's model, workload and SLOs. */
async function sweepColumns(wasm, base) {
  const out = {};
  for (const col of COLUMNS) {
    const config = structuredClone(base);
    config.engine = { ...col.engine };
    config.load = { mode: 'open' };
    out[col.id] = await sweepCached(wasm, config);
  }
  return out;
}

// How far a knob must move a number before the sentence calls it a change (else it says how
// little changed). `crates/sim/tests/lesson.rs` checks which case the default lab is in.
const CHANGE = 1.2;

/** The sentences under the table: each knob's case, chosen from the sweeps at `load`. */
function sayKnobs(live, sweeps, load) {
  const at = (id) => nearestPoint(sweeps[id], load).summary;
  const cap = (id) => sweeps[id].capacity_rps;
  const [base, low, off, small, kv] = ['base', 'seqs', 'nochunk', 'budget', 'kv'].map(at);
  const values = {
    seqs: column('base').engine.max_num_seqs,
    seqs_low: column('seqs').engine.max_num_seqs,
    budget: grouped(column('budget').engine.max_num_batched_tokens),
    kv_tokens: grouped(column('kv').engine.kv_cache_tokens),
    capacity: formatRate(cap('base')),
    capacity_low: formatRate(cap('seqs')),
    capacity_kv: formatRate(cap('kv')),
    capacity_times: formatTimes(cap('base') / cap('seqs')),
    tpot_p99: formatSeconds(base.tpot_s.p99),
    tpot_p99_low: formatSeconds(low.tpot_s.p99),
    tpot_p99_budget: formatSeconds(small.tpot_s.p99),
    ttft_p99: formatSeconds(base.ttft_s.p99),
    ttft_p99_off: formatSeconds(off.ttft_s.p99),
    ttft_p99_budget: formatSeconds(small.ttft_s.p99),
    itl_p99: formatSeconds(base.itl_s.p99),
    itl_p99_off: formatSeconds(off.itl_s.p99),
    preemptions: formatMetric('num_preemptions', kv.num_preemptions),
  };
  const cases = {
    'knobs-seqs': cap('base') > CHANGE * cap('seqs') && base.tpot_s.p99 > low.tpot_s.p99 ? 'trade' : 'other',
    // A TTFT p99 that reads the same either way is said to stay, not to move "from 17 s to 17 s".
    'knobs-chunk': !(off.itl_s.p99 > CHANGE * base.itl_s.p99) ? 'other' : values.ttft_p99 === values.ttft_p99_off ? 'stall-same' : 'stall',
    'knobs-budget': small.tpot_s.p99 * CHANGE < base.tpot_s.p99 && small.ttft_s.p99 > base.ttft_s.p99 ? 'trade' : 'other',
    'knobs-kv':
      kv.num_preemptions > 0 && cap('kv') < cap('base') ? 'preempts' : kv.num_preemptions === 0 && cap('kv') >= cap('base') ? 'fits' : 'other',
  };
  for (const [id, when] of Object.entries(cases)) say(live.querySelector(`#${id}`), when, values);
}

function setupKnobTable(wasm, lab) {
  const box = document.getElementById('knobs-compare');
  const body = document.getElementById('knobs-body');
  const live = document.getElementById('knobs-live');
  const caption = box.querySelector('caption');
  const head = document.getElementById('knobs-head');
  for (const col of COLUMNS) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = col.label;
    head.append(th);
  }
  let near = false;
  let sweeps = null;
  let sweptFor = null;
  let running = false;

  const renderTable = () => {
    if (!sweeps) return;
    const load = Math.max(lab.state.load, SCHEMA.loads[0]);
    const point = nearestPoint(sweeps.base, load);
    fill(caption, {
      knobs_caption: `${lab.state.workload === 'rag' ? 'RAG' : 'Chat'} traffic on the lab's model; lower rows at ${formatPercent(point.offered_load)} offered load.`,
    });
    body.replaceChildren(
      ...ROWS.map(([label, get]) => {
        const tr = document.createElement('tr');
        const th = document.createElement('th');
        th.scope = 'row';
        th.textContent = label;
        tr.append(th);
        for (const col of COLUMNS) {
          const td = document.createElement('td');
          td.textContent = get(sweeps[col.id], nearestPoint(sweeps[col.id], load).summary);
          tr.append(td);
        }
        return tr;
      }),
    );
    sayKnobs(live, sweeps, load);
  };

  const refresh = async () => {
    if (!near || running) return;
    const base = lab.config();
    const key = JSON.stringify([base.cost, base.workload, base.slo, base.run, base.seed]);
    if (key === sweptFor) {
      renderTable();
      return;
    }
    running = true;
    fill(caption, { knobs_caption: 'Sweeping five replicas…' });
    try {
      sweeps = await sweepColumns(wasm, base);
    } catch (err) {
      // A config the lab itself reports as invalid (its own error message says which field).
      fill(caption, { knobs_caption: `Cannot sweep this configuration: ${err.message ?? err}` });
      return;
    } finally {
      running = false;
    }
    sweptFor = key;
    renderTable();
    // The lab may have changed while we swept.
    refresh();
  };

  watchNear(box, (isNear) => {
    near = isNear;
    if (near) refresh();
  }, '600px');
  onUpdate(lab, () => {
    if (near) refresh();
  });
}

/** `vllm serve`'s V1 defaults per GPU class, from the engine's presets. */
function setupDefaults() {
  const parts = SCHEMA.presets.map(
    (p) =>
      `on an ${p.gpu}, --max-num-batched-tokens ${grouped(p.v1_default_max_num_batched_tokens)} and ` +
      `--max-num-seqs ${grouped(p.v1_default_max_num_seqs)}`,
  );
  document.getElementById('v1-defaults').textContent = `vllm serve picks ${parts.join('; ')}.`;
}

export function setup({ wasm, lab, setMain }) {
  setupControls(lab, setMain);
  setupKnobTable(wasm, lab);
  setupDefaults();
}
