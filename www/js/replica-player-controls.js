// The replica player's controls and words: play and pause, one iteration forward or back, a speed
// in simulated seconds per real second, a scrubber, and jumps to the next preemption and to the
// longest step. Keyboard: on the picture, Space plays or pauses, the arrow keys step, Home and
// End go to either end; the buttons, the speed and the scrubber are ordinary controls. The words
// beside the picture come from the engine's own numbers for the shown step or the run. Loaded
// with the player (replica-player.js); the markup they work on is replica-player-view.js's.

import { PLAYER_PANEL, SCRUB_STEPS } from './replica-player-view.js';
import { formatPercent, formatSeconds, grouped } from './format.js';

const plural = (n, one, many = `${one}s`) => `${grouped(n)} ${n === 1 ? one : many}`;

/** Shows step `s` (the wasm `ReplicaPlayer.step` data) of a run of `totalSteps` ending at `endS`. */
export function describeStep(root, s, totalSteps, endS) {
  const set = (name, text) => (root.querySelector(`[data-player="${name}"]`).textContent = text);
  set('index', `${grouped(s.index)} of ${grouped(totalSteps)}`);
  set('time', `${formatSeconds(s.t_s)} into the run`);
  set('duration', formatSeconds(s.duration_s));
  set('tokens', `${grouped(s.decode_tokens)} + ${grouped(s.prefill_tokens)} of ${grouped(s.max_num_batched_tokens)}`);
  set('seats', `${grouped(s.seats.length)} of ${grouped(s.max_num_seqs)}`);
  set('waiting', grouped(s.waiting));
  set('kv', formatPercent(s.kv_blocks > 0 ? s.kv_blocks_used / s.kv_blocks : 0));
  const events = [
    [s.arrived.length, 'arrived'],
    [s.admitted.length, 'admitted'],
    [s.completed.length, 'finished'],
    [s.preempted.length, 'preempted'],
  ].filter(([n]) => n > 0);
  set('events', events.length ? events.map(([n, what]) => `${grouped(n)} ${what}`).join(', ') : 'nothing joined or left');
  const scrub = root.getElementById('replica-scrub');
  scrub.value = String(Math.round((s.t_s / (endS || 1)) * SCRUB_STEPS));
  scrub.setAttribute('aria-valuetext', `${formatSeconds(s.t_s)} into the run, ${plural(s.waiting, 'request')} waiting`);
  root.getElementById(`chart-${PLAYER_PANEL}`).setAttribute(
    'aria-label',
    `The replica at engine step ${grouped(s.index)}: ${grouped(s.seats.length)} of ${grouped(s.max_num_seqs)} seats taken, ` +
      `${plural(s.waiting, 'request')} waiting, ${grouped(s.decode_tokens)} decode and ${grouped(s.prefill_tokens)} prefill ` +
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
