// The replica player: <knee-lab>'s `replica` panel. It plays the engine's own step trace (the
// wasm `ReplicaPlayer`: the very run the lab's readouts come from, traced a window of iterations
// at a time), one engine iteration after another, drawn by kneelab-plot's replica chart: the
// waiting queue, the `--max-num-seqs` seats, the step's token budget split into decode and
// prefill-chunk tokens, the KV cache, each request's TTFT clock, and the queue over the whole run
// as a strip with the shown step marked.
//
// Play and pause, one iteration forward or back, a speed in simulated seconds per real second, a
// scrubber, and jumps to the next preemption and to the longest step. Keyboard: on the picture,
// Space plays or pauses, the arrow keys step, Home and End go to either end; the buttons, the
// speed and the scrubber are ordinary controls. It plays on its own once it is on screen, unless
// the reader prefers reduced motion (then it waits for Play; stepping works the same).

import SCHEMA from '../pkg/kneelab_schema.js';
import { formatPercent, formatSeconds } from './format.js';

const OPTIONS = SCHEMA.replica;
/** The panel's name in a lab's `panels`. */
export const PLAYER_PANEL = OPTIONS.panel;

const count = (n) => Math.round(n).toLocaleString('en-US');
const plural = (n, one, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;
const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');
/** Real time a frame may advance the clock by: a tab that was away does not leap ahead. */
const MAX_FRAME_S = 0.1;
/** The scrubber's positions over the run. */
const SCRUB_STEPS = 1000;

/** The panel's markup, inside a lab's `.charts`. */
export function playerMarkup() {
  const speeds = OPTIONS.speeds
    .map((s) => `<option value="${s}"${s === OPTIONS.speed ? ' selected' : ''}>${s === 1 ? '1 (real time)' : s}</option>`)
    .join('');
  const fact = (name, label) => `<div><dt>${label}</dt><dd data-player="${name}">—</dd></div>`;
  return `
    <figure data-panel="${PLAYER_PANEL}" class="wide player">
      <canvas id="chart-${PLAYER_PANEL}" role="img" tabindex="0"
              aria-label="The replica, one engine iteration at a time" aria-describedby="replica-keys"></canvas>
      <div class="player-controls" role="group" aria-label="Replica player">
        <button type="button" id="replica-play">Play</button>
        <button type="button" id="replica-back" aria-label="One iteration back">‹</button>
        <button type="button" id="replica-step">One iteration ›</button>
        <label class="speed" for="replica-speed">Speed <span class="hint">(simulated s per real s)</span></label>
        <select id="replica-speed">${speeds}</select>
        <button type="button" id="replica-preemption">Next preemption</button>
        <button type="button" id="replica-longest">Longest step</button>
        <input type="range" id="replica-scrub" min="0" max="${SCRUB_STEPS}" step="1" value="0" aria-label="Time in the run">
      </div>
      <dl class="player-now" id="replica-now">
        ${fact('index', 'Engine step')}${fact('time', 'Starts at')}${fact('duration', 'Step time')}
        ${fact('tokens', 'Tokens: decode + prefill of the budget')}${fact('seats', 'Seats used')}
        ${fact('waiting', 'num_requests_waiting')}${fact('kv', 'KV cache used')}${fact('events', 'In this step')}
      </dl>
      <p class="hint" id="replica-keys">On the picture: Space plays or pauses, ← and → step one iteration, Home and End jump to either end.</p>
      <figcaption>The replica at the slider's load, one engine iteration at a time: the very run the readouts come from,
        start to end. Circles wait; striped squares prefill a chunk of their prompt; solid squares decode one token each;
        a ring around a request is its TTFT clock, closing at the SLO and thick once past it.
        <span id="replica-summary"></span> <span id="replica-note" role="status"></span></figcaption>
    </figure>`;
}

/** The shadow DOM rules for the panel (added to the lab's sheet). */
export const PLAYER_CSS = `
.player-controls { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-top: 8px; }
.player-controls button { font: inherit; font-size: 14px; color: var(--kl-fg); background: var(--kl-panel);
  border: 1px solid var(--kl-line); border-radius: 6px; padding: 4px 10px; min-height: 34px; cursor: pointer; }
.player-controls button[data-playing] { background: var(--kl-accent); color: var(--kl-bg); }
.player-controls button:disabled { opacity: 0.5; cursor: default; }
.player-controls .speed { font-size: 14px; font-weight: 600; }
.player-controls select { width: auto; }
.player-controls input[type=range] { flex: 1 1 100%; min-width: 0; height: 28px; accent-color: var(--kl-accent); }
.player-now { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 4px 12px; margin: 8px 0 0; }
.player-now dt { font-size: 12.5px; color: var(--kl-muted); }
.player-now dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
figure.player canvas { height: 380px; }
@container (max-width: 560px) { figure.player canvas { height: 410px; } .player-now { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
`;

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
  #speed = OPTIONS.speed;
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
    const el = (id) => root.getElementById(id);
    el('replica-play').addEventListener('click', () => (this.#playing ? this.pause(true) : this.play()));
    el('replica-step').addEventListener('click', () => this.step(1));
    el('replica-back').addEventListener('click', () => this.step(-1));
    el('replica-preemption').addEventListener('click', () => this.jump('preemption'));
    el('replica-longest').addEventListener('click', () => this.jump('longest'));
    el('replica-speed').addEventListener('change', (e) => (this.#speed = Number(e.target.value)));
    el('replica-scrub').addEventListener('input', (e) => {
      this.pause(true);
      this.seekTime((Number(e.target.value) / SCRUB_STEPS) * this.#endS);
    });
    el(`chart-${PLAYER_PANEL}`).addEventListener('keydown', (e) => this.#key(e));
    new IntersectionObserver((entries) => {
      this.#visible = entries.some((e) => e.isIntersecting);
      if (!this.#visible) this.pause(false);
      else this.#autoplay();
    }).observe(el(`chart-${PLAYER_PANEL}`));
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
    this.#el('replica-preemption').disabled = source.nextPreemption(-1) < 0;
    this.#el('replica-summary').textContent = this.#summary();
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
    this.#showPlaying();
    this.#frame ||= requestAnimationFrame((t) => this.#tick(t));
  }

  /** Pauses; `byReader` keeps it paused until the reader plays again. */
  pause(byReader) {
    if (byReader) this.#userPaused = true;
    if (!this.#playing) return;
    this.#playing = false;
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    this.#showPlaying();
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
      this.#el('replica-note').textContent = 'No preemption after this step: the KV cache holds the batch.';
      return;
    }
    this.seekTime(at);
  }

  /** Draws the shown iteration again (a resize, a theme change, a new position). */
  redraw() {
    if (!this.#source || this.length === 0) return;
    const canvas = this.#el(`chart-${PLAYER_PANEL}`);
    const [chrome, dark] = this.#colours();
    try {
      this.#source.draw(canvas, dark, chrome, this.#index, this.#phase);
      if (this.#described !== this.#starts[this.#index]) this.#describe();
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
      this.#el('replica-note').textContent = 'The end of the run: Play starts over.';
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
    this.#el('replica-note').textContent = '';
    this.redraw();
  }

  #autoplay() {
    if (this.#visible && !this.#userPaused && !reducedMotion.matches && this.#source) this.play();
    else this.redraw();
  }

  #key(e) {
    const toggle = () => (this.#playing ? this.pause(true) : this.play());
    const keys = {
      ' ': toggle,
      k: toggle,
      ArrowRight: () => this.step(1),
      ArrowLeft: () => this.step(-1),
      Home: () => (this.pause(true), this.seekTime(0)),
      End: () => (this.pause(true), this.seekTime(this.#endS)),
    };
    const act = keys[e.key];
    if (!act || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    act();
  }

  /** The shown iteration's numbers, as text beside the picture. */
  #describe() {
    const s = this.#source.step(this.#index);
    this.#described = s.t_s;
    const set = (name, text) => (this.#root.querySelector(`[data-player="${name}"]`).textContent = text);
    set('index', `${count(s.index)} of ${count(this.#source.totalSteps)}`);
    set('time', `${formatSeconds(s.t_s)} into the run`);
    set('duration', formatSeconds(s.duration_s));
    set('tokens', `${count(s.decode_tokens)} + ${count(s.prefill_tokens)} of ${count(s.max_num_batched_tokens)}`);
    set('seats', `${count(s.seats.length)} of ${count(s.max_num_seqs)}`);
    set('waiting', count(s.waiting));
    set('kv', formatPercent(s.kv_blocks > 0 ? s.kv_blocks_used / s.kv_blocks : 0));
    const events = [
      [s.arrived.length, 'arrived'],
      [s.admitted.length, 'admitted'],
      [s.completed.length, 'finished'],
      [s.preempted.length, 'preempted'],
    ].filter(([n]) => n > 0);
    set('events', events.length ? events.map(([n, what]) => `${count(n)} ${what}`).join(', ') : 'nothing joined or left');
    const scrub = this.#el('replica-scrub');
    scrub.value = String(Math.round((s.t_s / (this.#endS || 1)) * SCRUB_STEPS));
    scrub.setAttribute('aria-valuetext', `${formatSeconds(s.t_s)} into the run, ${plural(s.waiting, 'request')} waiting`);
    this.#el(`chart-${PLAYER_PANEL}`).setAttribute(
      'aria-label',
      `The replica at engine step ${count(s.index)}: ${count(s.seats.length)} of ${count(s.max_num_seqs)} seats taken, ` +
        `${plural(s.waiting, 'request')} waiting, ${count(s.decode_tokens)} decode and ${count(s.prefill_tokens)} prefill ` +
        `tokens in a step of ${formatSeconds(s.duration_s)}.`,
    );
  }

  /** What the run shows of the queue, from the engine's numbers. */
  #summary() {
    const q = this.#source.queue();
    const run = `This run lasts ${formatSeconds(this.#endS)} and ${plural(this.#source.totalSteps, 'engine step')}.`;
    if (q.peak === 0) return `${run} No request waited in it.`;
    const peak = `The queue peaked at ${plural(q.peak, 'request')} ${formatSeconds(q.peak_s)} in`;
    if (q.emptied_after_peak)
      return `${run} ${peak} and emptied again: it was empty after ${formatPercent(q.empty_steps / q.steps)} of the steps before the last arrival.`;
    return `${run} ${peak} and, until the last request arrived, never emptied after its peak: ${plural(q.last, 'request')} waited then.`;
  }

  #showPlaying() {
    const button = this.#el('replica-play');
    button.textContent = this.#playing ? 'Pause' : 'Play';
    button.toggleAttribute('data-playing', this.#playing);
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

  #el(id) {
    return this.#root.getElementById(id);
  }
}
