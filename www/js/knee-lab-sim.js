// A lab's handle on the simulator: the wasm module (shared by every lab on the page, see
// wasm.js) and the lab's own `Lab` on it. If the module crashes (a trap), every lab's handle
// notices, on its next call or when another lab discards the instance, and restarts on a fresh
// instance; the element keeps its last charts meanwhile.

import { discardKneelab, isTrap, kneelabGeneration, kneelabNote, loadKneelab } from './wasm.js';
import { inSlices } from './schedule.js';

/** Attempts at a fresh instance before a lab gives up. */
const ATTEMPTS = 3;
/** Wall time one slice of a sweep may take, in ms. */
const SLICE_MS = 12;

export class Simulator {
  /** The wasm module, once loaded. */
  wasm = null;
  /** This lab's `Lab` on it, or null (not loaded, released, or being replaced). */
  lab = null;
  /** The wasm instance (kneelabGeneration) `lab` belongs to. */
  generation = -1;
  /** Whether `lab` has accepted a config (a new `Lab` has none: it can draw nothing yet). */
  configured = false;
  /** True while a crashed simulator is being replaced. */
  restarting = false;
  /** Whether a sweep is running. */
  sweeping = false;
  /** Whether the current model's capacity is known; until it is, the sweep's slices measure it. */
  measured = true;
  #sweepGeneration = 0;
  #hooks;
  /** Said before the sweep's progress after a restart, until that sweep is done. */
  #restartNote = '';

  /**
   * `hooks.stop()` drops the work in flight when a restart begins; `hooks.status(text, kind)`
   * says what is happening; `hooks.restarted(ok)` follows a restart (`ok`: a new `Lab` is ready).
   */
  constructor(hooks) {
    this.#hooks = hooks;
  }

  /** Loads the module; throws if it cannot be loaded. */
  async load() {
    this.wasm = await loadKneelab();
  }

  /** Makes a `Lab` on the loaded module (the caller configures it at once); throws if that fails. */
  open() {
    this.generation = kneelabGeneration();
    this.lab = new this.wasm.Lab();
    this.configured = false;
  }

  /** A new `Lab` on the loaded module (after `release`); false, and a restart begun, if that fails. */
  renew() {
    try {
      this.lab = new this.wasm.Lab();
      this.generation = kneelabGeneration();
      this.configured = false;
      return true;
    } catch {
      this.restart();
      return false;
    }
  }

  /** Whether `lab` belongs to an instance that has since been discarded. */
  get orphaned() {
    return this.lab != null && this.generation !== kneelabGeneration();
  }

  /** Gives the `Lab`'s memory back. */
  release() {
    const dead = this.lab;
    this.lab = null;
    try {
      // Off the instance's finalizer list, so it is never called into again.
      dead?.free();
    } catch {
      // A dead instance's Lab: nothing to give back.
    }
  }

  /** False (and a restart begun) if `lab`'s instance has been discarded. */
  alive() {
    if (!this.lab || this.restarting) return false;
    if (this.generation === kneelabGeneration()) return true;
    this.restart();
    return false;
  }

  /**
   * Whether `err` (thrown by a call into the wasm) means the simulator crashed: a trap, or any
   * error from an instance another lab has seen crash. Then it is replaced; the caller stops.
   */
  crashed(err) {
    if (!isTrap(err) && this.generation === kneelabGeneration()) return false;
    discardKneelab(this.generation); // a no-op if another lab or call got there first
    this.restart();
    return true;
  }

  /** `fn()` (a call into the wasm), or `fallback` if the simulator crashed in it. */
  call(fn, fallback) {
    if (!this.alive()) return fallback;
    try {
      return fn();
    } catch (err) {
      if (this.crashed(err)) return fallback;
      throw err;
    }
  }

  /** Stops the sweep in flight (a newer change takes over). */
  cancelSweep() {
    this.#sweepGeneration++;
    this.sweeping = false;
  }

  /**
   * Sweeps the current config a slice at a time, saying how far it got in the status line:
   * `progress({ done, total })` after each slice that leaves work, `measured()` once the capacity
   * is known, `done(err)` at the end (`err`: the engine's, if it refused). A crash restarts
   * instead; a newer sweep stops this one.
   */
  sweep({ measured, progress, done }) {
    const generation = ++this.#sweepGeneration;
    this.measured = this.call(() => this.lab.sweepProgress().measured, true);
    this.sweeping = true;
    const say = (text) => this.#hooks.status(`${this.#restartNote}${text}`);
    const end = (err) => {
      this.sweeping = false;
      this.#restartNote = '';
      this.#hooks.status(err ? '' : kneelabNote());
      done(err);
    };
    say('Measuring the replica’s capacity…');
    inSlices(() => this.lab.sweepStep(), {
      sliceMs: SLICE_MS,
      current: () => generation === this.#sweepGeneration && this.alive(),
      after: (more) => {
        const p = this.lab.sweepProgress();
        if (!this.measured && p.measured) {
          this.measured = true;
          measured();
        }
        if (!more) return end(null);
        say(`Sweeping offered load: ${p.done} of ${p.total} points…`);
        progress(p);
      },
      fail: (err) => {
        if (this.crashed(err)) return;
        end(err);
      },
    });
  }

  /** Replaces a crashed simulator: a fresh wasm instance and a new `Lab`. */
  async restart() {
    if (this.restarting) return;
    this.restarting = true;
    this.#hooks.stop();
    this.release();
    this.#hooks.status('The simulator crashed; restarting it…', 'error');
    let lastError = null;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        this.wasm = await loadKneelab();
        const gen = kneelabGeneration();
        this.lab = new this.wasm.Lab();
        this.configured = false;
        this.generation = gen;
        lastError = null;
        break;
      } catch (err) {
        lastError = err;
        if (isTrap(err)) discardKneelab(kneelabGeneration());
      }
    }
    this.restarting = false;
    if (lastError) {
      const why = lastError.message ?? lastError;
      this.#hooks.status(`The simulator crashed and could not be restarted (${why}). Reload the page to try again.`, 'error');
      // Never a silent death: the page says so too, for a host page or a test to see.
      document.documentElement.dataset.ready = 'error';
    } else {
      this.#hooks.status('');
      this.#restartNote = 'The simulator crashed and was restarted. ';
    }
    this.#hooks.restarted(!lastError);
  }
}
