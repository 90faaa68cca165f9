// The <knee-lab> element's own styles (shadow DOM), shared by every instance.
//
// A host page restyles a lab with the --kl-* custom properties (set on `knee-lab`, they win over
// these defaults): --kl-bg, --kl-fg, --kl-muted and --kl-grid reach the charts too. Their
// defaults are the charts' own colour schemes (kneelab-plot's, written into the schema module).
// `theme="light"` or `theme="dark"` picks a scheme; `auto` (the default) follows the OS.

import SCHEMA from '../pkg/kneelab_schema.js';
import { PLAYER_CSS } from './replica-player-view.js';

const scheme = (name, t, rest) =>
  `color-scheme: ${name}; --kl-bg: ${t.bg}; --kl-fg: ${t.fg}; --kl-muted: ${t.muted}; --kl-grid: ${t.grid}; ${rest}`;
const LIGHT = scheme('light', SCHEMA.themes.light, '--kl-line: #d1d5db; --kl-panel: #f6f7f9; --kl-accent: #0072b2; --kl-bad: #b3261e; --kl-good: #00704a;');
const DARK = scheme('dark', SCHEMA.themes.dark, '--kl-line: #374151; --kl-panel: #1a2332; --kl-accent: #56b4e9; --kl-bad: #ff8a80; --kl-good: #5fd3a0;');

export const labSheet = new CSSStyleSheet();
labSheet.replaceSync(`
:host {
  ${LIGHT}
  display: block;
  color: var(--kl-fg);
  /* Its own background: the lab's text keeps its contrast on whatever page it is put. */
  background: var(--kl-bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  container-type: inline-size;
}
@media (prefers-color-scheme: dark) { :host(:not([theme=light])) { ${DARK} } }
:host([theme=dark]) { ${DARK} }
* { box-sizing: border-box; }
:host([data-stale]) .charts { opacity: 0.45; }
:host([data-stale]) .charts::before { content: "Out of date: the charts show the last settings the simulator accepted."; grid-column: 1 / -1; color: var(--kl-bad); font-size: 13.5px; }
:host([data-stale][data-blank]) .charts::before { content: "No charts yet: the simulator has accepted no settings so far. Correct the one marked above."; }
[hidden], .off { display: none !important; }
/* One column no wider than the host: nothing inside (a select, a message) may widen the lab. */
.lab { display: grid; grid-template-columns: minmax(0, 1fr); gap: 14px; }
.controls {
  display: grid;
  grid-template-columns: repeat(auto-fit, minmax(200px, 1fr));
  gap: 10px 18px;
  padding: 14px;
  background: var(--kl-panel);
  border: 1px solid var(--kl-line);
  border-radius: 10px;
}
.control { display: flex; flex-direction: column; gap: 4px; min-width: 0; }
.control.load { grid-column: 1 / -1; }
.control label, .control .label { font-weight: 600; font-size: 14px; }
.control code, .hint code { font-size: 13px; }
.hint { color: var(--kl-muted); font-size: 13px; margin: 0; }
.load-row { display: flex; align-items: center; gap: 12px; }
.load-row input[type=range] { flex: 1; min-width: 0; height: 28px; accent-color: var(--kl-accent); }
output.big { font-variant-numeric: tabular-nums; font-weight: 700; font-size: 20px; min-width: 4.2ch; text-align: right; }
.check { flex-direction: row; align-items: center; gap: 8px; }
.check input { width: 20px; height: 20px; margin: 0; accent-color: var(--kl-accent); }
select, input[type=number] {
  font: inherit; color: var(--kl-fg); background: var(--kl-bg);
  border: 1px solid var(--kl-line); border-radius: 6px; padding: 5px 8px; min-height: 34px; width: 100%;
}
input[aria-invalid=true] { border-color: var(--kl-bad); outline: 2px solid var(--kl-bad); outline-offset: 1px; }
:focus-visible { outline: 3px solid var(--kl-accent); outline-offset: 2px; }
/* Several messages go one to a line; a long value in one wraps rather than widening the lab. */
.error { color: var(--kl-bad); font-size: 13px; margin: 0; min-height: 0; white-space: pre-line; overflow-wrap: anywhere; }
.error:empty { display: none; }
.mapping { grid-column: 1 / -1; }
.readouts {
  display: grid; grid-template-columns: repeat(auto-fill, minmax(132px, 1fr)); gap: 8px; margin: 0;
}
.readouts > div {
  border: 1px solid var(--kl-line); border-radius: 8px; padding: 6px 10px; background: var(--kl-bg);
}
.readouts dt { font-size: 12.5px; color: var(--kl-muted); overflow-wrap: normal; word-break: normal; }
.readouts dd { margin: 0; font-size: 19px; font-weight: 700; font-variant-numeric: tabular-nums; }
.readouts dd.over { color: var(--kl-bad); }
.readouts dd.ok { color: var(--kl-good); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 14px; }
figure { margin: 0; border: 1px solid var(--kl-line); border-radius: 10px; padding: 10px; background: var(--kl-bg); min-width: 0; }
figcaption { font-size: 13.5px; color: var(--kl-muted); margin-top: 6px; }
figcaption strong { color: var(--kl-fg); }
figcaption label.inline { white-space: nowrap; color: var(--kl-fg); cursor: pointer; }
figcaption label.inline input { margin: 0 4px 0 2px; vertical-align: middle; }
canvas { display: block; width: 100%; height: 270px; }
figure.wide, figure[data-panel=queue] { grid-column: 1 / -1; }
figure[data-panel=queue] canvas { height: 220px; }
figure.wide canvas { height: 300px; }
.status { font-size: 13.5px; color: var(--kl-muted); margin: 0; min-height: 1.45em; overflow-wrap: anywhere; }
.status[data-kind=error] { color: var(--kl-bad); font-weight: 600; }
.status:empty { display: none; }
.steady { font-size: 13.5px; color: var(--kl-muted); margin: 0; }
.steady button { font: inherit; color: var(--kl-accent); background: none; border: 1px solid currentColor; border-radius: 4px; padding: 0 .5em; cursor: pointer; }
.steady button:disabled { opacity: .5; cursor: default; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@container (max-width: 560px) {
  .controls { grid-template-columns: repeat(2, minmax(0, 1fr)); padding: 10px; gap: 8px 10px; }
  .control.wide-sm { grid-column: 1 / -1; }
  /* A choice is read whole: selects take the full width rather than cut their text. */
  .control:has(select) { grid-column: 1 / -1; }
  canvas { height: 230px; }
  figure.wide canvas { height: 260px; }
  .readouts { grid-template-columns: repeat(2, 1fr); }
  .readouts dd { font-size: 17px; }
}
${PLAYER_CSS}`);

