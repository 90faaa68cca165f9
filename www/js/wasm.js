// Loads the simulator (Rust compiled to WebAssembly) once per page; every lab shares it.
//
// A trap (a Rust panic, or any other WebAssembly.RuntimeError) leaves a wasm instance dead:
// whatever is called on it afterwards fails. So a trapped instance is discarded and a fresh one
// instantiated from a fresh copy of the glue module (an ES module is evaluated once per URL,
// so each instance gets its own `?instance=N`). What `loadKneelab()` resolves to is one object
// for the whole page whose exports always call into the current instance, so code that kept it
// (the lesson's modules, the labs) carries on once the new instance is up. Objects made by a
// dead instance (a `Lab`, a `SweepJob`) stay dead: labs compare `kneelabGeneration()` with the
// generation their `Lab` came from, and listen for `discard` on `kneelabEvents`, to make a new
// one.

/**
 * The URL of a file the build writes to `pkg/` (a wasm module or its glue). This module's own
 * URL decides (`../pkg/` beside `js/`): the page can live at any path, or on a CDN. A site that
 * bundles the element into scripts of its own, which moves this module, names where it serves
 * the package's `pkg/` folder instead: `<meta name="kneelab-pkg" content="/static/kneelab/pkg/">`
 * (relative to the page). Code elsewhere finds `pkg/` through this.
 */
export function pkgUrl(file) {
  const named = globalThis.document?.querySelector('meta[name=kneelab-pkg]')?.content?.trim();
  if (!named) return new URL(`../pkg/${file}`, import.meta.url);
  return new URL(file, new URL(named.endsWith('/') ? named : `${named}/`, document.baseURI));
}

/**
 * The first modules a page can load: the lab's, and the lesson's, which adds the picture of one
 * engine step (`ReplicaView`) and the lesson's sweeps (`SweepJob`). A page names the lesson's in
 * its head with `<meta name="kneelab-module" content="kneelab_lesson">`; one module a page, which
 * every lab on it shares.
 */
const MODULES = ['kneelab_web', 'kneelab_lesson'];

/** This page's module: its glue's URL and its wasm's. */
function moduleFiles() {
  const named = globalThis.document?.querySelector('meta[name=kneelab-module]')?.content;
  const name = MODULES.includes(named) ? named : MODULES[0];
  return { glue: pkgUrl(`${name}.js`).href, wasm: pkgUrl(`${name}_bg.wasm`) };
}
/** Why the wasm loaded the slow way (a wrong MIME type), for the labs to say; or ''. */
let note = '';
export const kneelabNote = () => note;

/** Fires `discard` (a CustomEvent whose detail is the dead generation) when an instance is dropped. */
export const kneelabEvents = new EventTarget();

let generation = 0;
/** The current instance: { generation, wasm (the glue's namespace), exports (the wasm's) }. */
let current = null;
let loading = null;
let facade = null;

/** The current instance's number: 0 for the first, one more after each discard. */
export function kneelabGeneration() {
  return generation;
}

/** The current instance's exports (the glue's namespace), or null while none is loaded. */
export function kneelabNow() {
  return current?.wasm ?? null;
}

/** Bytes of linear memory the current instance holds (0 while none is loaded). */
export function kneelabMemoryBytes() {
  return current?.exports.memory?.buffer.byteLength ?? 0;
}

/**
 * Whether `err` means the module is dead: a trap, or wasm-bindgen's complaint about a Rust
 * object a trap left borrowed (JS is single-threaded, so only a trap mid-call can leave one so).
 */
export function isTrap(err) {
  if (err instanceof WebAssembly.RuntimeError) return true;
  return err instanceof Error && /^recursive use of an object detected|^attempted to take ownership of Rust value while it was borrowed/.test(err.message);
}

/**
 * Drops instance `gen` (default: the current one) after a trap, tells every listener, and starts
 * instantiating a fresh one. A no-op if that instance was already discarded, so every lab that
 * sees the same trap can call it.
 */
export function discardKneelab(gen = generation) {
  if (gen !== generation) return;
  generation += 1;
  current = null;
  loading = null;
  kneelabEvents.dispatchEvent(new CustomEvent('discard', { detail: gen }));
  // Up again before anyone asks: code holding the module's exports needs no reload to go on.
  loadKneelab().catch(() => {});
}

/**
 * The initialised module: `Lab`, `version`, the formatters..., and on the lesson page
 * `ReplicaView` and `SweepJob` (the engine's own `simulate`, `sweep` and `size` are the third
 * module's: later.js).
 */
export function loadKneelab() {
  if (loading) return loading;
  const gen = generation;
  const attempt = (async () => {
    // The first instance is the glue's own URL, so `import('/pkg/kneelab_web.js')` (on the lab's
    // page) shares it. The wasm is asked for at once, beside the glue, not a round trip after it.
    const files = moduleFiles();
    const [wasm, response] = await Promise.all([
      import(gen === 0 ? files.glue : `${files.glue}?instance=${gen}`),
      fetch(files.wasm),
    ]);
    const type = response.headers.get('content-type') || 'no type';
    const served = type === 'application/wasm' ? '' : `this site serves ${files.wasm.pathname} as ${type}, not application/wasm`;
    let exports;
    try {
      exports = await wasm.default({ module_or_path: response });
    } catch (err) {
      throw new Error(`${served ? `${served} (is the path right?): ` : ''}${err.message ?? err}`);
    }
    // Chromium then compiles from bytes rather than while downloading: it works, more slowly.
    if (served) note = `Note: ${served}; the lab works, but loads more slowly.`;
    if (gen !== generation) throw new Error('the simulator was restarted while it loaded');
    current = { generation: gen, wasm, exports };
    facade ??= makeFacade(wasm);
    return facade;
  })();
  loading = attempt;
  // A failed load is not cached: the next call tries again.
  attempt.catch(() => {
    if (loading === attempt) loading = null;
  });
  return attempt;
}

/** The current instance's glue namespace, or an Error saying why there is none. */
function live() {
  if (current) return current;
  throw new Error('The simulator is restarting after a crash; try again in a moment.');
}

/** Calls into the current instance; a trap discards it (and is rethrown). */
function guard(fn) {
  const inst = live();
  try {
    return fn(inst.wasm);
  } catch (err) {
    if (isTrap(err)) discardKneelab(inst.generation);
    throw err;
  }
}

/** One object whose exports forward to whichever instance is current. */
function makeFacade(wasm) {
  const out = {};
  for (const [name, value] of Object.entries(wasm)) {
    if (typeof value !== 'function' || name === 'default' || name === 'initSync' || name === 'start') continue;
    if (/^class\b/.test(Function.prototype.toString.call(value))) {
      // `new facade.Lab()` makes a Lab of the current instance.
      out[name] = function (...args) {
        if (!new.target) throw new TypeError(`${name} must be called with new`);
        return guard((w) => Reflect.construct(w[name], args));
      };
      Object.defineProperty(out[name], 'name', { value: name });
    } else {
      out[name] = (...args) => guard((w) => w[name](...args));
    }
  }
  return Object.freeze(out);
}
