// A fleet day run a slice at a time on the fleet module (later.js): what <fleet-lab> and the
// lesson's predict step share.

import { nextTask } from './schedule.js';

/** Wall time one slice of a run may take, in ms: well under a frame's long-task limit. */
const SLICE_MS = 8;

/**
 * Runs `config` to the end a slice per task; `onSlice(lab)` after each. Throws the engine's
 * Error (with `path`) for a bad config, or `{ cancelled: true }` once `isCancelled()` says so.
 * The caller owns the `FleetLab` it is handed (and frees it).
 */
export async function runSliced(fleet, config, { onSlice = () => {}, isCancelled = () => false } = {}) {
  const lab = new fleet.FleetLab(config);
  while (lab.step(SLICE_MS)) {
    onSlice(lab);
    await nextTask();
    if (isCancelled()) throw { cancelled: true };
  }
  onSlice(lab);
  return { lab, totals: lab.totals() };
}
