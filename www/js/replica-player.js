// The replica player: <knee-lab>'s `replica` panel. It plays the engine's own step trace (the
// wasm `ReplicaPlayer`: the very run the lab's readouts come from, traced a window of iterations
// at a time), one engine iteration after another, drawn by kneelab-plot's replica chart. It plays
// on its own once it is on screen, unless the reader prefers reduced motion (then it waits for
// Play; stepping works the same). Its controls, keys and words are in replica-player-controls.js.

import { OPTIONS, PLAYER_PANEL } from './replica-player-view.js';
import { describeStep, runSummary, showPlaying, wirePlayer } from './replica-player-controls.js';

const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');
/** Real time a frame may advance the clock by: a tab that was away does not leap ahead. */
const MAX_FRAME_S = 0.1;

/**
 * Plays a wasm `ReplicaPlayer` in a lab's shadow root. `colours()` gives `[chrome, dark]` for
 * drawing; `onError(err)` handles an error from the simulator (a crash included).
 */
export class ReplicaPlayer {
  #root;
  #colours;
  #onError;
  #source = null;
  /** The traced window: its iterations' starts and durations (simulated s). */
  #starts = [];
  #durations = [];
  #endS = 0;
  #index = 0;
  #phase = 1;
  #clock = 0; // simulated seconds into the run
  #speed;
  #playing = false;
  #userPaused = false;
  #visible = false;
  #frame = 0;
  #last = 0;
  #described = null;
  /** Measured: script time of each played frame, in ms (the newest 600). */
  timings = { frame: [] };

