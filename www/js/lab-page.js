// lab.html: the knee lab on its own, and the page an iframe embed loads.
//
// URL parameters set the lab's attributes, with the same names (a Config path or its alias) and
// the same checks (`lab.html?workload.preset=chat&load=0.9&panels=latency+throughput`); a bad
// value is shown on the lab, naming the parameter. In an iframe the page posts its height to the parent whenever it
// changes, as `{ type: 'kneelab:height', height }` (CSS pixels), so the parent can size the frame.

import { KneeLab } from './knee-lab.js';
import { loadKneelab } from './wasm.js';

const lab = document.getElementById('lab');
const unknown = [];
for (const [name, value] of new URLSearchParams(location.search)) {
  if (KneeLab.observedAttributes.includes(name)) lab.setAttribute(name, value);
  else unknown.push(`"${name}"`);
}
// The page around the lab takes its theme, so a dark lab in a frame has no light margins.
const theme = lab.getAttribute('theme');
if (theme === 'dark' || theme === 'light') document.documentElement.style.colorScheme = theme;
// A misspelt parameter is named, not silently dropped; the lab runs without it.
if (unknown.length) {
  const names = KneeLab.observedAttributes.filter((n) => !n.includes('.')).join(', ');
  const note = document.getElementById('url-error');
  note.textContent = `Ignored URL parameter ${unknown.join(', ')}: the lab's are ${names}, or a Config path.`;
  note.hidden = false;
}

if (window.parent !== window) {
  document.documentElement.dataset.embedded = '';
  let last = 0;
  new ResizeObserver(() => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: 'kneelab:height', height }, '*');
  }).observe(document.documentElement);
}

loadKneelab().then(
  () => { document.documentElement.dataset.ready = 'true'; },
  () => { document.documentElement.dataset.ready = 'error'; },
);
