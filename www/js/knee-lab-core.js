// <knee-lab>'s core: a lab's state, its handle on the simulator and what a change re-runs. A
// load change re-runs one point, once per animation frame; any other change re-measures the
// capacity and re-sweeps, a few thousand engine steps a call (schedule.js); an SLO change re-judges.
// The element (knee-lab.js) forwards its attributes and script API here.

import { kneelabNote } from './wasm.js';
import { chartColours } from './knee-lab-style.js';
import { DEFAULT_STATE, LISTS, configOf, merged } from './knee-lab-settings.js';
import { sayLater, showReadouts } from './knee-lab-words.js';
import { Painter } from './knee-lab-paint.js';
import { Alerts, syncControls, unreadable } from './knee-lab-controls.js';
import { Simulator } from './knee-lab-sim.js';
import { shownSteady, wireSteady } from './knee-lab-steady.js';
import { PlayerFeed } from './replica-feed.js';
import { Once, Waiters, pushCapped } from './schedule.js';

export class LabCore {
  #host;
  #root;
  /** The lab's settings (what the controls show). */
  state = { ...DEFAULT_STATE };
  /** The panels shown. */
  panels = [...LISTS.panels.fallback];
  /** The latest readouts, keyed by data-metric name. */
  readouts = {};
  sim = new Simulator({
    stop: () => this.#stop(),
    status: (text, kind) => this.setStatus(text, kind),
    restarted: (ok) => this.#restarted(ok),
  });
  alerts;
  /** The replica player's feed (replica-feed.js). */
  feed;
  /** A state change made while disconnected, to apply on the next connect. */
  pendingApply = false;
  /** When the slider's input began, until its readouts show. */
  inputAt = null;
  /** Latencies in ms: `input` (slider to readout), `param` (change to all charts), `player` (its trace). */
  timings = { input: [], param: [], player: [] };
  #frame = 0;
  #painter;
  #paramAt = null;
  /** Whether the next frame re-reads the readouts (else it only draws what the last one left). */
  #fresh = false;
  #pointDirty = false;
  /** True until the first config has been tried (and while the simulator loads). */
  #starting = true;
  /** What `idle()` and `pointSettled()` wait for, tried again at each `settle`. */
  #waiters = new Waiters();
  /** The element's `ready`, as its `promise`. */
  ready = new Once();

  constructor(host, root) {
    this.#host = host;
    this.#root = root;
    this.alerts = new Alerts(host, root);
    this.feed = new PlayerFeed(host, root, this);
    this.#painter = new Painter(host, root, this);
    wireSteady(this, root);
  }

  /** Whether the point is still changing: it is to be re-run, or waits for the capacity. */
  get busy() {
    return this.#pointDirty || (this.sim.sweeping && !this.sim.measured);
  }

  /** Resolves when no sweep or point is pending (and no crashed simulator is being replaced). */
  idle() {
    return this.#waiters.until(() => this.isIdle());
  }

  /** Resolves once the point has run on a measured capacity (its sweep may go on). */
  async pointSettled() {
    await this.#waiters.until(() => !this.#starting && !this.sim.restarting && !this.busy);
    if (this.loadError) throw this.loadError; // no simulator to ask: not the '' of no load
  }

