// Small helpers every lesson module shares: creating labs lazily, filling live text from the
// engine's numbers, and reading a sweep. No numbers are made here; they all come from the labs.

import { formatMetric, formatPercent, formatRate, formatSeconds, grouped } from '../format.js';
import { decimal } from './numbers.js';
import { describeLimits } from '../knee-lab.js';

export { formatMetric, formatPercent, formatRate, formatSeconds };

export const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');

/** Calls `fn` once, the first time `el` comes within `margin` of the viewport. */
export function whenNear(el, fn, margin = '500px') {
  const io = new IntersectionObserver(
    (entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        io.disconnect();
        fn();
      }
    },
    { rootMargin: margin },
  );
  io.observe(el);
}

/** Tracks whether `el` is near the viewport; `onChange(near)` on every change. */
export function watchNear(el, onChange, margin = '300px') {
  const io = new IntersectionObserver((entries) => onChange(entries.some((e) => e.isIntersecting)), { rootMargin: margin });
  io.observe(el);
  return io;
}

/** Creates a `<knee-lab>` with `attrs` inside `slot` (replacing its placeholder). */
export function createLab(slot, attrs) {
  const lab = document.createElement('knee-lab');
  for (const [name, value] of Object.entries(attrs)) lab.setAttribute(name, String(value));
  slot.replaceChildren(lab);
  slot.classList.add('has-lab');
  return lab;
}

/**
 * Fills every `[data-live=key]` under `root` with `values[key]` (a string, or
 * `{ text, value }` to also set `data-value`). Keys missing from `values` are left alone.
 */
export function fill(root, values) {
  for (const el of root.querySelectorAll('[data-live]')) {
    const key = el.dataset.live;
    if (!(key in values)) continue;
    setText(el, values[key]);
  }
}

/** Case `when`'s words: `slot`'s `<template data-when>` (the page's, an author's to edit), `{name}`s filled from `values`. */
export function words(slot, when, values) {
  const t = slot.querySelector(`:scope > template[data-when="${when}"]`);
  return t ? t.content.textContent.replace(/\{(\w+)\}/g, (m, k) => values[k] ?? m).replace(/\s+/g, ' ').trim() : '';
}

/** Shows case `when`'s words in `slot`. */
export function say(slot, when, values) {
  // The case shown, for a reader's tools and the tests ('' clears it).
  if (when) slot.dataset.case = when;
  else delete slot.dataset.case;
  let out = slot.querySelector(':scope > [data-said]');
  if (!out) (out = slot.appendChild(document.createElement('span'))).dataset.said = '';
  setText(out, words(slot, when, values));
}

/** An engine error's message without its `path` in front ("peak_qps: must be..." -> "must be..."). */
export function withoutPath(err) {
  const m = String(err.message ?? err);
  return err.path && m.startsWith(`${err.path}: `) ? m.slice(err.path.length + 2) : m;
}

/** Sets an element's text and, for `{ text, value }`, its `data-value` (removed when not finite). */
export function setText(el, v) {
  const text = v == null ? '—' : typeof v === 'object' ? v.text : String(v);
  if (el.textContent !== text) el.textContent = text;
  if (v != null && typeof v === 'object') {
    if (Number.isFinite(v.value)) el.dataset.value = String(v.value);
    else el.removeAttribute('data-value');
  }
}

/** Fills `[data-metric=name]` under `root` with `{ text, value }` entries. */
export function fillMetrics(root, values) {
  for (const [name, v] of Object.entries(values)) {
    const el = root.querySelector(`[data-metric="${name}"]`);
    if (el) setText(el, v ?? { text: '—', value: NaN });
  }
}

/** The summary of the sweep point at `load` (exact grid match), or null. */
export function pointAt(sweep, load) {
  return sweepPoint(sweep, load)?.summary ?? null;
}

/** The sweep's point at `load` itself (its summary and its p99s judged against the SLOs), or null. */
export function sweepPoint(sweep, load) {
  return sweep?.points?.find((pt) => Math.abs(pt.offered_load - load) < 1e-6) ?? null;
}

/** The sweep point nearest to `load`. */
export function nearestPoint(sweep, load) {
  let best = null;
  for (const p of sweep?.points ?? []) {
    if (!best || Math.abs(p.offered_load - load) < Math.abs(best.offered_load - load)) best = p;
  }
  return best;
}

/** "3.2×" for a ratio; "—" when unknown. */
export function formatTimes(x) {
  if (x == null || !Number.isFinite(x)) return '—';
  return `${x < 10 ? x.toFixed(1) : grouped(x)}×`;
}

