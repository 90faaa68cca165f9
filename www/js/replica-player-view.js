// The replica player's markup and styles inside a lab's shadow root: what every lab carries, so a
// `replica` panel can be shown at once. What makes them work (the controls, the keys, the words
// beside the picture) is in replica-player-controls.js, loaded with the player when the panel
// first comes near.

import SCHEMA from '../pkg/kneelab_schema.js';

/** The player's settings: its panel's name, speeds and the speed it starts at. */
export const OPTIONS = SCHEMA.replica;
/** The panel's name in a lab's `panels`. */
export const PLAYER_PANEL = OPTIONS.panel;
/** The scrubber's positions over the run. */
export const SCRUB_STEPS = 1000;

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
        <button type="button" id="replica-back" title="One iteration back">‹ Back</button>
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
