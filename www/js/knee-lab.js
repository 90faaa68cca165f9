// <knee-lab>: the whole knee lab in one custom element (open shadow root), working alone on any
// page that loads this module. Every number it shows comes from the simulator (kneelab-web).
//
//   <knee-lab load="0.85" mode="open" workload="rag"></knee-lab>
//
// Attributes set the starting state: load (fraction of capacity, 0-1.2), mode (open | closed),
// workload (chat | rag), preset (llama-3-8b-a100 | llama-3-8b-h100), max-num-seqs,
// chunked-prefill (true | false), max-num-batched-tokens, slo-ttft-ms, slo-tpot-ms,
// think-time-s, burstiness, kv-cache-tokens, requests, seed, knee-rule (attainment | p99), latency-scale
// (linear | log), theme (auto | light | dark: auto follows the OS; the --kl-* custom properties
// restyle chrome and charts, see knee-lab-style.js); panels (latency throughput queue timeline
// goodput limits tail replica: the replica player, see replica-player.js), controls (load mode engine slo knee model) and metrics (readout names, see METRIC_LABELS)
// pick what is shown. A value that cannot be read (empty, not a decimal number, out of range, an
// unknown name) is an error on the page naming the attribute, and the setting keeps its last
// good value; removing an attribute restores the default.
//
// The simulator is shared by every lab on the page. If it crashes (a trap in the wasm), each lab
// says so, keeps its last charts, and restarts on a fresh instance with its current settings.
//
// Script API: `state` (get a copy / set a partial object), `readouts`, `sweep`, `sweepDone`,
// `config()`, `metricsText()`, `idle()`, `ready`, `timings`. Events (bubbling, composed):
// `kneelab-change` when the reader changes a control, `kneelab-update` after every redraw.
//
// It feels instant because work is split by what it depends on: dragging the load re-runs only
// the current point, once per animation frame; any other change re-measures the replica and
// re-sweeps the curves one load point per task, so input is handled between points.

import { discardKneelab, isTrap, kneelabEvents, kneelabGeneration, kneelabNote, loadKneelab } from './wasm.js';
import { formatMetric, formatPercent, formatRate, formatSeconds } from './format.js';
import { labSheet } from './knee-lab-style.js';
import { PLAYER_PANEL, ReplicaPlayer, playerMarkup } from './replica-player.js';
import SCHEMA from '../pkg/kneelab_schema.js';

/** The page's settings, stated once in Rust (`kneelab_sim::schema`, written out by the build). */
export { SCHEMA };

/** The GPU presets by name: label, model, GPU, source and vLLM V1's batch defaults there. */
export const PRESETS = Object.fromEntries(SCHEMA.presets.map((p) => [p.name, p]));

const tokens = (n) => Math.round(n).toLocaleString('en-US');
/** The workloads by name: the control's label (with the preset's mean lengths) and its SLOs. */
export const WORKLOADS = Object.fromEntries(
  SCHEMA.workloads.map((w) => [
    w.name,
    {
      label: `${w.label} (≈${tokens(w.prompt_mean_tokens)} in, ${tokens(w.output_mean_tokens)} out)`,
      sloTtftMs: w.slo_ttft_ms,
      sloTpotMs: w.slo_tpot_ms,
    },
  ]),
);

/** vLLM's max_model_len for these presets: the step budget when chunked prefill is off. */
export const MAX_MODEL_LEN = SCHEMA.max_model_len;

/** The `--max-num-seqs` choices. */
export const SEQS = SCHEMA.options.max_num_seqs;
/** The `--max-num-batched-tokens` choices (with chunked prefill on). */
export const BUDGETS = SCHEMA.options.max_num_batched_tokens;
/** KV cache sizes in tokens (see `kneelab_sim::schema::Options`). */
export const KV_CACHE_TOKENS = SCHEMA.options.kv_cache_tokens;
/** `--burstiness` choices: `{shape, label}` (the label gives the gaps' CV). */
export const BURSTINESS = SCHEMA.options.burstiness;
const ALL_PANELS = SCHEMA.panels;
const DEFAULT_PANELS = SCHEMA.default_panels;
const ALL_CONTROLS = ['load', 'mode', 'engine', 'slo', 'knee', 'model'];
/**
 * Labels of the readouts a lab can show (`metrics` attribute), from the schema's readout
 * registry (`kneelab_sim::schema::READOUTS`); the first `default_metrics` are the default.
 */
export const METRIC_LABELS = Object.fromEntries(SCHEMA.readouts.filter((r) => r.label).map((r) => [r.name, r.label]));
const DEFAULT_METRICS = Object.keys(METRIC_LABELS).slice(0, SCHEMA.default_metrics);

/** The state every lab starts from; attributes override it. */
export const DEFAULT_STATE = SCHEMA.defaults;

/** What the SLO knee can be judged on (the config's `slo.knee`), as the control names them. */
export const KNEE_RULES = Object.fromEntries(SCHEMA.options.knee_rules.map((c) => [c.value, c.label]));

/** A KV cache size as a control lists it: the default is what an 80 GB card holds. */
export const kvLabel = (k) => `${k / 1000}k${k === DEFAULT_STATE.kvCacheTokens ? ' (80 GB card)' : ''}`;

/** The offered-load slider's range, in percent. */
export const LOAD_PCT = {
  min: Math.round(SCHEMA.load_range.min * 100),
  max: Math.round(SCHEMA.load_range.max * 100),
  step: Math.round(SCHEMA.load_range.step * 100),
};

/** Longest attribute value read: a number, a name or a flag is far shorter. */
const MAX_ATTRIBUTE_LENGTH = 200;
/** How much of a bad value an error message shows. */
const ECHO_LENGTH = 60;

