// The replica player's view: its markup and styles inside a lab's shadow root, its controls, and
// the words beside the picture (each from the engine's own numbers for the shown step or the run).
//
// Play and pause, one iteration forward or back, a speed in simulated seconds per real second, a
// scrubber, and jumps to the next preemption and to the longest step. Keyboard: on the picture,
// Space plays or pauses, the arrow keys step, Home and End go to either end; the buttons, the
// speed and the scrubber are ordinary controls.

import SCHEMA from '../pkg/kneelab_schema.js';
import { formatPercent, formatSeconds } from './format.js';

/** The player's settings: its panel's name, speeds and the speed it starts at. */
export const OPTIONS = SCHEMA.replica;
/** The panel's name in a lab's `panels`. */
export const PLAYER_PANEL = OPTIONS.panel;
/** The scrubber's positions over the run. */
export const SCRUB_STEPS = 1000;

const count = (n) => Math.round(n).toLocaleString('en-US');
const plural = (n, one, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

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

/** Shows step `s` (the wasm `ReplicaPlayer.step` data) of a run of `totalSteps` ending at `endS`. */
export function describeStep(root, s, totalSteps, endS) {
  const set = (name, text) => (root.querySelector(`[data-player="${name}"]`).textContent = text);
  set('index', `${count(s.index)} of ${count(totalSteps)}`);
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
  const scrub = root.getElementById('replica-scrub');
  scrub.value = String(Math.round((s.t_s / (endS || 1)) * SCRUB_STEPS));
  scrub.setAttribute('aria-valuetext', `${formatSeconds(s.t_s)} into the run, ${plural(s.waiting, 'request')} waiting`);
  root.getElementById(`chart-${PLAYER_PANEL}`).setAttribute(
    'aria-label',
    `The replica at engine step ${count(s.index)}: ${count(s.seats.length)} of ${count(s.max_num_seqs)} seats taken, ` +
      `${plural(s.waiting, 'request')} waiting, ${count(s.decode_tokens)} decode and ${count(s.prefill_tokens)} prefill ` +
      `tokens in a step of ${formatSeconds(s.duration_s)}.`,
  );
}

/** What a run shows of the queue (`queue`: the wasm `ReplicaPlayer.queue`), from the engine's numbers. */
export function runSummary(q, totalSteps, endS) {
  const run = `This run lasts ${formatSeconds(endS)} and ${plural(totalSteps, 'engine step')}.`;
  if (q.peak === 0) return `${run} No request waited in it.`;
  const peak = `The queue peaked at ${plural(q.peak, 'request')} ${formatSeconds(q.peak_s)} in`;
  if (q.emptied_after_peak)
    return `${run} ${peak} and emptied again: it was empty after ${formatPercent(q.empty_steps / q.steps)} of the steps before the last arrival.`;
  return `${run} ${peak} and, until the last request arrived, never emptied after its peak: ${plural(q.last, 'request')} waited then.`;
}

/** Wires the player's controls in `root` to `player` (a ReplicaPlayer): buttons, speed, scrubber and keys. */
export function wirePlayer(root, player) {
  const el = (id) => root.getElementById(id);
  const toggle = () => (player.playing ? player.pause(true) : player.play());
  el('replica-play').addEventListener('click', toggle);
  el('replica-step').addEventListener('click', () => player.step(1));
  el('replica-back').addEventListener('click', () => player.step(-1));
  el('replica-preemption').addEventListener('click', () => player.jump('preemption'));
  el('replica-longest').addEventListener('click', () => player.jump('longest'));
  el('replica-speed').addEventListener('change', (e) => (player.speed = Number(e.target.value)));
  el('replica-scrub').addEventListener('input', (e) => {
    player.pause(true);
    player.seekTime((Number(e.target.value) / SCRUB_STEPS) * player.endS);
  });
  const keys = {
    ' ': toggle,
    k: toggle,
    ArrowRight: () => player.step(1),
    ArrowLeft: () => player.step(-1),
    Home: () => (player.pause(true), player.seekTime(0)),
    End: () => (player.pause(true), player.seekTime(player.endS)),
  };
  el(`chart-${PLAYER_PANEL}`).addEventListener('keydown', (e) => {
    const act = keys[e.key];
    if (!act || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    act();
  });
}

/** Shows whether the player is playing on its Play button. */
export function showPlaying(root, playing) {
  const button = root.getElementById('replica-play');
  button.textContent = playing ? 'Pause' : 'Play';
  button.toggleAttribute('data-playing', playing);
}
