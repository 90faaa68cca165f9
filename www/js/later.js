// The page's third wasm module (kneelab-web's `fleet`, `player` and `engine` features,
// `pkg/kneelab_later.js`): the fleet lab, the replica player, the engine's own functions
// (`simulate`, `sweep`, `size`) and a lab's readings below its charts (`compareLoops`,
// `metricsText`, from the lab's config and measured capacity). Fetched when something first needs
// it (a <fleet-lab> or a `replica` panel coming near, a lesson beat, a call), so the page's first
// load carries the lab and its charts alone. One instance per page, shared by whatever uses it.

import { isTrap, pkgUrl } from './wasm.js';

let module = null;
let instance = 0;

/** The module, instantiated once per page (a failed load is retried on the next call). */
export function loadLater() {
  const url = pkgUrl('kneelab_later.js').href;
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
 * Drops the module after a trap (a Rust panic leaves its instance dead): the next `loadLater()`
 * instantiates a fresh one. Objects the dead one made stay dead. `dead` is the instance that
 * trapped (by default the current one), so two callers seeing one trap discard it once.
 */
export function discardLater(dead = instance) {
  if (dead !== instance) return; // already discarded
  module = null;
  instance += 1;
}

/**
 * Resolves to the module's function `name` called with `args` (the module loaded first). A trap
 * in it discards the module, so the next call has a fresh one, and rejects with the error.
 */
export async function callLater(name, ...args) {
  const later = await loadLater();
  const current = instance;
  try {
    return later[name](...args);
  } catch (err) {
    if (isTrap(err)) discardLater(current);
    throw err;
  }
}