const darkQuery = matchMedia('(prefers-color-scheme: dark)');
/** Normalises any CSS colour to `#rrggbb` (a 2D context's fillStyle does). */
const probe = document.createElement('canvas').getContext('2d');

/**
 * `host`'s --kl-bg, --kl-fg, --kl-muted and --kl-grid as 0xRRGGBB (-1 where a value is not an
 * opaque colour), and whether the background is dark (the charts' series palette follows it).
 */
export function chartColours(host) {
  const css = getComputedStyle(host);
  const chrome = ['bg', 'fg', 'muted', 'grid'].map((name) => {
    probe.fillStyle = '#010203';
    probe.fillStyle = css.getPropertyValue(`--kl-${name}`).trim() || '#010203';
    const hex = probe.fillStyle; // #rrggbb, or rgba(...) if not opaque
    return hex !== '#010203' && hex[0] === '#' ? parseInt(hex.slice(1), 16) : -1;
  });
  const bg = chrome[0];
  const luma = ((bg >> 16) & 255) * 0.299 + ((bg >> 8) & 255) * 0.587 + (bg & 255) * 0.114;
  return [chrome, bg < 0 ? darkQuery.matches : luma < 128];
}

/** Calls `onChange` when the OS's colour scheme or a site's own theme toggle may have changed the colours. */
export function watchTheme(host, onChange) {
  const watch = new MutationObserver(onChange);
  return {
    observe() {
      darkQuery.addEventListener('change', onChange);
      // A class or data- attribute on <html> or <body>, or the lab's own style.
      for (const el of [document.documentElement, document.body, host]) {
        if (el) watch.observe(el, { attributes: true, attributeFilter: ['class', 'style', 'data-theme', 'data-md-color-scheme'] });
      }
    },
    disconnect() {
      watch.disconnect();
      darkQuery.removeEventListener('change', onChange);
    },
  };
}