/** "+14%" / "−3%" for a relative change. */
export function formatChange(from, to) {
  if (!Number.isFinite(from) || !Number.isFinite(to) || from === 0) return '—';
  const pct = Math.round((to / from - 1) * 100);
  return `${pct >= 0 ? '+' : '−'}${Math.abs(pct)}%`;
}

/** A plain number with up to `digits` decimals ("8", "3.64"). */
export function formatNumber(x, digits = 2) {
  if (x == null || !Number.isFinite(x)) return '—';
  return decimal(x, digits);
}

/** What a lab shows now, in the shape of a `kneelab-update` event's detail. */
export function snapshot(lab) {
  const readouts = lab.readouts;
  // Idle with sweep points in its readouts: the sweep is complete.
  const sweepDone = !lab.hasAttribute('data-busy') && readouts.sweep_points != null;
  return { readouts, state: lab.state, sweepDone };
}

/**
 * Calls `fn(detail)` now, with what `lab` shows already (a lab may have finished before this
 * listener was added), and then after every redraw of `lab`.
 */
export function onUpdate(lab, fn) {
  lab.addEventListener('kneelab-update', (e) => {
    if (e.target === lab) fn(e.detail);
  });
  fn(snapshot(lab));
}

/** The state keys that change what a lab simulates (everything but the load). */
export function configKey(state) {
  const { load: _load, ...rest } = state;
  return JSON.stringify(rest);
}

/** Only the entries of `partial` that differ from `state`. */
export function changed(state, partial) {
  const out = {};
  for (const [k, v] of Object.entries(partial)) {
    if (!Object.is(state[k], v)) out[k] = v;
  }
  return out;
}

/** Runs `fn` after `ms` of quiet. */
export function debounce(fn, ms) {
  let timer = 0;
  const wrapped = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  wrapped.flush = (...args) => {
    clearTimeout(timer);
    fn(...args);
  };
  return wrapped;
}

/**
 * `fn` (async) run on each call, never twice at once: calls made while it runs become one more
 * run after it, so a burst of updates costs at most two runs and the last sees the last state.
 */
export function coalesced(fn) {
  let running = false;
  let again = false;
  return async function run() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await fn();
      } while (again);
    } finally {
      running = false;
    }
  };
}

/** The tail's words, the page's (`#tail-words`), for a case and its numbers. */
const tailWords = (when, values = {}) => words(document.getElementById('tail-words'), when, values);

/**
 * The lesson's "p99 crosses the SLO while the mean looks fine", if this sweep shows it between
 * 80% and 100% of capacity (the highest such load); null if it does not.
 */
export function meanVsTail(sweep, sloS) {
  if (!sweep || !Number.isFinite(sloS)) return null;
  let found = null;
  for (const p of sweep.points ?? []) {
    const t = p.summary.ttft_s;
    const inRange = p.offered_load >= 0.8 - 1e-9 && p.offered_load <= 1 + 1e-9;
    if (inRange && t.mean <= sloS && t.p99 > sloS) found = p;
  }
  if (!found) return null;
  const t = found.summary.ttft_s;
  return tailWords('mean-hides', {
    load: formatPercent(found.offered_load),
    mean: formatSeconds(t.mean),
    slo: formatSeconds(sloS),
    p99: formatSeconds(t.p99),
    times: formatTimes(t.p99 / sloS),
  });
}

/** Which limit binds, in words, from a sweep (its `limits` and measured capacity). */
export function limitSentence(sweep) {
  const l = sweep.limits;
  return describeLimits({
    limit_seq_cap_rps: l.seq_cap.rps,
    limit_kv_cache_rps: l.kv_cache.rps,
    limit_prefill_rps: l.prefill.rps,
    limit_prefill_tokens_per_s: l.prefill.prefill_tokens_per_s,
    limit_rps: l.rps,
    capacity_rps: sweep.capacity_rps,
  });
}

/** Where TTFT p99 crosses its SLO in the sweep, in words ('' until the sweep is done). */
export function p99Crossing(r) {
  if (r.ttft_p99_crossing_load != null) {
    return tailWords('crosses', { slo: formatSeconds(r.slo_ttft_s), load: formatPercent(r.ttft_p99_crossing_load) });
  }
  if (r.sweep_points == null) return '';
  return tailWords(r.ttft_p99 > r.slo_ttft_s ? 'above' : 'within');
}
