// <fleet-lab>: replicas behind a router and an autoscaler over a compressed day, from the page's
// third module (kneelab-web's `fleet` feature, `pkg/kneelab_later.js`, see later.js), fetched when
// the element connects. The reader picks a router, a signal, its thresholds, the cold start and
// the fleet's bounds, and plays the day: the run advances a slice of about 8 ms per task, with a
// yield between slices, and the charts redraw once per frame as it fills. Pin keeps a run's
// scoreboard beside the next one. A bad value is named at its control (by the error's `path`)
// and the last good run stays on show.
//
// Attributes named by config path (`traffic.peak_rps="60"`, `autoscaler.signal="gpu_util"`,
// `autoscaler.cold_start_s="300"`) override the schema's day, as in the CLI's fleet JSON, and
// are followed when they change (removed: the day's own value); `theme` is `light`, `dark` or
// `auto`. Settings the engine refuses are named at once (at their control, or in the status
// line), with a `kneelab-error` event ({ path, message }); `play()` then rejects with that Error.

import { isTrap } from './wasm.js';
import { discardLater, loadLater } from './later.js';
import { runSliced } from './fleet-run.js';
// <knee-lab>'s modules come along (its styles are this lab's base): a page with both loads them
// once, and the lesson page's bundle keeps them in one chunk rather than splitting the styles out.
import './knee-lab.js';
import { labSheet } from './knee-lab-style.js';
import { CHOICES, FIELDS, fleetSheet, markup, markField, fillBoard, get, set, number, undropped, lay, describePolicy } from './fleet-lab-view.js';
import { upgrade } from './knee-lab-settings.js';

const CHARTS = ['replicas', 'ttft', 'waiting'];


export class FleetLabElement extends HTMLElement {
  #fleet = null;
  #schema = null;
  #lab = null; // the run on show (the last good one, or the one playing)
  #config = null;
  #totals = null;
  #pinned = null;
  #run = 0;
  #dirty = false;
  #dark = matchMedia('(prefers-color-scheme: dark)');
  #pending = {}; // settings given before the schema is loaded
  #announced = null; // the refusal last told to the page, not told again while it stands
  #early = null;
  #bad = new Map(); // number settings given what is not a number, by path, until given a good one

  static observedAttributes = ['theme'];

  attributeChangedCallback() {
    this.#redraw();
  }

