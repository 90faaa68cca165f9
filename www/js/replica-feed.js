// The replica player in a <knee-lab>: it traces the lab's current point once input pauses (a
// trace is a few thousand engine steps: not worth redoing on every frame of a drag) and hands
// the run to the player (replica-player.js).

import { PLAYER_PANEL, ReplicaPlayer } from './replica-player.js';
import { pushCapped } from './schedule.js';

export { PLAYER_PANEL };

/** Quiet time after the last change before the replica player traces the new point, in ms. */
const PLAYER_SETTLE_MS = 120;

export class PlayerFeed {
  /** The `replica` panel's player: `length`, `index`, `playing`, `play()`, `step(n)`, ... */
  player;
  /** Whether the player's trace is older than the current point (rebuilt once input pauses). */
  stale = true;
  #host;
  #sim;
  #timings;
  #showError;
  #shown;
  #busy;
  #timer = 0;

  /**
   * A feed for the player in `root`, from `sim`'s `Lab`: `timings` gets each trace's time in ms;
   * `shown()` says whether the panel is shown, `busy()` whether the point is still changing.
   */
  constructor(host, root, { sim, timings, colours, showError, shown, busy }) {
    this.#host = host;
    this.#sim = sim;
    this.#timings = timings;
    this.#showError = showError;
    this.#shown = shown;
    this.#busy = busy;
    this.player = new ReplicaPlayer(root, { colours, onError: (err) => sim.crashed(err) || showError(err) });
  }

  /** Draws the player again, or traces the current point first if its trace is older. */
  redraw() {
    if (this.stale) this.#schedule();
    else this.player.redraw();
  }

  /** Drops the run (its simulator is gone or its settings changed). */
  drop() {
    clearTimeout(this.#timer);
    this.#timer = 0;
    this.stale = true;
    this.player.clear();
  }

  #schedule() {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = 0;
      if (!this.#sim.alive() || !this.#shown() || !this.stale) return;
      if (this.#busy()) return this.#schedule();
      let source;
      const began = performance.now();
      try {
        source = this.#sim.lab.replicaPlayer();
        pushCapped(this.#timings, performance.now() - began);
      } catch (err) {
        if (this.#sim.crashed(err)) return;
        if (err.kind !== 'state') this.#showError(err);
        return; // no point yet: the next render asks again
      }
      this.stale = false;
      this.player.setSource(source);
      const detail = { steps: this.player.length };
      this.#host.dispatchEvent(new CustomEvent('kneelab-player', { detail, bubbles: true, composed: true }));
    }, PLAYER_SETTLE_MS);
  }
}
