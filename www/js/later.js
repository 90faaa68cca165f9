// The page's third wasm module (kneelab-web's `fleet` and `player` features,
// `pkg/kneelab_later.js`): the fleet lab and the replica player, fetched when a <fleet-lab> or a
// lab's `replica` panel first comes near, so the page's first load carries neither. One instance
// per page, shared by whatever uses it.

import { pkgUrl } from './wasm.js';

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
 * instantiates a fresh one. Objects the dead one made stay dead.
 */
export function discardLater() {
  module = null;
  instance += 1;
}