  /** Config-path attributes changed after the lab is set up: each is set (removed: the day's own). */
  #watch = new MutationObserver((records) => {
    const values = {};
    for (const { attributeName: name } of records) {
      if (!name.includes('.')) continue;
      values[name] = this.hasAttribute(name) ? number(this.getAttribute(name)) : get(this.#schema.defaults, name);
    }
    if (Object.keys(values).length > 0) this.settings = values;
  });

  constructor() {
    super();
    this.attachShadow({ mode: 'open' }).adoptedStyleSheets = [labSheet, fleetSheet];
    // `settings` set before this element was defined: taken as pending (over the markup's
    // attributes), or its TypeError is shown once set up.
    this.#early = upgrade(this, 'settings')?.error ?? null;
  }

  connectedCallback() {
    if (this.ready) return;
    this.ready = this.#init();
    this.ready.catch(() => {}); // shown on the lab; rejected for whoever awaits it
  }

  async #init() {
    try {
      this.#fleet = await loadLater();
    } catch (err) {
      this.shadowRoot.textContent = `The fleet simulator could not be loaded: ${err.message ?? err}`;
      throw err;
    }
    this.#schema = this.#fleet.fleetSchema();
    const root = this.shadowRoot;
    root.innerHTML = markup(this.#schema);
    this.settings = { ...this.#attributes(), ...this.#pending };
    if (this.#early) this.#refused(this.#early);
    this.#watch.observe(this, { attributes: true });
    this.#$('signal').addEventListener('change', () => this.#signalChanged(true));
    this.#$('play').addEventListener('click', () => this.play().catch(() => {})); // named on the lab
    this.#$('pin').addEventListener('click', () => this.pin());
    new ResizeObserver(() => this.#redraw()).observe(root.querySelector('.charts'));
    this.#dark.addEventListener('change', () => this.#redraw());
    this.dataset.ready = 'true';
  }

  #$(id) {
    return this.shadowRoot.getElementById(id);
  }

  /** The schema's day with this element's config-path attributes laid over it. */
  #attributes() {
    const out = {};
    for (const { name, value } of this.attributes) if (name.includes('.')) out[name] = number(value);
    return out;
  }

  /** The settings as config paths: the controls' paths and any other path set before. */
  get settings() {
    return Object.fromEntries(Object.keys(FIELDS).map((p) => [p, get(this.config(), p)]));
  }

  /**
   * Sets values by config path (`{'autoscaler.signal': 'gpu_util'}`; `undefined` drops a path
   * set before); a signal brings its thresholds. What the engine refuses is named at once.
   */
  set settings(values) {
    if (values == null || typeof values !== 'object' || Array.isArray(values)) {
      throw Object.assign(new TypeError("settings: expected an object of config paths, as { 'router.policy': 'round_robin' }"), { path: 'settings' });
    }
    if (!this.#schema) {
      Object.assign(this.#pending, values);
      return;
    }
    this.#config ??= structuredClone(this.#schema.defaults);
    const given = undropped(values, this.#schema.defaults);
    if ('autoscaler.signal' in given) {
      set(this.#config, 'autoscaler.signal', given['autoscaler.signal']);
      this.#signalChanged(false); // its thresholds, unless given too
    }
    for (const path of Object.keys(given)) this.#bad.delete(path);
    for (const err of lay(this.#config, given)) this.#bad.set(err.path, err);
    for (const [path, id] of Object.entries(FIELDS)) {
      const v = get(this.#config, path);
      this.#$(id).value = path === 'autoscaler.cold_start_s' && typeof v === 'number' ? String(v / 60) : String(v);
    }
    if (this.#check()) this.#markBad();
  }

  /** Names the first number setting that was not a number (the last good value runs meanwhile). */
  #markBad() {
    const [err] = this.#bad.values();
    if (err) this.#refused(err);
  }

  /** Whether the engine takes the config the controls describe; if not, says why where it belongs. */
  #check() {
    try {
      new this.#fleet.FleetLab(this.config()).free();
    } catch (err) {
      if (isTrap(err)) return this.#restart(err);
      this.#refused(err);
      return false;
    }
    markField(this.shadowRoot, null, '');
    if (this.#$('status').dataset.kind === 'error') this.#say('', '');
    if (this.#bad.size === 0) this.#announced = null; // else still standing: not told again
    return true;
  }

  /** Names a refused setting at its control (else in the status line) and tells the page. */
  #refused(err) {
    const message = err.message ?? String(err);
    const marked = markField(this.shadowRoot, err.path, message);
    this.#say(`Not run: ${marked ? 'see the setting marked above' : message}.${this.#totals ? ' The results below are the last good run.' : ''}`, 'error');
    if (this.#totals) this.dataset.stale = '';
    const detail = { path: err.path ?? '', message };
    if (this.#announced === `${detail.path}\n${message}`) return;
    this.#announced = `${detail.path}\n${message}`;
    this.dispatchEvent(new CustomEvent('kneelab-error', { detail, bubbles: true, composed: true }));
  }

  #say(text, kind) {
    const status = this.#$('status');
    status.textContent = text;
    if (kind) status.dataset.kind = kind;
    else status.removeAttribute('data-kind');
  }

  /** A signal's own thresholds and unit; with `fromControl`, the select's choice is taken. */
  #signalChanged(fromControl) {
    if (fromControl) set(this.#config, 'autoscaler.signal', this.#$('signal').value);
    const info = this.#schema.signals.find((s) => s.name === get(this.#config, 'autoscaler.signal'));
    if (!info) return;
    set(this.#config, 'autoscaler.scale_up', info.scale_up);
    set(this.#config, 'autoscaler.scale_down', info.scale_down);
    this.#$('scale-up').value = String(info.scale_up);
    this.#$('scale-down').value = String(info.scale_down);
    for (const id of ['scale-up', 'scale-down']) Object.assign(this.#$(id), { max: info.max, step: info.step });
    for (const u of this.shadowRoot.querySelectorAll('[data-unit]')) u.textContent = info.unit ? `(${info.unit})` : '';
  }

  /** The config the controls describe (what Play runs). */
  config() {
    const c = structuredClone(this.#config);
    for (const [path, id] of Object.entries(FIELDS)) {
      const text = this.#$(id).value;
      // A select shows no option for a name it does not offer: the name set stays, for the engine to refuse.
      const v = CHOICES.includes(id) ? text || get(this.#config, path) : number(text);
      set(c, path, path === 'autoscaler.cold_start_s' && typeof v === 'number' ? v * 60 : v);
    }
    return c;
  }

  /** The last good run's totals (null before one). */
  get totals() {
    return this.#totals;
  }

  /** The pinned run's totals (null when none). */
  get pinned() {
    return this.#pinned?.totals ?? null;
  }

  /**
   * Plays the day the controls describe; resolves to its totals, or null if a newer play or a
   * crash replaced it. Rejects with the engine's Error (its `path` names the setting) if the
   * config is refused; the last good run stays on show.
   */
  async play() {
    if (!this.ready) throw new Error('<fleet-lab> plays once it is in the document');
    await this.ready;
    const run = ++this.#run;
    const config = this.config();
    markField(this.shadowRoot, null, '');
    const status = this.#$('status');
    status.removeAttribute('data-kind');
    let result;
    try {
      result = await runSliced(this.#fleet, config, {
        onSlice: (lab) => {
          if (this.#lab !== lab) {
            this.#lab?.free();
            this.#lab = lab;
            delete this.dataset.stale;
          }
          this.#$('progress').value = lab.progress();
          status.textContent = `Playing the day: ${this.#fleet.formatPercent(lab.progress())} simulated…`;
          this.#redraw();
        },
        isCancelled: () => run !== this.#run,
      });
    } catch (err) {
      if (err?.cancelled) return null;
      if (isTrap(err)) return this.#restart(err);
      this.#refused(err);
      throw err;
    }
    this.#totals = result.totals;
    fillBoard(this.#$('current'), result.totals, describePolicy(this.#schema, config), this.#schema.attainment_target, this.#fleet);
    this.#markBad();
    this.#$('pin').disabled = false;
    status.textContent = '';
    this.dispatchEvent(new CustomEvent('fleet-run', { detail: { totals: result.totals, config }, bubbles: true, composed: true }));
    return result.totals;
  }

  /** After a trap: a fresh module, the dead run's charts dropped, and the reader told. */
  async #restart(err) {
    discardLater();
    this.#lab = null;
    this.dataset.stale = '';
    const status = this.#$('status');
    status.dataset.kind = 'error';
    status.textContent = `The fleet simulator crashed (${err.message}); restarting it…`;
    this.#fleet = await loadLater();
    status.textContent = 'The fleet simulator crashed and has restarted: play the day again.';
    return null;
  }

  /** Keeps the current scoreboard beside the next run's. */
  pin() {
    if (!this.#totals) return;
    const policy = this.#$('current').querySelector('.policy').textContent;
    this.#pinned = { totals: this.#totals, policy };
    fillBoard(this.#$('pinned'), this.#totals, policy, this.#schema.attainment_target, this.#fleet);
  }

  /** Redraws the charts on the next frame. */
  #redraw() {
    if (this.#dirty || !this.#lab) return;
    this.#dirty = true;
    requestAnimationFrame(() => {
      this.#dirty = false;
      const theme = this.getAttribute('theme');
      const dark = theme === 'dark' || (theme !== 'light' && this.#dark.matches);
      for (const name of CHARTS) {
        const canvas = this.shadowRoot.querySelector(`[data-chart="${name}"] canvas`);
        try {
          if (this.#lab?.draw(name, canvas, dark)) canvas.dataset.drawn = 'true';
        } catch (err) {
          if (isTrap(err)) this.#restart(err);
          else this.#$('status').textContent = `The chart could not be drawn: ${err.message}`;
          return;
        }
      }
    });
  }
}

if (!customElements.get('fleet-lab')) customElements.define('fleet-lab', FleetLabElement);
