// Secondary views of the main lab: a follower <knee-lab> that shows the same replica as the
// main one (another set of panels, or the other load mode). Each lab simulates on its own, so a
// follower only catches up while it is near the viewport, and after a short pause when asked to.

import { changed, debounce, onUpdate, watchNear } from './live.js';

/**
 * Keeps `follower` in step with `main`: its state becomes `transform(main.state)`.
 * `watch` is the element whose visibility decides whether to sync (the follower by default);
 * `delayMs` coalesces rapid changes (a dragged slider); `setMain` receives the reader's own
 * changes made in the follower, so every view of the replica stays one state.
 */
export function mirror(main, follower, { transform = (s) => s, watch = follower, delayMs = 0, setMain = null } = {}) {
  let near = true;
  const sync = () => {
    if (!near) return;
    const diff = changed(follower.state, transform(main.state));
    if (Object.keys(diff).length > 0) follower.state = diff;
  };
  const later = delayMs > 0 ? debounce(sync, delayMs) : sync;
  // kneelab-update fires after each redraw of the main lab, including when its state changed.
  onUpdate(main, () => later());
  watchNear(watch, (isNear) => {
    near = isNear;
    if (near) sync();
  });
  if (setMain) {
    follower.addEventListener('kneelab-change', (e) => {
      if (e.target === follower) setMain(e.detail);
    });
  }
  sync();
  return { sync };
}
