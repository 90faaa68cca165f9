// The slice-and-yield scheduler the labs share: long work (a sweep, a day of a fleet) runs a
// slice of a few milliseconds at a time with a task between slices, so input is handled in
// between and no task is long.

const channel = new MessageChannel();
const queue = [];
channel.port1.onmessage = () => queue.shift()?.();

/** Calls `fn` in a task of its own: zero delay (setTimeout clamps to 4 ms when nested). */
export function yieldTask(fn) {
  queue.push(fn);
  channel.port2.postMessage(0);
}

/** Resolves in a task of its own (see `yieldTask`). */
export const nextTask = () => new Promise((resolve) => yieldTask(resolve));

/**
 * Runs `slice()` (true while work is left) again and again for up to `sliceMs`, then yields a
 * task and goes on, while `current()` holds. `after(more)` runs at the end of each slice; an
 * error thrown by either goes to `fail(err)` and ends the run.
 */
export function inSlices(slice, { sliceMs, current, after, fail }) {
  const step = () => {
    if (!current()) return;
    const started = performance.now();
    let more = true;
    try {
      do {
        more = slice();
      } while (more && performance.now() - started < sliceMs);
      after(more);
    } catch (err) {
      fail(err);
      return;
    }
    if (more) yieldTask(step);
  };
  yieldTask(step);
}

/** Keeps the newest `max` entries of a timings list (a long session should not grow it forever). */
export function pushCapped(list, value, max = 1000) {
  list.push(value);
  if (list.length > max) list.splice(0, list.length - max);
}

/** A promise settled once, by `resolve()` or `reject(err)`; later calls do nothing. */
export class Once {
  settled = false;
  #settle;
  promise = new Promise((resolve, reject) => (this.#settle = { resolve, reject }));

  constructor() {
    this.promise.catch(() => {}); // a rejection nobody awaits is not an unhandled one
  }

  resolve() {
    if (!this.settled) (this.settled = true), this.#settle.resolve();
  }

  reject(err) {
    if (!this.settled) (this.settled = true), this.#settle.reject(err);
  }
}

/** Promises that resolve once a condition holds: `until(holds)`, tried again at every `check()`. */
export class Waiters {
  #list = [];

  until(holds) {
    return holds() ? Promise.resolve() : new Promise((resolve) => this.#list.push([holds, resolve]));
  }

  check() {
    // Resolves those whose condition holds now, and drops them (`resolve()` is undefined).
    this.#list = this.#list.filter(([holds, resolve]) => !holds() || resolve());
  }
}
