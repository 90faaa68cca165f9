// The replica player in a <knee-lab>: it traces the lab's current point once input pauses (a
// trace is a few thousand engine steps: not worth redoing on every frame of a drag) and hands
// the run to the player (replica-player.js). The trace comes from the page's third module
// (later.js), and the player from its own module, both fetched when the panel first comes near:
// the same config and seed as the lab's point, so the very run its readouts come from.

import { PLAYER_PANEL } from './replica-player-view.js';
import { pushCapped } from './schedule.js';
import { chartColours } from './knee-lab-style.js';
import { configOf } from './knee-lab-settings.js';
import { discardLater, loadLater } from './later.js';
import { isTrap } from './wasm.js';

export { PLAYER_PANEL };

/** Quiet time after the last change before the replica player traces the new point, in ms. */
const PLAYER_SETTLE_MS = 120;

export class PlayerFeed {
  /**
   * The `replica` panel's player: `length`, `index`, `playing`, `play()`, `step(n)`, ...; null
   * until the panel first comes near and its module has loaded.
   */
  player = null;
  /** Whether the player's trace is older than the current point (rebuilt once input pauses). */
  stale = true;
  #host;
  #core;
  #root;
  #timer = 0;
  /** Whether the panel has come near the screen: until then nothing is fetched or traced. */
  #near = false;

  /** A feed for the player in `root`, from the lab `core` (knee-lab-core.js) of `host`. */
  constructor(host, root, core) {
    this.#host = host;
    this.#core = core;
    this.#root = root;
    const near = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        near.disconnect();
        this.#near = true;
        if (this.stale) this.#schedule();
      },
      { rootMargin: '500px' },
    );
    near.observe(root.getElementById(`chart-${PLAYER_PANEL}`));
  }

  /** Draws the player again, or traces the current point first if its trace is older. */
  redraw() {
    if (this.stale) this.#schedule();
    else this.player?.redraw();
  }

  /** Drops the run (its simulator is gone or its settings changed). */
  drop() {
    clearTimeout(this.#timer);
    this.#timer = 0;
    this.stale = true;
    this.player?.clear();
  }

  #schedule() {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = 0;
      this.#trace();
    }, PLAYER_SETTLE_MS);
  }

  async #trace() {
    const core = this.#core;
    if (!this.#near || !core.panels.includes(PLAYER_PANEL) || !this.stale) return;
    if (core.busy) return this.#schedule(); // the point is still changing
    let later;
    try {
      [later] = await Promise.all([loadLater(), this.#loadPlayer()]);
    } catch (err) {
      core.alerts.showError(new Error(`The replica player could not be loaded: ${err.message ?? err}`));
      return;
    }
    if (!this.stale) return;
    if (core.busy) return this.#schedule();
    const { state, timings } = core;
    if (!(state.load > 0)) return this.player.clear(); // no run at no load
    const config = configOf(state);
    config.load.offered_load = state.load;
    // The lab's own capacity, so the player runs the lab's very point without measuring it.
    const capacity = core.sim.call(() => core.sim.lab.capacity(), null);
    let source;
    const began = performance.now();
    try {
      source = new later.ReplicaPlayer(config, capacity);
      pushCapped(timings.player, performance.now() - began);
    } catch (err) {
      this.#failed(err);
      return;
    }
    this.stale = false;
    this.#root.getElementById('replica-note').textContent = '';
    this.player.setSource(source);
    const detail = { steps: this.player.length };
    this.#host.dispatchEvent(new CustomEvent('kneelab-player', { detail, bubbles: true, composed: true }));
  }

  /** Fetches the player's module (once; the browser keeps it) and makes the player, once. */
  async #loadPlayer() {
    const { ReplicaPlayer } = await import('./replica-player.js');
    // The player draws and traces on the third module, so its errors are that module's.
    this.player ??= new ReplicaPlayer(this.#root, {
      colours: () => chartColours(this.#host),
      onError: (err) => this.#failed(err),
    });
  }

  /**
   * An error from the third module. A trap leaves that module dead (never the lab's own, whose
   * charts stand): the player's run is dropped and the panel says so; the next trace, after the
   * next change, is made on a fresh instance.
   */
  #failed(err) {
    if (!isTrap(err)) return this.#core.alerts.showError(err);
    discardLater();
    this.drop();
    this.#root.getElementById('replica-note').textContent =
      `The replica player's simulator stopped (${err.message}); it restarts with your next change.`;
  }
}
