// A lab's charts, drawn a frame's time at a time: the panels a frame leaves undrawn wait for the
// next, so the first draw (while the wasm is still cold) or a slow machine makes no long task.

import { chartColours } from './knee-lab-style.js';
import { describeCharts } from './knee-lab-words.js';
import { PLAYER_PANEL } from './replica-feed.js';

/** A frame's time for the readouts and charts, beyond which the other charts wait a frame. */
const FRAME_MS = 16;

export class Painter {
  #host;
  #root;
  #core;
  /** Panels still to draw, in order. */
  #undrawn = [];
  /** The colours the charts were last drawn in. */
  colours = '';

  constructor(host, root, core) {
    this.#host = host;
    this.#root = root;
    this.#core = core;
  }

  /** Whether panels are left to draw. */
  get pending() {
    return this.#undrawn.length > 0;
  }

  /** New data: every shown panel is to be drawn, those the last frame left first (so a long drag starves none). */
  redrawAll() {
    this.#undrawn = [...new Set([...this.#undrawn, ...this.#core.panels])];
  }

  /**
   * Draws the panels left to draw until the frame, begun at `started`, has taken FRAME_MS (one
   * at least); describes the charts once all are drawn. False if the simulator crashed meanwhile.
   */
  draw(started) {
    const core = this.#core;
    const [chrome, dark] = chartColours(this.#host);
    this.colours = [chrome, dark].join();
    while (this.#undrawn.length > 0) {
      const panel = this.#undrawn.shift();
      if (!core.panels.includes(panel)) continue; // hidden since
      if (panel === PLAYER_PANEL) {
        core.feed.redraw();
      } else {
        try {
          core.sim.lab.setLatencyLog(core.state.latencyScale === 'log'); // throws only if the module died
          core.sim.lab.draw(panel, this.#root.getElementById(`chart-${panel}`), dark, chrome);
        } catch (err) {
          if (core.sim.crashed(err)) return false;
          core.alerts.showError(err);
        }
      }
      if (performance.now() - started > FRAME_MS) break;
    }
    if (!this.pending) describeCharts(this.#root, core.state, core.readouts);
    return true;
  }
}
