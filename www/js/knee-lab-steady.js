// A lab's steady run: the slider's load re-run with the engine's most requests (`SteadyRun`, in
// the third module, pkg/kneelab_later.js, so a lab's first load does not carry it), a slice at a
// time so the page keeps answering. Tails near capacity then hold still across seeds; the lab's
// usual run is short enough to follow a drag, and its p99 moves with the seed. Its readouts stand
// in for the usual run's until anything changes; the charts stay the usual run's.

import { formatPercent } from './format.js';
import { configOf } from './knee-lab-settings.js';
import { discardLater, loadLater } from './later.js';
import { inSlices } from './schedule.js';
import { isTrap } from './wasm.js';

/** Wall time one slice may take, in ms. */
const SLICE_MS = 12;
const STATUS = 'Steady run: ';

/** Whether a lab in state `s` can have no steady run: one is of an open loop under load. */
export const noSteady = (s) => s.mode !== 'open' || s.load <= 0;

/** The state a steady run belongs to, as a key: any change makes another. */
const steadyKey = (state) => JSON.stringify(state);

/** `core.steady` if it is of the lab's state now, else null (no key made without one). */
export const shownSteady = (core) => (core.steady && core.steady.key === steadyKey(core.state) ? core.steady : null);

/** Wires the lab's "steady tails" button to `core` (knee-lab-core.js), which keeps `core.steady`. */
export function wireSteady(core, root) {
  const button = root.getElementById('steady');
  button.addEventListener('click', async () => {
    const key = steadyKey(core.state);
    // The usual run's readouts, to set beside the steady ones (a second press keeps the first's).
    // Each render puts a fresh object in `core.readouts`, so this one stays as it is now.
    const usual = shownSteady(core)?.usual ?? core.readouts;
    let run = null;
    const end = (err) => {
      try {
        run?.free(); // its memory back to the module (reused by the next run)
      } catch {
        // A run on an instance that trapped: nothing to give back.
      }
      run = null;
      // Shown for this state already: a second run would draw the same requests.
      button.disabled = noSteady(core.state) || shownSteady(core) != null;
      if (root.getElementById('status').textContent.startsWith(STATUS)) core.setStatus('');
      if (err && isTrap(err)) {
        discardLater(); // the next run gets a fresh instance
        core.setStatus('The steady run crashed; press Steady tails to try again.', 'error');
      } else if (err) {
        core.alerts.showError(err);
      }
    };
    button.disabled = true;
    core.setStatus(`${STATUS}starting…`);
    try {
      const later = await loadLater();
      run = new later.SteadyRun(configOf(core.state), core.state.load);
    } catch (err) {
      return end(err);
    }
    let progress = null;
    inSlices(() => (progress = run.step()) != null, {
      sliceMs: SLICE_MS,
      current: () => (run != null && steadyKey(core.state) === key) || (end(), false),
      after: (more) => {
        if (more) return core.setStatus(`${STATUS}${formatPercent(progress)} simulated…`);
        const readouts = Object.entries(run.readouts()).filter(([, v]) => v != null);
        core.steady = { key, readouts: Object.fromEntries(readouts), usual };
        end();
        core.scheduleFrame();
      },
      fail: end,
    });
  });
}
