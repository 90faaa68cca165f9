// <knee-lab>: the knee lab in one custom element (open shadow root), working alone on any page
// that loads this module. Every number it shows comes from the simulator (kneelab-web).
//
//   <knee-lab load="0.85" mode="open" workload="rag"></knee-lab>
//
// Attributes set the starting state, each by its Config path or its short alias (the schema's
// table of settings, knee-lab-settings.js): load.offered_load or load (fraction of capacity,
// within the schema's load_range), load.mode or mode (open | closed), workload.preset or
// workload (chat | rag), cost.preset or preset, engine.max_num_seqs or max-num-seqs,
// engine.chunked_prefill or chunked-prefill, engine.max_num_batched_tokens, slo.ttft_ms,
// slo.tpot_ms, load.think_time_s, load.burstiness, engine.kv_cache_tokens, run.requests, seed,
// slo.knee or knee-rule; and latency-scale (linear | log), theme (auto | light | dark; the --kl-*
// custom properties restyle chrome and charts, see knee-lab-style.js), panels (see
// replica-player.js for `replica`), controls and metrics (readout names, see METRIC_LABELS) pick
// what is shown; a `state` set before the module loads wins over the markup's. A value that
// cannot be read (empty, not a decimal number, an unknown name) is an error on the page naming
// the attribute, and the setting keeps its last good value; a value the engine refuses is its
// error, beside the control. Removing an attribute restores the default.
//
// The simulator is shared by every lab on the page. If it crashes (a trap in the wasm), each lab
// says so, keeps its last charts, and restarts on a fresh instance with its current settings.
//
// Script API: `state` (get a copy / set a partial object), `readouts`, `sweep`, `sweepDone`,
// `config()`, `metricsText()`, `metricsReading()` and `compareLoops()` (promises), `idle()`,
// `ready`, `timings`, `player`. Events (bubbling, composed): `kneelab-change` when the reader
// changes a control, `kneelab-update` after every redraw, `kneelab-player` when the replica player
// has a run.
//
// It feels instant because work is split by what it depends on: dragging the load re-runs only
// the current point, once per animation frame; any other change re-measures the replica and
// re-sweeps the curves in short tasks (schedule.js), so input is handled in between.

import { kneelabEvents } from './wasm.js';
import { labSheet, watchTheme } from './knee-lab-style.js';
import { DEFAULT_STATE, LISTS, PRESETS, SETTING_NAMES, WORKLOADS, checkState, clip, configOf, oneOf, settingNamed, upgrade } from './knee-lab-settings.js';
import { buildReadouts, template } from './knee-lab-markup.js';
import { showParts, syncControls, wire } from './knee-lab-controls.js';
import { LabCore } from './knee-lab-core.js';
import { callLater } from './later.js';

export {
  SCHEMA, PRESETS, WORKLOADS, MAX_MODEL_LEN, SEQS, BUDGETS, KV_CACHE_TOKENS, BURSTINESS, METRIC_LABELS,
  DEFAULT_STATE, KNEE_RULES, kvLabel, LOAD_PCT, SETTINGS, readSettings, settingsOf,
} from './knee-lab-settings.js';
export { describeLimits } from './knee-lab-words.js';

const THEME = oneOf(['auto', 'light', 'dark']);
let instances = 0;

export class KneeLab extends HTMLElement {
  static observedAttributes = [...SETTING_NAMES, ...Object.keys(LISTS), 'theme'];

