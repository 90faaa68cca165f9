// In-page links that scroll without replacing the hash: the hash holds the lab's state
// (url-state.js), so a link like #goodput must not wipe it. Labs and live sentences above the
// target fill in as they come near, which moves it: for a short while after the jump the target
// is kept at the top, until the page settles or the reader scrolls on their own.

import { reducedMotion } from './live.js';

/** How long after a jump the target is held in place while the page above it lays out. */
const HOLD_MS = 2500;
/** The same after arriving by a link: the whole page above is still loading. */
const ARRIVAL_HOLD_MS = 8000;

/** Keeps `target` at the top while the page's height changes, for `ms` or until the reader acts. */
function hold(target, ms = HOLD_MS) {
  const started = performance.now();
  const stop = () => {
    observer.disconnect();
    for (const type of ['wheel', 'touchstart', 'keydown', 'pointerdown']) removeEventListener(type, stop, true);
  };
  const observer = new ResizeObserver(() => {
    if (performance.now() - started > ms) return stop();
    if (Math.abs(target.getBoundingClientRect().top) > 4) target.scrollIntoView({ behavior: 'auto', block: 'start' });
  });
  observer.observe(document.body);
  for (const type of ['wheel', 'touchstart', 'keydown', 'pointerdown']) addEventListener(type, stop, { capture: true, passive: true });
  setTimeout(stop, ms);
}

export function setup() {
  // A link to a section (…/#worked, not a hash of settings): the browser jumped there before the
  // page above it laid out, which then pushed it far down. Jump again, and hold it there.
  const id = decodeURIComponent(location.hash.slice(1));
  const linked = id && !id.includes('=') && document.getElementById(id);
  if (linked) {
    linked.scrollIntoView({ behavior: 'auto', block: 'start' });
    hold(linked, ARRIVAL_HOLD_MS);
  }
  document.addEventListener('click', (e) => {
    const a = e.target.closest?.('a[href^="#"]');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const target = document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)));
    if (!target) return;
    e.preventDefault();
    target.scrollIntoView({ behavior: reducedMotion.matches ? 'auto' : 'smooth', block: 'start' });
    if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
    hold(target);
  });
}