  /** Redraws if the host's colours are not those the charts were drawn in. */
  recolour() {
    if (chartColours(this.#host).join() !== this.#painter.colours) this.scheduleFrame();
  }

  /** The simulator could not be loaded: `ready` rejects with `err`. */
  failed(err) {
    this.loadError = err; // what the element's promises then reject with
    this.setStatus(`The simulator failed to load: ${err.message ?? err}`, 'error');
    this.#starting = false;
    this.ready.reject(err);
    this.settle();
  }

  /** Removed from the page: gives the simulator's memory back (a new Lab comes on the next connect). */
  release() {
    if (!this.sim.lab || this.sim.restarting) return;
    this.#stop();
    sayLater(this.#root, null);
    this.sim.release();
    this.pendingApply = true;
    this.settle();
  }

  /** Drops the work in flight: the sweep, the point, the frame and the player's trace. */
  #stop() {
    this.#host.setAttribute('data-busy', ''); // until `settle` finds nothing left
    this.sim.cancelSweep();
    this.#pointDirty = false;
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    this.feed.drop();
  }

  #restarted(ok) {
    if (ok) {
      if (this.#host.isConnected) this.applyConfig();
      else this.pendingApply = true; // applied on the next connect
    }
    this.settle();
  }

  update(partial, { fromUser }) {
    const next = merged(this.state, partial);
    this.state = next;
    this.alerts.forget(partial); // a setting changed some other way is no longer a bad attribute's to report
    syncControls(this.#root, next);
    if (!this.#host.isConnected || !this.sim.lab || this.sim.restarting) {
      if (!this.#host.isConnected) this.pendingApply = true; // applied when connected, loaded or restarted
      return;
    }
    const keys = Object.keys(partial);
    // Until a config is accepted every change tries the whole of it again.
    if (!this.sim.configured) this.applyConfig();
    else if (keys.every((k) => k === 'latencyScale')) this.scheduleFrame(); // a redraw: nothing to simulate
    else if (keys.every((k) => k === 'load')) this.#setLoad(next.load);
    else this.applyConfig();
    if (fromUser) this.#host.dispatchEvent(new CustomEvent('kneelab-change', { detail: { ...next }, bubbles: true, composed: true }));
  }

  applyConfig() {
    this.alerts.clearAll();
    if (!this.sim.alive()) return;
    const bad = unreadable(this.state);
    for (const [id, message] of bad) this.alerts.set(id, message);
    if (bad.length > 0) return this.#settleStart();
    try {
      this.sim.lab.setConfig(configOf(this.state));
      this.sim.configured = true;
      this.#host.removeAttribute('data-blank');
    } catch (err) {
      if (this.sim.crashed(err)) return;
      this.alerts.showError(err);
      return this.#settleStart(err);
    }
    this.#starting = false;
    this.#paramAt ??= performance.now();
    this.#startSweep();
    // A refused load leaves the last good one: the new config's point runs at that.
    const refused = this.#setLoad(this.state.load);
    if (refused) {
      this.#pointDirty = true;
      this.scheduleFrame();
      this.#settleReady(refused);
    }
  }

  /** Sets the point's load; returns the engine's Error if it refused it (shown by the slider). */
  #setLoad(load) {
    if (!this.sim.alive()) return null;
    try {
      this.sim.lab.setLoad(load);
    } catch (err) {
      if (this.sim.crashed(err)) return null;
      this.alerts.showError(err);
      return err;
    }
    this.alerts.clear('offered-load');
    this.#pointDirty = true;
    this.scheduleFrame();
    return null;
  }

  /** A config was refused (`err`, if the engine said why): `ready` rejects if it was the first. */
  #settleStart(err) {
    if (!this.sim.configured) {
      this.#host.setAttribute('data-blank', '');
      this.setStatus(kneelabNote());
    }
    this.#starting = false;
    this.#settleReady(err ?? new Error(this.#root.querySelector('.error:not(:empty)')?.textContent ?? 'a setting is invalid'));
    this.settle();
  }

  /**
   * Settles `ready` once: rejected with `err`, or with the first attribute that could not be read
   * (an Error whose `path` is the attribute's name); resolved otherwise. The lab runs on either way.
   */
  #settleReady(err) {
    if (this.ready.settled) return;
    const [name, message] = this.alerts.attributes.entries().next().value ?? [];
    err ??= name && Object.assign(new Error(message), { path: name });
    return err ? this.ready.reject(err) : this.ready.resolve();
  }

  isIdle() {
    return !this.#starting && !this.sim.restarting && !this.sim.sweeping && !this.#pointDirty && !this.#frame;
  }

  settle() {
    if (this.isIdle()) this.#host.removeAttribute('data-busy');
    this.#waiters.check();
  }

  /** Redraws on the next frame (`fresh`: with the readouts; else only the panels left undrawn). */
  scheduleFrame(fresh = true) {
    if (!this.sim.lab || !this.sim.configured) return; // nothing to draw yet (or a restart will draw)
    this.#fresh ||= fresh;
    this.#host.setAttribute('data-busy', '');
    this.#frame ||= requestAnimationFrame(() => {
      this.#frame = 0;
      this.#render();
      this.settle();
    });
  }

  #startSweep() {
    let lastDraw = performance.now();
    this.#host.setAttribute('data-busy', '');
    this.sim.sweep({
      measured: () => this.scheduleFrame(), // the point that waited for the capacity
      // Draw the curves as they fill in, but not every slice: on a fast machine the whole
      // sweep takes about as long as a few redraws.
      progress: () => {
        if (performance.now() - lastDraw > 100) {
          lastDraw = performance.now();
          this.scheduleFrame();
        }
      },
      done: (err) => {
        if (err) this.alerts.showError(err);
        this.scheduleFrame(); // with an error: a point left waiting for the capacity
        this.settle();
      },
    });
  }

  #render() {
    const sim = this.sim;
    const started = performance.now();
    if (!sim.alive()) return;
    if (this.#fresh && !this.#readReadouts()) return;
    if (!this.#painter.draw(started)) return;
    if (this.#painter.pending) return this.scheduleFrame(false);
    if (this.#paramAt != null && !this.sim.sweeping) {
      pushCapped(this.timings.param, performance.now() - this.#paramAt);
      this.#paramAt = null;
      this.#settleReady();
    }
    const detail = { readouts: { ...this.readouts }, state: { ...this.state }, sweepDone: !this.sim.sweeping };
    this.#host.dispatchEvent(new CustomEvent('kneelab-update', { detail, bubbles: true, composed: true }));
  }

  /** Runs the point if it changed and shows the readouts; false if there is nothing to draw yet. */
  #readReadouts() {
    const sim = this.sim;
    try {
      if (this.#pointDirty) {
        // Measuring the capacity in one go would be a long task: the sweep's slices do it.
        if (this.sim.sweeping && !this.sim.measured) return; // see `busy`
        this.#pointDirty = false;
        this.readouts = sim.lab.runPoint();
        this.feed.stale = true;
      } else {
        this.readouts = sim.lab.readouts();
      }
      Object.assign(this.readouts, shownSteady(this)?.readouts);
    } catch (err) {
      if (!sim.crashed(err)) this.alerts.showError(err);
      return false;
    }
    this.#fresh = false;
    this.showReadouts();
    if (this.inputAt != null) {
      pushCapped(this.timings.input, performance.now() - this.inputAt);
      this.inputAt = null;
    }
    this.#painter.redrawAll();
    return true;
  }

  showReadouts() {
    showReadouts(this.#root, this.state, this.readouts, shownSteady(this)?.usual);
    sayLater(this.#root, this.state, this.readouts);
  }

  setStatus(text, kind = 'info') {
    const status = this.#root.getElementById('status');
    status.textContent = text;
    status.dataset.kind = kind;
  }
}