/** `text` cut to about `ECHO_LENGTH` characters (never inside a surrogate pair), with "…". */
function clip(text) {
  if (text.length <= ECHO_LENGTH) return text;
  let end = ECHO_LENGTH;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** An attribute value, trimmed, or an Error naming the attribute if it is empty or too long. */
function attributeText(name, raw, want) {
  const text = raw.trim();
  if (text === '') throw new Error(`${name}: the value is empty; give ${want}`);
  if (text.length > MAX_ATTRIBUTE_LENGTH) {
    throw new Error(
      `${name}: "${clip(text)}" is too long (${text.length.toLocaleString('en-US')} characters); give ${want}`,
    );
  }
  return text;
}

// Plain decimal notation only: not hex (0x40), not Infinity or NaN, not an empty string
// (`Number` would read all of those, the last as 0).
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** A finite decimal number in [min, max], or an Error naming the attribute. */
const decimal = (min = -Infinity, max = Infinity, what = '') => (name, raw) => {
  const text = attributeText(name, raw, 'a decimal number');
  const value = Number(text);
  if (!DECIMAL.test(text)) throw new Error(`${name}: "${clip(text)}" is not a decimal number`);
  if (!Number.isFinite(value)) throw new Error(`${name}: ${clip(text)} is too large`);
  if (value < min || value > max) throw new Error(`${name}: ${clip(text)} is outside ${what}${min} to ${max}`);
  return value;
};

/** A whole number in [min, max], or an Error naming the attribute. */
const whole = (min = -Infinity, max = Infinity) => (name, raw) => {
  const value = decimal()(name, raw);
  if (!Number.isInteger(value)) throw new Error(`${name}: ${clip(raw.trim())} is not a whole number`);
  if (value < min || value > max) {
    throw new Error(`${name}: ${clip(raw.trim())} is outside ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}`);
  }
  return value;
};

/** One of `choices` (case does not matter), or an Error naming the attribute and the choices. */
const oneOf = (choices) => (name, raw) => {
  const want = `one of ${choices.join(', ')}`;
  const text = attributeText(name, raw, want).toLowerCase();
  if (!choices.includes(text)) throw new Error(`${name}: "${clip(raw.trim())}" is not ${want}`);
  return text;
};

/** A boolean attribute: present (empty), "true" or "1" is on; "false" or "0" is off. */
function flag(name, raw) {
  const text = raw.trim().toLowerCase();
  if (text === '' || text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new Error(`${name}: "${clip(raw.trim())}" is not true or false (or 1 or 0)`);
}

/**
 * Attribute -> the state key it sets, how its text is read (a value, or an Error naming the
 * attribute), and the control whose alert shows that error (the general one if absent).
 * Ranges the engine knows (SLOs, batch sizes, the lowest load) are left to it: its errors name
 * the config field.
 */
const ATTRIBUTES = {
  load: { key: 'load', parse: decimal(SCHEMA.load_range.min, SCHEMA.load_range.max, 'the slider’s range, '), control: 'offered-load' },
  mode: { key: 'mode', parse: oneOf(['open', 'closed']) },
  workload: { key: 'workload', parse: oneOf(Object.keys(WORKLOADS)) },
  preset: { key: 'preset', parse: oneOf(Object.keys(PRESETS)) },
  'max-num-seqs': { key: 'maxNumSeqs', parse: whole(), control: 'max-num-seqs' },
  'chunked-prefill': { key: 'chunkedPrefill', parse: flag },
  'max-num-batched-tokens': { key: 'maxNumBatchedTokens', parse: whole(), control: 'max-num-batched-tokens' },
  'slo-ttft-ms': { key: 'sloTtftMs', parse: decimal(), control: 'slo-ttft-ms' },
  'slo-tpot-ms': { key: 'sloTpotMs', parse: decimal(), control: 'slo-tpot-ms' },
  'think-time-s': { key: 'thinkTimeS', parse: decimal() },
  burstiness: { key: 'burstiness', parse: decimal(), control: 'burstiness' },
  'kv-cache-tokens': { key: 'kvCacheTokens', parse: whole(), control: 'kv-cache-tokens' },
  // Requests per simulated run: more is smoother but slower; kept where dragging stays fluid.
  requests: { key: 'requests', parse: whole(500, 20000) },
  seed: { key: 'seed', parse: whole(0, Number.MAX_SAFE_INTEGER) },
  'knee-rule': { key: 'kneeRule', parse: oneOf(Object.keys(KNEE_RULES)), control: 'knee-rule' },
  'latency-scale': { key: 'latencyScale', parse: oneOf(['linear', 'log']) },
};

/**
 * `[attribute name, text]` pairs (a URL's parameters or hash) as a partial state: a name that is
 * not a setting's attribute, or a value its attribute would refuse, is left out.
 */
export function readSettings(pairs) {
  const out = {};
  for (const [name, text] of pairs) {
    const spec = Object.hasOwn(ATTRIBUTES, name) ? ATTRIBUTES[name] : null;
    try {
      if (spec) out[spec.key] = spec.parse(name, text);
    } catch {
      // refused: the setting keeps its value
    }
  }
  return out;
}

/** A state as `[attribute name, text]` pairs, which `readSettings` reads back. */
export const settingsOf = (state) =>
  Object.entries(ATTRIBUTES)
    .filter(([, { key }]) => Number.isFinite(state[key]) || typeof state[key] === 'string' || typeof state[key] === 'boolean')
    .map(([name, { key }]) => [name, String(key === 'load' ? Math.round(state.load * 100) / 100 : state[key])]);

/** The list attributes: what they may name, and what they show when absent. */
const LISTS = {
  panels: { all: ALL_PANELS, fallback: DEFAULT_PANELS },
  controls: { all: ALL_CONTROLS, fallback: ALL_CONTROLS },
  metrics: { all: Object.keys(METRIC_LABELS), fallback: DEFAULT_METRICS },
};

/**
 * Which control shows an error from the simulator, by the config path the error carries
 * (`err.path`; every error the wasm module throws has one, see `kneelab-web`'s `Fault`).
 */
const FIELD_CONTROL = new Map([
  ['slo.ttft_ms', 'slo-ttft-ms'],
  ['slo.tpot_ms', 'slo-tpot-ms'],
  ['slo.knee', 'knee-rule'],
  ['engine.max_num_seqs', 'max-num-seqs'],
  ['engine.max_num_batched_tokens', 'max-num-batched-tokens'],
  ['engine.kv_cache_tokens', 'kv-cache-tokens'],
  ['load.offered_load', 'offered-load'],
  ['load.think_time_s', 'offered-load'],
  ['load.users', 'offered-load'],
  ['load.burstiness', 'burstiness'],
]);

const darkQuery = matchMedia('(prefers-color-scheme: dark)');
/** Normalises any CSS colour to `#rrggbb` (a 2D context's fillStyle does). */
const probe = document.createElement('canvas').getContext('2d');
const THEME = oneOf(['auto', 'light', 'dark']);
const yieldTask = (() => {
  // A zero-delay task (setTimeout clamps to 4 ms when nested): lets input events in between.
  const channel = new MessageChannel();
  const queue = [];
  channel.port1.onmessage = () => queue.shift()?.();
  return (fn) => {
    queue.push(fn);
    channel.port2.postMessage(0);
  };
})();

function template(id) {
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
      <select id="max-num-batched-tokens" aria-describedby="budget-hint">${BUDGETS.map((b) => opt(b, b.toLocaleString('en-US'), DEFAULT_STATE.maxNumBatchedTokens)).join('')}</select>
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
      <p class="hint" id="kv-hint">Too little for the batch and vLLM preempts requests.</p>
      <p class="error" id="kv-cache-tokens-error" role="alert"></p>
    </div>
    <div class="control" data-group="slo">
      <label for="slo-ttft-ms">TTFT SLO (ms)</label>
      <input type="number" id="slo-ttft-ms" min="1" step="any" inputmode="decimal" required>
      <p class="error" id="slo-ttft-ms-error" role="alert"></p>
    </div>
    <div class="control" data-group="slo">
      <label for="slo-tpot-ms">TPOT SLO (ms)</label>
      <input type="number" id="slo-tpot-ms" min="1" step="any" inputmode="decimal" required>
      <p class="error" id="slo-tpot-ms-error" role="alert"></p>
    </div>
    <div class="control" data-group="knee">
      <label for="knee-rule">The SLO knee is the highest load where</label>
      <select id="knee-rule">${Object.entries(KNEE_RULES).map(([k, label]) => opt(k, label)).join('')}</select>
      <p class="error" id="knee-rule-error" role="alert"></p>
    </div>
    <div class="control" data-group="model">
      <label for="preset">GPU (Llama-3-8B)</label>
      <select id="preset" aria-describedby="preset-hint">${Object.entries(PRESETS).map(([k, p]) => opt(k, p.label)).join('')}</select>
      <p class="hint" id="preset-hint"></p>
    </div>
    <div class="control" data-group="model">
      <label for="workload">Workload</label>
      <select id="workload">${Object.entries(WORKLOADS).map(([k, w]) => opt(k, w.label)).join('')}</select>
    </div>
  </form>
  <p class="status" role="status" id="status" part="status">Loading the simulator…</p>
  <p class="error" role="alert" id="general-error"></p>
  <dl class="readouts" part="readouts"></dl>
  <div class="charts" part="charts">
    <figure data-panel="latency">
      <canvas id="chart-latency" role="img" aria-label="TTFT p50 and p99 against offered load"></canvas>
      <figcaption>Time to first token against offered load: p50, p99 and the mean (dotted). The vertical line is the slider; the
        dashed line the SLO. Past 100% an open loop has no steady state: the queue grows for as long as a run lasts, so the shaded
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
  // On a near tie the engine names prefill: say why a lower bar does not bind.
  const lower = LIMITS.find(([key]) => r[`limit_${key}_rps`] < r.limit_rps);
  const why = lower
    ? `: ${lower[1]} sits just below it only because prefill chunks make every step long, and raising it buys almost nothing`
    : '';
  return (
    `the sequence cap ÷ time in the batch allows ${formatRate(r.limit_seq_cap_rps)}, prefill ` +
    `${formatRate(r.limit_prefill_rps)} (${Math.round(r.limit_prefill_tokens_per_s).toLocaleString('en-US')} prefill tokens/s ÷ the mean prompt) ` +
    `and the KV cache ${formatRate(r.limit_kv_cache_rps)}, so ${binding ? binding[1] : 'none of them'} binds${why}; ` +
    `the engine saturates at ${formatRate(r.capacity_rps)}.`
  );
}

let instances = 0;

/** Quiet time after the last change before the replica player traces the new point, in ms. */
const PLAYER_SETTLE_MS = 120;

/** Keeps the newest `max` entries of a timings list (a long session should not grow it forever). */
function pushCapped(list, value, max = 1000) {
  list.push(value);
  if (list.length > max) list.splice(0, list.length - max);
}

export class KneeLab extends HTMLElement {
  static observedAttributes = [...Object.keys(ATTRIBUTES), ...Object.keys(LISTS), 'theme'];

  #state = { ...DEFAULT_STATE };
  #panels = [...DEFAULT_PANELS];
  #controls = [...ALL_CONTROLS];
  #metrics = [...DEFAULT_METRICS];
  #lab = null;
  /** The wasm instance (kneelabGeneration) `#lab` belongs to. */
  #labGeneration = -1;
  #wasm = null;
  #readouts = {};
  #frame = 0;
  #pointDirty = false;
  /** True until the first config has been tried (and while the simulator loads). */
  #starting = true;
  /** True while a crashed simulator is being replaced. */
  #restarting = false;
  /** A state change made while disconnected, to apply on the next connect. */
  #pendingApply = false;
  /** Said before the sweep's progress after a restart, until that sweep is done. */
  #restartNote = '';
  #wired = false;
  #sweeping = false;
  /** Whether the current model's capacity is known (see #startSweep). */
  #measured = true;
  #sweepGeneration = 0;
  #lastSweepDraw = 0;
  #inputAt = null;
  #paramAt = null;
  #liveTimer = 0;
  #idleWaiters = [];
  #resize = null;
  /** Error text by alert id (`general`, `offered-load`, ...), from the engine or the inputs. */
  #errors = new Map();
  /** Error text by attribute name, for attributes whose value could not be read. */
  #attributeErrors = new Map();
  #ready;
  #readySettled = false;
  #resolveReady;
  #rejectReady;
  #onDark = () => this.#scheduleFrame();
  /** A site's own theme toggle (a class or data- attribute on <html> or <body>) redraws. */
  #themeWatch = new MutationObserver(() => {
    if (this.#colours().join() !== this.#drawnColours) this.#scheduleFrame();
  });
  #drawnColours = '';
  #onDiscard = () => {
    if (this.#lab && this.#labGeneration !== kneelabGeneration()) this.#restart();
  };
  /**
   * Measured latencies in ms: `input` (slider input to readout), `param` (change to all charts),
   * `player` (tracing the replica player's run).
   */
  timings = { input: [], param: [], player: [] };
  /** The `replica` panel's player (replica-player.js). */
  #player;
  /** Whether the player's trace is older than the current point (rebuilt once input pauses). */
  #playerStale = true;
  #playerTimer = 0;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [labSheet];
    root.innerHTML = template(`kl${++instances}`);
    this.#player = new ReplicaPlayer(root, {
      colours: () => this.#colours(),
      onError: (err) => this.#crashed(err) || this.#showError(err),
    });
    this.#ready = new Promise((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    // A lab that never loads should not leave an unhandled rejection behind.
    this.#ready.catch(() => {});
    // `state` set before this element was defined is an own property hiding the setter: apply it.
    if (Object.hasOwn(this, 'state')) {
      const early = this.state;
      delete this.state;
      try {
        this.state = early;
      } catch (err) {
        this.#attributeErrors.set('state', err.message); // shown until a good state comes
        this.#paintErrors();
      }
    }
  }

  /**
   * Resolves once the simulator is loaded and the lab has drawn its first point, or shows why it
   * cannot (a config the engine rejects: the error is on the page and the lab waits for a good
   * one). Rejects if the simulator cannot be loaded at all.
   */
  get ready() {
    return this.#ready;
  }

  /** A copy of the current state (what the controls show). */
  get state() {
    return { ...this.#state };
  }

  /** Merges `partial` (some of the keys of `state`) into the state and recomputes what it affects. */
  set state(partial) {
    if (partial == null || typeof partial !== 'object' || Array.isArray(partial)) {
      throw new TypeError(`state: expected an object of settings (${Object.keys(DEFAULT_STATE).join(', ')})`);
    }
    const unknown = Object.keys(partial).filter((k) => !(k in DEFAULT_STATE));
    if (unknown.length > 0) {
      throw new TypeError(
        `state: unknown setting ${unknown.map((k) => `"${clip(k)}"`).join(', ')}; the settings are ${Object.keys(DEFAULT_STATE).join(', ')}`,
      );
    }
    if (this.#attributeErrors.delete('state')) this.#paintErrors();
    this.#update({ ...partial }, { fromUser: false });
  }

  /** The latest readouts, keyed by data-metric name, in the Summary's units. */
  get readouts() {
    return { ...this.#readouts };
  }

  /** Whether the current mode's sweep (capacity and every load point) is complete. */
  get sweepDone() {
    if (!this.#lab || this.#sweeping || this.#restarting) return false;
    return !this.#call(() => this.#lab.sweepPending(), true);
  }

  /** The current mode's sweep (points, knee, saturation), or null before it has started. */
  get sweep() {
    return this.#lab ? this.#call(() => this.#lab.sweepResult(), null) : null;
  }

  /**
   * Both load modes at the slider's load, and an open loop at the closed loop's throughput
   * (kneelab_lab::LoopComparison), or null. It may run two simulations: call it after a pause.
   */
  compareLoops() {
    if (!this.#lab || this.#restarting) return null;
    return this.#call(() => this.#lab.compareLoops(this.#state.thinkTimeS), null);
  }

  /** The current run as vLLM's /metrics text (Prometheus format). */
  metricsText() {
    const model = PRESETS[this.#state.preset]?.model ?? 'model';
    return this.#lab ? this.#call(() => this.#lab.metricsText(model), '') : '';
  }

  /** Resolves when no sweep or point is pending (and no crashed simulator is being replaced). */
  idle() {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  attributeChangedCallback(name, _old, value) {
    if (name === 'theme') {
      // The stylesheet reads the attribute itself; a bad value keeps the OS's scheme.
      try {
        if (value != null) THEME(name, value);
        this.#attributeErrors.delete(name);
      } catch (err) {
        this.#attributeErrors.set(name, err.message);
      }
      this.#paintErrors();
      this.#scheduleFrame();
      return;
    }
    const list = LISTS[name];
    if (list) {
      this.#setList(name, list, value);
      return;
    }
    const spec = ATTRIBUTES[name];
    if (!spec) return;
    let parsed;
    if (value == null) {
      // Removed: back to the default (an SLO to the current workload's).
      parsed = spec.key in WORKLOADS.rag ? WORKLOADS[this.#state.workload]?.[spec.key] : undefined;
      parsed ??= DEFAULT_STATE[spec.key];
    } else {
      try {
        parsed = spec.parse(name, value);
      } catch (err) {
        // Keep the last good setting (and its charts); say what is wrong with this one.
        this.#attributeErrors.set(name, err.message);
        this.#paintErrors();
        return;
      }
    }
    this.#attributeErrors.delete(name);
    this.#paintErrors();
    if (Object.is(this.#state[spec.key], parsed) && this.#lab) return;
    this.#update({ [spec.key]: parsed }, { fromUser: false });
  }

  /** `panels`, `controls` or `metrics`: known names are shown, unknown ones reported. */
  #setList(name, { all, fallback }, value) {
    const words = value == null ? [...fallback] : value.split(/\s+/).filter(Boolean);
    const known = words.filter((w) => all.includes(w));
    const unknown = words.filter((w) => !all.includes(w));
    if (unknown.length > 0) {
      const choices = name === 'metrics' ? 'the names in METRIC_LABELS' : all.join(', ');
      const shown = unknown.slice(0, 3).map((w) => `"${clip(w)}"`);
      if (unknown.length > 3) shown.push(`${unknown.length - 3} more`);
      this.#attributeErrors.set(
        name,
        `${name}: ${shown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not among ${choices}`,
      );
    } else {
      this.#attributeErrors.delete(name);
    }
    if (name === 'panels') {
      this.#panels = known;
      this.#showParts();
      this.#scheduleFrame();
    } else if (name === 'metrics') {
      this.#metrics = known;
      this.#buildReadouts();
      this.#showReadouts();
    } else {
      this.#controls = known;
      this.#showParts();
    }
    // After showParts: an error beside a hidden control moves to the general alert.
    this.#paintErrors();
  }

  async connectedCallback() {
    darkQuery.addEventListener('change', this.#onDark);
    for (const el of [document.documentElement, document.body, this]) {
      if (el) this.#themeWatch.observe(el, { attributes: true, attributeFilter: ['class', 'style', 'data-theme', 'data-md-color-scheme'] });
    }
    kneelabEvents.addEventListener('discard', this.#onDiscard);
    if (this.#wasm) {
      // Moved in the document: watch the new layout again, and catch up on what changed.
      this.#resize?.observe(this.shadowRoot.querySelector('.charts'));
      if (!this.#lab && !this.#restarting) {
        // Released when it was removed: a new Lab, the same state.
        try {
          this.#lab = new this.#wasm.Lab();
          this.#labGeneration = kneelabGeneration();
        } catch {
          this.#restart();
          return;
        }
        this.#pendingApply = false;
        this.#applyConfig();
      } else if (this.#lab && this.#labGeneration !== kneelabGeneration()) {
        this.#restart();
      } else if (this.#pendingApply && this.#lab) {
        this.#pendingApply = false;
        this.#applyConfig();
      }
      return;
    }
    if (this.#wired) return; // connected again while the simulator loads (or after it failed)
    this.#wired = true;
    this.#wire();
    this.#buildReadouts();
    this.#showParts();
    this.#syncControls();
    this.#paintErrors();
    try {
      this.#wasm = await loadKneelab();
      this.#labGeneration = kneelabGeneration();
      this.#lab = new this.#wasm.Lab();
    } catch (err) {
      this.#setStatus(`The simulator failed to load: ${err.message ?? err}`, 'error');
      this.#starting = false;
      this.#readySettled = true;
      this.#rejectReady(err);
      this.#settle();
      return;
    }
    this.#resize = new ResizeObserver(() => this.#scheduleFrame());
    this.#resize.observe(this.shadowRoot.querySelector('.charts'));
    this.#pendingApply = false;
    this.#applyConfig();
  }

  disconnectedCallback() {
    this.#resize?.disconnect();
    this.#themeWatch.disconnect();
    darkQuery.removeEventListener('change', this.#onDark);
    kneelabEvents.removeEventListener('discard', this.#onDiscard);
    // Removed, not moved (a move reconnects at once): give the simulator's memory back.
    queueMicrotask(() => this.isConnected || this.#release());
  }

  #release() {
    if (!this.#lab || this.#restarting) return;
    this.#sweepGeneration++;
    this.#sweeping = this.#pointDirty = false;
    cancelAnimationFrame(this.#frame);
    clearTimeout(this.#liveTimer);
    this.#frame = 0;
    this.#dropPlayer();
    try {
      this.#lab.free();
    } catch {
      // A dead instance's Lab: nothing to give back.
    }
    this.#lab = null;
    this.#pendingApply = true;
    this.#settle();
  }

  // --- state -------------------------------------------------------------------------------

  #update(partial, { fromUser }) {
    const before = this.#state;
    const next = { ...before, ...partial };
    if (partial.workload && partial.workload !== before.workload && Object.hasOwn(WORKLOADS, partial.workload)) {
      // Each workload comes with SLOs that make sense for it, unless the caller set them too.
      if (!('sloTtftMs' in partial)) next.sloTtftMs = WORKLOADS[partial.workload].sloTtftMs;
      if (!('sloTpotMs' in partial)) next.sloTpotMs = WORKLOADS[partial.workload].sloTpotMs;
    }
    this.#state = next;
    // A setting changed some other way is no longer the bad attribute's to report.
    let cleared = false;
    for (const [name, spec] of Object.entries(ATTRIBUTES)) {
      if (spec.key in partial && this.#attributeErrors.delete(name)) cleared = true;
    }
    if (cleared) this.#paintErrors();
    if (!this.isConnected || !this.#lab || this.#restarting) {
      // Applied when the lab is connected, loaded or restarted.
      if (!this.isConnected) this.#pendingApply = true;
      this.#syncControls();
      return;
    }
    const onlyLoad = Object.keys(partial).every((k) => k === 'load');
    const onlyView = Object.keys(partial).every((k) => k === 'latencyScale');
    this.#syncControls();
    if (onlyView) {
      this.#scheduleFrame(); // a redraw: nothing to simulate
    } else if (onlyLoad) {
      this.#setLoad(next.load);
    } else {
      this.#applyConfig();
    }
    if (fromUser) {
      this.dispatchEvent(new CustomEvent('kneelab-change', { detail: this.state, bubbles: true, composed: true }));
    }
  }

  /**
   * The simulator's config for the current state, in the CLI's JSON schema (public: pages use it
   * to run related configs through the wasm module's `simulate` and `sweep`). Its `load` carries
   * the mode and think time only; the lab supplies the offered load.
   */
  config() {
    const s = this.#state;
    const chunked = s.chunkedPrefill;
    return {
      seed: s.seed,
      engine: {
        max_num_seqs: s.maxNumSeqs,
        // vLLM without chunked prefill runs whole prompts: its budget is max_model_len.
        max_num_batched_tokens: chunked ? s.maxNumBatchedTokens : Math.max(MAX_MODEL_LEN, s.maxNumSeqs),
        chunked_prefill: chunked,
        kv_cache_tokens: s.kvCacheTokens,
      },
      cost: { model: 'roofline', preset: s.preset },
      workload: { preset: s.workload },
      load: s.mode === 'closed' ? { mode: 'closed', think_time_s: s.thinkTimeS } : { mode: 'open', burstiness: s.burstiness },
      slo: { ttft_ms: s.sloTtftMs, tpot_ms: s.sloTpotMs, knee: s.kneeRule },
      run: { requests: s.requests, warmup_requests: Math.floor(s.requests / 10) },
    };
  }

  #applyConfig() {
    this.#clearErrors();
    if (!this.#alive()) return;
    const invalid = this.#checkInputs();
    if (invalid) {
      this.#settleStart();
      return;
    }
    try {
      this.#lab.setConfig(this.config());
      this.#lab.setLoad(this.#state.load);
    } catch (err) {
      if (this.#crashed(err)) return;
      this.#showError(err);
      this.#settleStart(err);
      return;
    }
    this.#starting = false;
    this.#paramAt ??= performance.now();
    this.#pointDirty = true;
    this.#scheduleFrame();
    this.#startSweep();
  }

  #setLoad(load) {
    if (!this.#alive()) return;
    try {
      this.#lab.setLoad(load);
    } catch (err) {
      if (this.#crashed(err)) return;
      this.#showError(err);
      return;
    }
    this.#clearError('offered-load');
    this.#pointDirty = true;
    this.#scheduleFrame();
  }

  /** The first config was refused (`err`, if the engine said why): `ready` rejects with it. */
  #settleStart(err) {
    this.#starting = false;
    this.#settleReady(err ?? new Error(this.shadowRoot.querySelector('.error:not(:empty)')?.textContent ?? 'a setting is invalid'));
    this.#settle();
  }

  /**
   * Settles `ready` once: rejected with `err`, or with the first attribute that could not be read
   * (an Error whose `path` is the attribute's name); resolved otherwise. The lab runs on either way.
   */
  #settleReady(err) {
    if (this.#readySettled) return;
    this.#readySettled = true;
    const [name, message] = this.#attributeErrors.entries().next().value ?? [];
    err ??= name && Object.assign(new Error(message), { path: name });
    if (err) this.#rejectReady(err);
    else this.#resolveReady();
  }

  // --- a crashed simulator ---------------------------------------------------------------------

  /** False (and a restart begun) if the wasm instance `#lab` belongs to has been discarded. */
  #alive() {
    if (!this.#lab || this.#restarting) return false;
    if (this.#labGeneration === kneelabGeneration()) return true;
    this.#restart();
    return false;
  }

  /**
   * Whether `err` (thrown by a call into the wasm) means the simulator crashed: a trap, or any
   * error from an instance another lab has seen crash. Then it is replaced; the caller stops.
   */
  #crashed(err) {
    if (!isTrap(err) && this.#labGeneration === kneelabGeneration()) return false;
    discardKneelab(this.#labGeneration); // a no-op if another lab or call got there first
    this.#restart();
    return true;
  }

  /** `fn()` (a call into the wasm), or `fallback` if the simulator crashed in it. */
  #call(fn, fallback) {
    if (!this.#alive()) return fallback;
    try {
      return fn();
    } catch (err) {
      if (this.#crashed(err)) return fallback;
      throw err;
    }
  }

  /**
   * Replaces a crashed simulator: a fresh wasm instance, a new Lab, the current config again.
   * The last good charts and readouts stay on screen meanwhile; the status says what happened.
   */
  async #restart() {
    if (this.#restarting) return;
    this.#restarting = true;
    this.setAttribute('data-busy', '');
    this.#sweepGeneration++; // stops the sweep in flight
    this.#sweeping = false;
    this.#pointDirty = false;
    if (this.#frame) {
      cancelAnimationFrame(this.#frame);
      this.#frame = 0;
    }
    this.#dropPlayer();
    const dead = this.#lab;
    this.#lab = null;
    try {
      // Off the dead instance's finalizer list, so it is never called into again.
      dead?.free();
    } catch {
      // Expected: the instance is dead.
    }
    this.#setStatus('The simulator crashed; restarting it…', 'error');
    let lastError = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        this.#wasm = await loadKneelab();
        const gen = kneelabGeneration();
        const lab = new this.#wasm.Lab();
        this.#lab = lab;
        this.#labGeneration = gen;
        lastError = null;
        break;
      } catch (err) {
        lastError = err;
        if (isTrap(err)) discardKneelab(kneelabGeneration());
      }
    }
    this.#restarting = false;
    if (lastError) {
      this.#setStatus(`The simulator crashed and could not be restarted (${lastError.message ?? lastError}). Reload the page to try again.`, 'error');
      this.#settle();
      return;
    }
    this.#setStatus('');
    this.#restartNote = 'The simulator crashed and was restarted. ';
    if (this.isConnected) {
      this.#applyConfig();
    } else {
      this.#pendingApply = true; // applied on the next connect
    }
    this.#settle();
  }

  // --- the replica player ------------------------------------------------------------------------

  /**
   * Traces the current point for the player once input has paused (a trace is a few thousand
   * engine steps: not worth redoing on every frame of a drag).
   */
  #schedulePlayer() {
    clearTimeout(this.#playerTimer);
    this.#playerTimer = setTimeout(() => {
      this.#playerTimer = 0;
      if (!this.#alive() || !this.#panels.includes(PLAYER_PANEL) || !this.#playerStale) return;
      if (this.#pointDirty || (this.#sweeping && !this.#measured)) return this.#schedulePlayer();
      let source;
      const began = performance.now();
      try {
        source = this.#lab.replicaPlayer();
        pushCapped(this.timings.player, performance.now() - began);
      } catch (err) {
        if (this.#crashed(err)) return;
        if (err.kind !== 'state') this.#showError(err);
        return; // no point yet: the next render asks again
      }
      this.#playerStale = false;
      this.#player.setSource(source);
      this.dispatchEvent(new CustomEvent('kneelab-player', { detail: { steps: this.#player.length }, bubbles: true, composed: true }));
    }, PLAYER_SETTLE_MS);
  }

  #dropPlayer() {
    clearTimeout(this.#playerTimer);
    this.#playerTimer = 0;
    this.#playerStale = true;
    this.#player.clear();
  }

  /** The replica player (the `replica` panel): `length`, `index`, `playing`, `play()`, `step(n)`, ... */
  get player() {
    return this.#player;
  }

  // --- scheduling ------------------------------------------------------------------------------

  #isIdle() {
    return !this.#starting && !this.#restarting && !this.#sweeping && !this.#pointDirty && !this.#frame;
  }

  #settle() {
    if (!this.#isIdle()) return;
    this.removeAttribute('data-busy');
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  #scheduleFrame() {
    if (!this.#lab) return; // nothing to draw yet (or a restart will draw)
    this.setAttribute('data-busy', '');
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#render();
      this.#settle();
    });
  }

  #startSweep() {
    const generation = ++this.#sweepGeneration;
    // Whether the capacity is known; until it is, the sweep's slices measure it and the point waits.
    this.#measured = this.#call(() => this.#lab.sweepProgress().measured, true);
    this.#sweeping = true;
    this.#lastSweepDraw = performance.now();
    this.setAttribute('data-busy', '');
    this.#setStatus(`${this.#restartNote}Measuring the replica’s capacity…`);
    const step = () => {
      if (generation !== this.#sweepGeneration) return; // a newer change took over
      if (!this.#alive()) return;
      const started = performance.now();
      let more = true;
      let progress;
      try {
        // A time slice of sweep work, then yield so input is handled between load points.
        do {
          more = this.#lab.sweepStep();
        } while (more && performance.now() - started < 12);
        progress = this.#lab.sweepProgress();
      } catch (err) {
        if (this.#crashed(err)) return;
        this.#sweeping = false;
        this.#restartNote = '';
        this.#setStatus('');
        this.#showError(err);
        this.#scheduleFrame(); // a point left waiting for the capacity
        this.#settle();
        return;
      }
      if (!this.#measured && progress.measured) {
        this.#measured = true;
        this.#scheduleFrame(); // the point that waited for the capacity
      }
      if (more) {
        this.#setStatus(`${this.#restartNote}Sweeping offered load: ${progress.done} of ${progress.total} points…`);
        // Draw the curves as they fill in, but not every slice: on a fast machine the whole
        // sweep takes about as long as a few redraws.
        if (performance.now() - this.#lastSweepDraw > 100) {
          this.#lastSweepDraw = performance.now();
          this.#scheduleFrame();
        }
        yieldTask(step);
      } else {
        this.#sweeping = false;
        this.#restartNote = '';
        this.#setStatus(kneelabNote());
        this.#scheduleFrame();
        this.#settle();
      }
    };
    yieldTask(step);
  }

  #render() {
    if (!this.#alive()) return;
    try {
      if (this.#pointDirty) {
        // Measuring the capacity in one go would be a long task: the sweep's slices do it.
        if (this.#sweeping && !this.#measured) return;
        this.#pointDirty = false;
        this.#readouts = this.#lab.runPoint();
        this.#playerStale = true;
      } else {
        this.#readouts = this.#lab.readouts();
      }
    } catch (err) {
      if (this.#crashed(err)) return;
      this.#showError(err);
      return;
    }
    this.#showReadouts();
    if (this.#inputAt != null) {
      pushCapped(this.timings.input, performance.now() - this.#inputAt);
      this.#inputAt = null;
    }
    if (!this.#drawCharts()) return;
    if (this.#paramAt != null && !this.#sweeping) {
      pushCapped(this.timings.param, performance.now() - this.#paramAt);
      this.#paramAt = null;
      this.#settleReady();
    }
    this.dispatchEvent(
      new CustomEvent('kneelab-update', {
        detail: { readouts: this.readouts, state: this.state, sweepDone: !this.#sweeping },
        bubbles: true,
        composed: true,
      }),
    );
  }

  /** Draws the shown panels; false if the simulator crashed meanwhile. */
  #drawCharts() {
    const [chrome, dark] = this.#colours();
    this.#drawnColours = [chrome, dark].join();
    const root = this.shadowRoot;
    const lab = this.#lab;
    const log = this.#state.latencyScale === 'log';
    for (const panel of this.#panels) {
      if (panel === PLAYER_PANEL) {
        if (this.#playerStale) this.#schedulePlayer();
        else this.#player.redraw();
        continue;
      }
      try {
        lab.setLatencyLog(log); // throws only if the module died
        lab.draw(panel, root.getElementById(`chart-${panel}`), dark, chrome);
      } catch (err) {
        if (this.#crashed(err)) return false;
        this.#showError(err);
      }
    }
    this.#describeCharts();
    return true;
  }

  /**
   * The host's --kl-bg, --kl-fg, --kl-muted and --kl-grid as 0xRRGGBB (-1 where a value is not an
   * opaque colour), and whether the background is dark (the charts' series palette follows it).
   */
  #colours() {
    const css = getComputedStyle(this);
    const chrome = ['bg', 'fg', 'muted', 'grid'].map((name) => {
      probe.fillStyle = '#010203';
      probe.fillStyle = css.getPropertyValue(`--kl-${name}`).trim() || '#010203';
      const hex = probe.fillStyle; // #rrggbb, or rgba(...) if not opaque
      return hex !== '#010203' && hex[0] === '#' ? parseInt(hex.slice(1), 16) : -1;
    });
    const bg = chrome[0];
    const luma = ((bg >> 16) & 255) * 0.299 + ((bg >> 8) & 255) * 0.587 + (bg & 255) * 0.114;
    return [chrome, bg < 0 ? darkQuery.matches : luma < 128];
  }

  // --- DOM -------------------------------------------------------------------------------------

  #el(id) {
    return this.shadowRoot.getElementById(id);
  }

  #wire() {
    // Never submits; not an inline handler, which a host page's CSP may forbid.
    this.shadowRoot.querySelector('form').addEventListener('submit', (e) => e.preventDefault());
    const slider = this.#el('offered-load');
    slider.addEventListener('input', () => {
      this.#inputAt ??= performance.now();
      this.#update({ load: Number(slider.value) / 100 }, { fromUser: true });
    });
    this.#el('burstiness').addEventListener('input', (e) =>
      this.#update({ burstiness: BURSTINESS[e.target.value].shape }, { fromUser: true }),
    );
    this.#el('closed-loop').addEventListener('change', (e) =>
      this.#update({ mode: e.target.checked ? 'closed' : 'open' }, { fromUser: true }),
    );
    this.#el('chunked-prefill').addEventListener('change', (e) =>
      this.#update({ chunkedPrefill: e.target.checked }, { fromUser: true }),
    );
    this.#el('max-num-seqs').addEventListener('change', (e) =>
      this.#update({ maxNumSeqs: Number(e.target.value) }, { fromUser: true }),
    );
    this.#el('max-num-batched-tokens').addEventListener('change', (e) =>
      this.#update({ maxNumBatchedTokens: Number(e.target.value) }, { fromUser: true }),
    );
    this.#el('kv-cache-tokens').addEventListener('change', (e) =>
      this.#update({ kvCacheTokens: Number(e.target.value) }, { fromUser: true }),
    );
    this.#el('preset').addEventListener('change', (e) => this.#update({ preset: e.target.value }, { fromUser: true }));
    this.#el('knee-rule').addEventListener('change', (e) => this.#update({ kneeRule: e.target.value }, { fromUser: true }));
    this.#el('latency-log').addEventListener('change', (e) =>
      this.#update({ latencyScale: e.target.checked ? 'log' : 'linear' }, { fromUser: true }),
    );
    this.#el('workload').addEventListener('change', (e) =>
      this.#update({ workload: e.target.value }, { fromUser: true }),
    );
    for (const [id, key] of [
      ['slo-ttft-ms', 'sloTtftMs'],
      ['slo-tpot-ms', 'sloTpotMs'],
    ]) {
      // `change`, not `input`: typing "1500" should not re-judge at 1, 15 and 150 on the way.
      this.#el(id).addEventListener('change', (e) => {
        const text = e.target.value.trim();
        this.#update({ [key]: text === '' ? NaN : Number(text) }, { fromUser: true });
      });
    }
  }

  /** Client-side checks the engine cannot make (an empty box is not a number at all). */
  #checkInputs() {
    let bad = false;
    for (const [id, key, label] of [
      ['slo-ttft-ms', 'sloTtftMs', 'TTFT SLO'],
      ['slo-tpot-ms', 'sloTpotMs', 'TPOT SLO'],
    ]) {
      if (!Number.isFinite(this.#state[key])) {
        this.#setError(id, `${label}: enter a number of milliseconds.`);
        bad = true;
      }
    }
    return bad;
  }

  #syncControls() {
    const s = this.#state;
    const pct = Math.round(s.load * 100);
    const slider = this.#el('offered-load');
    if (Number(slider.value) !== pct) slider.value = String(pct);
    const closed = s.mode === 'closed';
    slider.setAttribute('aria-valuetext', closed ? `users offering ${pct}% of capacity if unloaded` : `${pct}% of capacity`);
    const label = this.shadowRoot.querySelector('label[for="offered-load"]');
    label.querySelector('.load-name').textContent = closed ? 'Users’ demand' : 'Offered load';
    label.querySelector('.load-hint').textContent = closed
      ? '(the share of capacity the users would offer if every answer came at the unloaded latency)'
      : "(% of the replica's capacity)";
    this.#el('offered-load-value').value = `${pct}%`;
    this.#el('closed-loop').checked = s.mode === 'closed';
    // The nearest choice to the state's shape; an open loop's only.
    const b = BURSTINESS.reduce((best, c, i) => (Math.abs(c.shape - s.burstiness) < Math.abs(BURSTINESS[best].shape - s.burstiness) ? i : best), 0);
    this.#el('burstiness').value = String(b);
    this.#el('burstiness-value').value = BURSTINESS[b].label;
    this.#el('burst-box').hidden = closed;
    this.#el('chunked-prefill').checked = s.chunkedPrefill;
    const budget = this.#el('max-num-batched-tokens');
    budget.value = String(s.chunkedPrefill ? s.maxNumBatchedTokens : MAX_MODEL_LEN);
    budget.disabled = !s.chunkedPrefill;
    this.#el('budget-hint').textContent = s.chunkedPrefill
      ? 'Tokens per step: long prompts are split into chunks of what is left after the decodes.'
      : `Without chunking vLLM sets it to max_model_len (${MAX_MODEL_LEN.toLocaleString('en-US')}): a whole prompt runs in one step and every decode waits for it.`;
    this.#el('max-num-seqs').value = String(s.maxNumSeqs);
    this.#el('kv-cache-tokens').value = String(s.kvCacheTokens);
    for (const [id, key] of [
      ['slo-ttft-ms', 'sloTtftMs'],
      ['slo-tpot-ms', 'sloTpotMs'],
    ]) {
      const input = this.#el(id);
      if (Number.isFinite(s[key]) && Number(input.value) !== s[key]) input.value = String(s[key]);
    }
    this.#el('preset').value = s.preset;
    this.#el('preset-hint').textContent = PRESETS[s.preset]?.source ?? '';
    this.#el('workload').value = s.workload;
    this.#el('knee-rule').value = s.kneeRule;
    this.#el('latency-log').checked = s.latencyScale === 'log';
  }

  #showParts() {
    const root = this.shadowRoot;
    for (const fig of root.querySelectorAll('figure[data-panel]')) fig.hidden = !this.#panels.includes(fig.dataset.panel);
    for (const el of root.querySelectorAll('[data-group]')) el.hidden = !this.#controls.includes(el.dataset.group);
    root.querySelector('.controls').hidden = this.#controls.length === 0;
  }

  #buildReadouts() {
    const dl = this.shadowRoot.querySelector('.readouts');
    dl.replaceChildren(
      ...this.#metrics.map((m) => {
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
    dl.hidden = this.#metrics.length === 0;
  }

  #showReadouts() {
    const r = this.#readouts;
    for (const box of this.shadowRoot.querySelectorAll('.readouts [data-metric]')) {
      const name = box.dataset.metric;
      const value = r[name];
      const dd = box.querySelector('dd');
      if (value == null) {
        box.removeAttribute('data-value');
      } else {
        box.setAttribute('data-value', String(value));
      }
      dd.textContent = formatMetric(name, value);
      const limit = name.startsWith('ttft_') ? r.slo_ttft_s : name.startsWith('tpot_') ? r.slo_tpot_s : null;
      dd.classList.toggle('over', limit != null && value != null && value > limit);
      dd.classList.toggle('ok', limit != null && value != null && value <= limit);
    }
    const s = this.#state;
    this.#el('offered-load-rate').textContent =
      s.load <= 0
        ? 'No traffic: drag the slider up to send requests.'
        : s.mode === 'open'
          ? `Poisson arrivals at ${formatRate(r.offered_rps)}, ${formatPercent(s.load)} of a capacity of ${formatRate(r.capacity_rps)}` +
            (r.arrival_rate_rps != null ? `; this run drew ${formatRate(r.arrival_rate_rps)}.` : '.')
          : `Achieved ${formatRate(r.throughput_rps)} (${formatPercent(r.throughput_rps / r.capacity_rps)} of capacity).`;
    this.#el('closed-mapping').textContent =
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
    clearTimeout(this.#liveTimer);
    this.#liveTimer = setTimeout(() => {
      this.#el('live-summary').textContent =
        s.load <= 0
          ? 'No traffic.'
          : `At ${formatPercent(s.load)} offered load: TTFT p99 ${formatSeconds(r.ttft_p99)} against a ${formatSeconds(r.slo_ttft_s)} SLO; ` +
            `goodput ${formatRate(r.goodput_rps)} of ${formatRate(r.throughput_rps)} throughput; ` +
            `${formatMetric('num_requests_waiting', r.num_requests_waiting)} requests waiting on average.`;
    }, 700);
  }

  #describeCharts() {
    const r = this.#readouts;
    const at = `at ${formatPercent(this.#state.load)} load`;
    const knee = r.knee_load != null ? `; the knee is at ${formatPercent(r.knee_load)}` : '';
    this.#el('chart-latency').setAttribute(
      'aria-label',
      `TTFT against offered load: ${at}, p50 ${formatSeconds(r.ttft_p50)} and p99 ${formatSeconds(r.ttft_p99)}, SLO ${formatSeconds(r.slo_ttft_s)}${knee}.`,
    );
    this.#el('chart-throughput').setAttribute(
      'aria-label',
      `Throughput and goodput against offered load: ${at}, throughput ${formatRate(r.throughput_rps)}, goodput ${formatRate(r.goodput_rps)}, capacity ${formatRate(r.capacity_rps)}${knee}.`,
    );
    this.#el('chart-queue').setAttribute(
      'aria-label',
      `Requests running and waiting over time ${at}: on average ${formatMetric('num_requests_running', r.num_requests_running)} running and ${formatMetric('num_requests_waiting', r.num_requests_waiting)} waiting.`,
    );
    this.#el('tail-loads').textContent = SCHEMA.compare_loads.map(formatPercent).join(' and ');
    if (r.timeline_wait_mean_s != null) {
      const pick =
        `They come from the middle of the run, picked as the six whose mean wait, ${formatSeconds(r.timeline_wait_mean_s)}, ` +
        `is nearest the run's mean wait of ${formatSeconds(r.queue_mean)}: waits typical of this load.`;
      this.#el('timeline-pick').textContent = pick;
      this.#el('chart-timeline').setAttribute('aria-label', `Timeline of six requests ${at}. ${pick}`);
    }
    const limits = describeLimits(r);
    if (limits) {
      this.#el('limits-sentence').textContent = limits;
      this.#el('chart-limits').setAttribute('aria-label', `The replica's limits: ${limits}`);
    }
  }

  #setStatus(text, kind = 'info') {
    const status = this.#el('status');
    status.textContent = text;
    status.dataset.kind = kind;
  }

  /** Shows a simulator error beside the control its `path` names (the general alert otherwise). */
  #showError(err) {
    this.#setError(FIELD_CONTROL.get(err?.path) ?? 'general', err?.message ?? String(err));
  }

  #setError(id, message) {
    this.#errors.set(id, message);
    this.#paintErrors();
  }

  #clearError(id) {
    if (this.#errors.delete(id)) this.#paintErrors();
  }

  #clearErrors() {
    if (this.#errors.size === 0) return;
    this.#errors.clear();
    this.#paintErrors();
  }

  /** Where an error about control `id` shows: beside it, or in the general alert if it is hidden. */
  #alertFor(id) {
    if (!id || id === 'general') return 'general';
    const control = this.#el(id);
    return control && !control.closest('[data-group]')?.hidden ? id : 'general';
  }

  /** Fills every alert from the engine's and the attributes' errors, and marks the controls. */
  #paintErrors() {
    // An engine error means the charts are from the last settings it accepted: say they are stale.
    this.toggleAttribute('data-stale', this.#errors.size > 0);
    const texts = new Map();
    const add = (id, text) => {
      const at = this.#alertFor(id);
      texts.set(at, texts.has(at) ? `${texts.get(at)}\n${text}` : text);
    };
    for (const [name, text] of this.#attributeErrors) add(ATTRIBUTES[name]?.control, text);
    for (const [id, text] of this.#errors) add(id, text);
    for (const alert of this.shadowRoot.querySelectorAll('.error')) {
      const id = alert.id.replace(/-error$/, '');
      const text = texts.get(id) ?? '';
      if (alert.textContent !== text) alert.textContent = text;
      const control = id === 'general' ? null : this.#el(id);
      if (!control) continue;
      const described = (control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter((t) => t && t !== alert.id);
      if (text) {
        control.setAttribute('aria-invalid', 'true');
        described.push(alert.id);
      } else {
        control.removeAttribute('aria-invalid');
      }
      const value = described.join(' ');
      if ((control.getAttribute('aria-describedby') ?? '') !== value) {
        if (value) control.setAttribute('aria-describedby', value);
        else control.removeAttribute('aria-describedby');
      }
    }
  }
}

if (!customElements.get('knee-lab')) customElements.define('knee-lab', KneeLab);