  constructor(root, { colours, onError }) {
    this.#root = root;
    this.#colours = colours;
    this.#onError = onError;
    this.#speed = Number(root.getElementById('replica-speed').value) || OPTIONS.speed; // as chosen before it loaded
    wirePlayer(root, this);
    new IntersectionObserver((entries) => {
      this.#visible = entries.some((e) => e.isIntersecting);
      if (!this.#visible) this.pause(false);
      else this.#autoplay();
    }).observe(root.getElementById(`chart-${PLAYER_PANEL}`));
  }

  /** Simulated seconds played per real second. */
  set speed(value) {
    this.#speed = value;
  }

  /** Whether a run is loaded. */
  get loaded() {
    return this.#source != null;
  }

  /** The shown iteration's place in the traced window. */
  get index() {
    return this.#index;
  }

  /** Iterations in the traced window. */
  get length() {
    return this.#starts.length;
  }

  /** Engine iterations in the whole run. */
  get totalSteps() {
    return this.#source?.totalSteps ?? 0;
  }

  /** When the run ends, in simulated seconds. */
  get endS() {
    return this.#endS;
  }

  get playing() {
    return this.#playing;
  }

  /** The shown iteration as the engine traced it (the wasm `ReplicaPlayer.step` data). */
  stepData(index = this.#index) {
    return this.#source?.step(index) ?? null;
  }

  /** The queue over the whole run (the wasm `ReplicaPlayer.queue`). */
  queue() {
    return this.#source?.queue() ?? null;
  }

  /** Plays `source` (a wasm `ReplicaPlayer`, which this takes over and frees) from its start. */
  setSource(source) {
    this.#free();
    this.#source = source;
    this.#endS = source.endS;
    this.#window();
    this.#root.getElementById('replica-preemption').disabled = source.nextPreemption(-1) < 0;
    this.#root.getElementById('replica-summary').textContent = runSummary(source.queue(), source.totalSteps, this.#endS);
    this.#described = null;
    this.#show(0, 0);
    this.#autoplay();
  }

  /** Drops the run (its simulator is gone or its settings changed). */
  clear() {
    this.pause(false);
    this.#free();
    this.#starts = this.#durations = [];
  }

  play() {
    if (!this.#source || this.#playing) return;
    if (this.#atEnd()) this.seekTime(0, 0); // from the top again
    this.#userPaused = false;
    this.#playing = true;
    this.#last = 0;
    showPlaying(this.#root, this.#playing);
    this.#frame ||= requestAnimationFrame((t) => this.#tick(t));
  }

  /** Pauses; `byReader` keeps it paused until the reader plays again. */
  pause(byReader) {
    if (byReader) this.#userPaused = true;
    if (!this.#playing) return;
    this.#playing = false;
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    showPlaying(this.#root, this.#playing);
  }

  /** Pauses and moves `delta` (1 or -1) iterations, the new one shown complete. */
  step(delta) {
    if (!this.#source) return;
    this.pause(true);
    let i = this.#index + Math.sign(delta);
    if (i >= this.length) {
      if (!this.#nextWindow()) return; // the run's last step
      i = 0;
    } else if (i < 0) {
      const first = this.#starts[0];
      const span = Math.max(this.#starts.at(-1) - first, 1e-3);
      if (!this.#trace(Math.max(0, first - span / 2))) return;
      i = this.#before(first);
      if (i < 0) {
        this.#trace(first); // nothing before it: the run's first step
        i = 0;
      }
    }
    this.#show(i, 1);
  }

  /** Shows the iteration under way at `t_s` (or the next to start), `phase` of the way through. */
  seekTime(t_s, phase = 1) {
    if (!this.#source) return;
    const t = Math.max(0, Math.min(this.#endS, t_s));
    const inWindow = this.length > 0 && t >= this.#starts[0] && t < this.#starts.at(-1) + this.#durations.at(-1);
    if (!inWindow && !this.#trace(t)) return;
    this.#show(Math.max(0, this.#before(t, true)), phase);
  }

  /** Jumps to the next preemption or to the run's longest step, and pauses there. */
  jump(kind) {
    if (!this.#source) return;
    this.pause(true);
    let at;
    try {
      at = kind === 'preemption' ? this.#source.nextPreemption(this.#starts[this.#index]) : this.#source.longestS;
    } catch (err) {
      this.#onError(err);
      return;
    }
    if (at < 0) {
      this.#root.getElementById('replica-note').textContent = 'No preemption after this step: the KV cache holds the batch.';
      return;
    }
    this.seekTime(at);
  }

  /** Draws the shown iteration again (a resize, a theme change, a new position). */
  redraw() {
    if (!this.#source || this.length === 0) return;
    const canvas = this.#root.getElementById(`chart-${PLAYER_PANEL}`);
    const [chrome, dark] = this.#colours();
    try {
      this.#source.draw(canvas, dark, chrome, this.#index, this.#phase);
      if (this.#described !== this.#starts[this.#index]) {
        // The shown iteration's numbers, as text beside the picture.
        const step = this.#source.step(this.#index);
        this.#described = step.t_s;
        describeStep(this.#root, step, this.#source.totalSteps, this.#endS);
      }
    } catch (err) {
      this.pause(false);
      this.#onError(err);
    }
  }

  #tick(now) {
    this.#frame = 0;
    if (!this.#playing) return;
    const began = performance.now();
    const dt = this.#last ? Math.min(MAX_FRAME_S, (now - this.#last) / 1000) : 0;
    this.#last = now;
    this.#clock += dt * this.#speed;
    const end = this.#starts.at(-1) + this.#durations.at(-1);
    if (this.#clock >= end && end < this.#endS) {
      // Past the traced window: trace the next one (a run from the start, a few ms).
      if (!this.#nextWindow()) return this.pause(false);
    }
    while (this.#index + 1 < this.length && this.#clock >= this.#starts[this.#index + 1]) this.#index++;
    const d = this.#durations[this.#index];
    this.#phase = d > 0 ? Math.min(1, Math.max(0, (this.#clock - this.#starts[this.#index]) / d)) : 1;
    this.redraw();
    if (this.timings.frame.push(performance.now() - began) > 600) this.timings.frame.shift();
    if (this.#atEnd()) {
      this.pause(false);
      this.#root.getElementById('replica-note').textContent = 'The end of the run: Play starts over.';
      return;
    }
    if (this.#playing) this.#frame = requestAnimationFrame((t) => this.#tick(t));
  }

  /** Traces the window from `t_s`; false (and the window kept) if there is nothing there. */
  #trace(t_s) {
    try {
      if (this.#source.traceFrom(t_s) === 0) {
        this.#source.traceFrom(this.#starts[0] ?? 0);
        return false;
      }
    } catch (err) {
      this.pause(false);
      this.#onError(err);
      return false;
    }
    this.#window();
    return true;
  }

  /**
   * Traces the window that follows this one: from halfway through its last step, so the next
   * step is the first to start after that, whatever the rounding of its start time.
   */
  #nextWindow() {
    return this.#trace(this.#starts.at(-1) + this.#durations.at(-1) / 2);
  }

  #window() {
    this.#starts = this.#source.startTimes();
    this.#durations = this.#source.durations();
    this.#index = 0;
  }

  /** The last window index starting before `t_s` (at or before, if `atOrBefore`); -1 if none. */
  #before(t_s, atOrBefore = false) {
    let [lo, hi] = [0, this.length - 1];
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.#starts[mid] < t_s || (atOrBefore && this.#starts[mid] === t_s)) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  #atEnd() {
    const i = this.length - 1;
    return this.#index >= i && this.#phase >= 1 && this.#starts[i] + this.#durations[i] >= this.#endS;
  }

  #show(index, phase) {
    this.#index = Math.max(0, Math.min(this.length - 1, index));
    this.#phase = phase;
    this.#clock = this.#starts[this.#index] + phase * this.#durations[this.#index];
    this.#root.getElementById('replica-note').textContent = '';
    this.redraw();
  }

  #autoplay() {
    if (this.#visible && !this.#userPaused && !reducedMotion.matches && this.#source) this.play();
    else this.redraw();
  }

  #free() {
    const dead = this.#source;
    this.#source = null;
    try {
      dead?.free();
    } catch {
      // A crashed simulator's object: nothing to give back.
    }
  }
}
