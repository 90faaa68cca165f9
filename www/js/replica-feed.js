// The replica player in a <knee-lab>: it traces the lab's current point once input pauses (a
// trace is a few thousand engine steps: not worth redoing on every frame of a drag) and hands
// the run to the player (replica-player.js).

import { PLAYER_PANEL, ReplicaPlayer } from './replica-player.js';
import { pushCapped } from './schedule.js';
import { chartColours } from './knee-lab-style.js';

export { PLAYER_PANEL };

/** Quiet time after the last change before the replica player traces the new point, in ms. */
const PLAYER_SETTLE_MS = 120;

export class PlayerFeed {
  /** The `replica` panel's player: `length`, `index`, `playing`, `play()`, `step(n)`, ... */
  player;
  /** Whether the player's trace is older than the current point (rebuilt once input pauses). */
  stale = true;
  #host;
  #core;
  #timer = 0;

  /** A feed for the player in `root`, from the lab `core` (knee-lab-core.js) of `host`. */
  constructor(host, root, core) {
    this.#host = host;
    this.#core = core;
    const onError = (err) => core.sim.crashed(err) || core.alerts.showError(err);
    this.player = new ReplicaPlayer(root, { colours: () => chartColours(host), onError });
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
      const { sim, panels, timings, alerts } = this.#core;
      if (!sim.alive() || !panels.includes(PLAYER_PANEL) || !this.stale) return;
      if (this.#core.busy) return this.#schedule(); // the point is still changing
      let source;
      const began = performance.now();
      try {
        source = sim.lab.replicaPlayer();
        pushCapped(timings.player, performance.now() - began);
      } catch (err) {
        if (sim.crashed(err)) return;
        if (err.kind !== 'state') alerts.showError(err);
        return; // no point yet: the next render asks again
      }
      this.stale = false;
      this.player.setSource(source);
      const detail = { steps: this.player.length };
      this.#host.dispatchEvent(new CustomEvent('kneelab-player', { detail, bubbles: true, composed: true }));
    }, PLAYER_SETTLE_MS);
  }
}
