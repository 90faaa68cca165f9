// The fleet module (kneelab-web's `fleet` feature, `pkg/kneelab_fleet.js`) and a day run on it a
// slice at a time: what <fleet-lab> and the lesson's predict step share.

import { pkgUrl } from './wasm.js';
import { nextTask } from './schedule.js';

/** Wall time one slice of a run may take, in ms: well under a frame's long-task limit. */
const SLICE_MS = 8;

let module = null;
let instance = 0;
/** The fleet module, instantiated once per page (a failed load is retried on the next call). */
export function loadFleet() {
  const url = pkgUrl('kneelab_fleet.js').href;
  // A fresh instance after a trap needs a fresh copy of the glue: one ES module per URL.
  module ??= import(instance ? `${url}?instance=${instance}` : url)
    .then(async (m) => {
      await m.default();
      return m;
    })
    .catch((err) => {
      module = null;
      throw err;
    });
  return module;
}

/**
 * Drops the fleet module after a trap (a Rust panic leaves its instance dead): the next
 * `loadFleet()` instantiates a fresh one. Objects the dead one made stay dead.
 */
export function discardFleet() {
  module = null;
  instance += 1;
}

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