  #core;
  #controls = [...LISTS.controls.fallback];
  #metrics = [...LISTS.metrics.fallback];
  #wired = false;
  #early = null; // a state set before the upgrade, until the markup's attributes have been seen
  #resize = null;
  #theme = watchTheme(this, () => this.#core.recolour());
  #onDiscard = () => this.#core.sim.orphaned && this.#core.sim.restart();

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [labSheet];
    root.innerHTML = template(`kl${++instances}`);
    this.#core = new LabCore(this, root);
    // `state` set before this element was defined: applied, over the markup's attributes.
    const early = upgrade(this, 'state');
    if (early?.error) {
      this.#core.alerts.attributes.set('state', early.error.message); // shown until a good state comes
      this.#core.alerts.paint();
    } else this.#early = early?.value ?? null;
  }

  /**
   * Resolves once the simulator is loaded and the lab has drawn its first point, or shows why it
   * cannot (a config the engine rejects: the error is on the page and the lab waits for a good
   * one). Rejects if the simulator cannot be loaded at all.
   */
  get ready() {
    return this.#core.ready.promise;
  }

  /** A copy of the current state (what the controls show). */
  get state() {
    return { ...this.#core.state };
  }

  /**
   * Merges `partial` (some of the keys of `state`) into the state and recomputes what it affects.
   * An unknown key or a value of the wrong kind throws a TypeError whose `path` names the setting;
   * a value the engine refuses is shown beside its control and fires `kneelab-error`.
   */
  set state(partial) {
    checkState(partial);
    if (this.#core.alerts.attributes.delete('state')) this.#core.alerts.paint();
    this.#core.update({ ...partial }, { fromUser: false });
  }

  /** The latest readouts, keyed by data-metric name, in the Summary's units. */
  get readouts() {
    return { ...this.#core.readouts };
  }

  /** Whether the current mode's sweep (capacity and every load point) is complete. */
  get sweepDone() {
    const sim = this.#core.sim;
    if (!sim.lab || sim.sweeping || sim.restarting) return false;
    return !sim.call(() => sim.lab.sweepPending(), true);
  }

  /** The current mode's sweep (points, knee, saturation), or null before it has started. */
  get sweep() {
    const sim = this.#core.sim;
    return sim.lab ? sim.call(() => sim.lab.sweepResult(), null) : null;
  }

  /**
   * Resolves to both load modes at the slider's load, and an open loop at the closed loop's
   * throughput (kneelab_lab::LoopComparison), or null (no load, no simulator). Computed on the
   * page's third module from the lab's settled config and capacity: up to three simulations.
   */
  compareLoops() {
    return this.#atPoint(null, (config, capacity, state) =>
      callLater('compareLoops', config, capacity, state.load, state.thinkTimeS));
  }

  /** Resolves to the current run as vLLM's /metrics text (Prometheus format); '' at no load. */
  async metricsText() {
    return (await this.metricsReading()).text;
  }

  /** The /metrics text and a dashboard's reading of it (gauges, histogram_quantile p99s). */
  metricsReading() {
    return this.#atPoint({ text: '', dashboard: null }, (config, capacity, state) =>
      callLater('metricsReading', config, capacity, state.load, PRESETS[state.preset]?.model ?? 'model'));
  }

  /** `fn(config, capacity, state)` once the point is run (not the whole sweep), or `fallback` without one. */
  async #atPoint(fallback, fn) {
    await this.#core.pointSettled();
    const { sim, state } = this.#core;
    const capacity = sim.lab && !sim.restarting ? sim.call(() => sim.lab.capacity(), null) : null;
    if (!capacity || !(state.load > 0)) return fallback;
    return fn(configOf(state), capacity, state);
  }

  /** Resolves when no sweep or point is pending (and no crashed simulator is being replaced). */
  idle() {
    return this.#core.idle();
  }

  /** The `replica` panel's player (`length`, `playing`, `play()`, `step(n)`, ...), null until the panel nears. */
  get player() {
    return this.#core.feed.player;
  }

  /**
   * The simulator's config for the current state, in the CLI's JSON schema (public: pages use it
   * to run related configs through `simulate` and `sweep` of `pkg/kneelab_later.js`). Its `load`
   * carries the mode and think time only; the lab supplies the offered load.
   */
  config() {
    return configOf(this.#core.state);
  }

  /**
   * Measured latencies in ms: `input` (slider input to readout), `param` (change to all charts),
   * `player` (tracing the replica player's run).
   */
  get timings() {
    return this.#core.timings;
  }

  attributeChangedCallback(name, _old, value) {
    const { alerts, state } = this.#core;
    if (name === 'theme') {
      // The stylesheet reads the attribute itself; a bad value keeps the OS's scheme.
      try {
        if (value != null) THEME(name, value);
        alerts.attributes.delete(name);
        alerts.paint();
      } catch (err) {
        alerts.attributeError(name, err.message);
      }
      return this.#core.scheduleFrame();
    }
    if (LISTS[name]) return this.#setList(name, value);
    const spec = settingNamed(name);
    if (!spec) return;
    if (this.#early && spec.key in this.#early) return; // the state set before the upgrade wins
    let parsed;
    if (value != null) {
      try {
        parsed = spec.parse(name, value);
      } catch (err) {
        // Keep the last good setting (and its charts); say what is wrong with this one.
        return alerts.attributeError(name, err.message);
      }
    } else {
      // Removed: the setting's other name if that is there, else the default (an SLO: the workload's).
      const other = [spec.path, spec.attribute].find((n) => n && n !== name && this.hasAttribute(n));
      if (other) {
        alerts.attributes.delete(name);
        return this.attributeChangedCallback(other, null, this.getAttribute(other));
      }
      parsed = (spec.key in WORKLOADS.rag ? WORKLOADS[state.workload]?.[spec.key] : undefined) ?? DEFAULT_STATE[spec.key];
    }
    alerts.attributes.delete(name);
    alerts.paint();
    if (Object.is(state[spec.key], parsed) && this.#core.sim.lab) return;
    this.#core.update({ [spec.key]: parsed }, { fromUser: false });
  }

  /** `panels`, `controls` or `metrics`: known names are shown, unknown ones reported. */
  #setList(name, value) {
    const { all, fallback } = LISTS[name];
    const words = value == null ? [...fallback] : value.split(/\s+/).filter(Boolean);
    const known = words.filter((w) => all.includes(w));
    const unknown = words.filter((w) => !all.includes(w));
    const errors = this.#core.alerts.attributes;
    if (unknown.length > 0) {
      const choices = name === 'metrics' ? 'the names in METRIC_LABELS' : all.join(', ');
      const shown = unknown.slice(0, 3).map((w) => `"${clip(w)}"`);
      if (unknown.length > 3) shown.push(`${unknown.length - 3} more`);
      this.#core.alerts.attributeError(name, `${name}: ${shown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not among ${choices}`);
    } else {
      errors.delete(name);
    }
    if (name === 'metrics') {
      this.#metrics = known;
      buildReadouts(this.shadowRoot.querySelector('.readouts'), known);
      this.#core.showReadouts();
    } else {
      if (name === 'panels') this.#core.panels = known;
      else this.#controls = known;
      showParts(this.shadowRoot, this.#core.panels, this.#controls);
      if (name === 'panels') this.#core.scheduleFrame();
    }
    this.#core.alerts.paint(); // after showParts: an error beside a hidden control moves to the general alert
  }

  async connectedCallback() {
    this.#early = null; // the markup's attributes have been seen: later changes apply
    this.#theme.observe();
    kneelabEvents.addEventListener('discard', this.#onDiscard);
    const core = this.#core;
    const sim = core.sim;
    if (sim.wasm) {
      // Moved in the document: watch the new layout again, and catch up on what changed.
      this.#resize?.observe(this.shadowRoot.querySelector('.charts'));
      if (!sim.lab && !sim.restarting) {
        // Released when it was removed: a new Lab, the same state.
        if (!sim.renew()) return;
        core.pendingApply = false;
        core.applyConfig();
      } else if (sim.orphaned) {
        sim.restart();
      } else if (core.pendingApply && sim.lab) {
        core.pendingApply = false;
        core.applyConfig();
      }
      return;
    }
    if (this.#wired) return; // connected again while the simulator loads (or after it failed)
    this.#wired = true;
    wire(this.shadowRoot, (partial) => core.update(partial, { fromUser: true }), () => (core.inputAt ??= performance.now()));
    buildReadouts(this.shadowRoot.querySelector('.readouts'), this.#metrics);
    showParts(this.shadowRoot, core.panels, this.#controls);
    syncControls(this.shadowRoot, core.state);
    core.alerts.paint();
    try {
      await sim.load();
      sim.open(); // and configured below, in this same task: no call finds it unconfigured
    } catch (err) {
      return core.failed(err);
    }
    this.#resize = new ResizeObserver(() => core.scheduleFrame());
    this.#resize.observe(this.shadowRoot.querySelector('.charts'));
    core.pendingApply = false;
    core.applyConfig();
  }

  disconnectedCallback() {
    this.#resize?.disconnect();
    this.#theme.disconnect();
    kneelabEvents.removeEventListener('discard', this.#onDiscard);
    // Removed, not moved (a move reconnects at once): give the simulator's memory back.
    queueMicrotask(() => this.isConnected || this.#core.release());
  }
}

if (!customElements.get('knee-lab')) customElements.define('knee-lab', KneeLab);
