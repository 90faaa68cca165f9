// <knee-lab>'s form: what each control sets in the state, the controls shown for a state, and
// the alerts. An alert shows the errors of the settings whose row names its control (engine
// errors by their `path`, attribute errors by the attribute's name); a control without an alert
// of its own, or hidden, reports in the general one.

import { noSteady } from './knee-lab-steady.js';
import { grouped } from './format.js';
import { BURSTINESS, MAX_MODEL_LEN, PRESETS, SETTINGS, controlFor, kvLabel, settingNamed } from './knee-lab-settings.js';

/** The SLO boxes: control id, state key, what a message calls it. */
const SLO_BOXES = [
  ['slo-ttft-ms', 'sloTtftMs', 'TTFT SLO'],
  ['slo-tpot-ms', 'sloTpotMs', 'TPOT SLO'],
];

/**
 * Wires the form in `root`: each control calls `update(partial)` with what it sets. `onLoadInput()`
 * runs first on a slider input (the moment a readout's latency is measured from).
 */
export function wire(root, update, onLoadInput) {
  const el = (id) => root.getElementById(id);
  // Never submits; not an inline handler, which a host page's CSP may forbid.
  root.querySelector('form').addEventListener('submit', (e) => e.preventDefault());
  const slider = el('offered-load');
  slider.addEventListener('input', () => {
    onLoadInput();
    update({ load: Number(slider.value) / 100 });
  });
  el('burstiness').addEventListener('input', (e) => update({ burstiness: BURSTINESS[e.target.value].shape }));
  const on = (id, read) => el(id).addEventListener('change', (e) => update(read(e.target)));
  on('closed-loop', (t) => ({ mode: t.checked ? 'closed' : 'open' }));
  on('chunked-prefill', (t) => ({ chunkedPrefill: t.checked }));
  on('max-num-seqs', (t) => ({ maxNumSeqs: Number(t.value) }));
  on('max-num-batched-tokens', (t) => ({ maxNumBatchedTokens: Number(t.value) }));
  on('kv-cache-tokens', (t) => ({ kvCacheTokens: Number(t.value) }));
  on('preset', (t) => ({ preset: t.value }));
  on('knee-rule', (t) => ({ kneeRule: t.value }));
  on('latency-log', (t) => ({ latencyScale: t.checked ? 'log' : 'linear' }));
  on('workload', (t) => ({ workload: t.value }));
  // `change`, not `input`: typing "1500" should not re-judge at 1, 15 and 150 on the way.
  for (const [id, key] of SLO_BOXES) {
    on(id, (t) => ({ [key]: t.value.trim() === '' ? NaN : Number(t.value.trim()) }));
  }
}

/** What the engine cannot be asked (an empty box is not a number at all): `[control, message]`s. */
export const unreadable = (s) =>
  SLO_BOXES.filter(([, key]) => !Number.isFinite(s[key])).map(([id, , label]) => [id, `${label}: enter a number of milliseconds.`]);

/** Shows state `s` in the controls in `root`. */
export function syncControls(root, s) {
  const el = (id) => root.getElementById(id);
  const pct = Math.round(s.load * 100);
  const slider = el('offered-load');
  if (Number(slider.value) !== pct) slider.value = String(pct);
  const closed = s.mode === 'closed';
  el('steady').disabled = noSteady(s);
  slider.setAttribute('aria-valuetext', closed ? `users offering ${pct}% of capacity if unloaded` : `${pct}% of capacity`);
  const label = root.querySelector('label[for="offered-load"]');
  label.querySelector('.load-name').textContent = closed ? 'Users’ demand' : 'Offered load';
  label.querySelector('.load-hint').textContent = closed
    ? '(the share of capacity the users would offer if every answer came at the unloaded latency)'
    : "(% of the replica's capacity)";
  el('offered-load-value').value = `${pct}%`;
  el('closed-loop').checked = s.mode === 'closed';
  // The nearest choice to the state's shape; an open loop's only.
  const b = BURSTINESS.reduce((best, c, i) => (Math.abs(c.shape - s.burstiness) < Math.abs(BURSTINESS[best].shape - s.burstiness) ? i : best), 0);
  el('burstiness').value = String(b);
  el('burstiness-value').value = BURSTINESS[b].label;
  // An open loop's only; `hidden` is the `controls` attribute's (showParts).
  el('burst-box').classList.toggle('off', closed);
  el('chunked-prefill').checked = s.chunkedPrefill;
  const budget = el('max-num-batched-tokens');
  choose(budget, s.chunkedPrefill ? s.maxNumBatchedTokens : MAX_MODEL_LEN, grouped);
  budget.disabled = !s.chunkedPrefill;
  el('budget-hint').textContent = s.chunkedPrefill
    ? 'Tokens per step: long prompts are split into chunks of what is left after the decodes.'
    : `Without chunking vLLM sets it to max_model_len (${grouped(MAX_MODEL_LEN)}): a whole prompt runs in one step and every decode waits for it.`;
  choose(el('max-num-seqs'), s.maxNumSeqs, String);
  choose(el('kv-cache-tokens'), s.kvCacheTokens, kvLabel);
  for (const [id, key] of SLO_BOXES) {
    const input = el(id);
    if (Number.isFinite(s[key]) && Number(input.value) !== s[key]) input.value = String(s[key]);
  }
  el('preset').value = s.preset;
  el('preset-hint').textContent = PRESETS[s.preset]?.source ?? '';
  el('workload').value = s.workload;
  el('knee-rule').value = s.kneeRule;
  el('latency-log').checked = s.latencyScale === 'log';
}

/**
 * Selects `value` in `select`; a value the list does not offer (set by an attribute or a script,
 * and taken by the engine) is shown as an option of its own rather than as a blank.
 */
function choose(select, value, label) {
  const text = String(value);
  let extra = select.querySelector('option[data-set-by-page]');
  if ([...select.options].some((o) => o.value === text && o !== extra)) {
    extra?.remove();
  } else {
    extra ??= select.appendChild(document.createElement('option'));
    extra.dataset.setByPage = '';
    Object.assign(extra, { value: text, textContent: `${label(value)} (set by the page)` });
  }
  select.value = text;
}

/** Shows the figures in `panels` and the groups of controls in `controls`, hides the rest. */
export function showParts(root, panels, controls) {
  for (const fig of root.querySelectorAll('figure[data-panel]')) fig.hidden = !panels.includes(fig.dataset.panel);
  for (const el of root.querySelectorAll('[data-group]')) el.hidden = !controls.includes(el.dataset.group);
  root.querySelector('.controls').hidden = controls.length === 0;
}

/** A lab's alerts: the engine's and the inputs' errors by control, and the attributes' by name. */
export class Alerts {
  #host;
  #root;
  /** Error text by control id (`general`, `offered-load`, ...), from the engine or the inputs. */
  #errors = new Map();
  /** Error text by attribute name, for attributes whose value could not be read. */
  attributes = new Map();

  constructor(host, root) {
    this.#host = host;
    this.#root = root;
  }

  /** Shows a simulator error beside the control its `path` names (the general alert otherwise). */
  showError(err) {
    const message = err?.message ?? String(err);
    this.set(controlFor(err?.path), message);
    this.#refused(err?.path ?? '', message);
  }

  /** Shows that attribute `name` could not be read (`message` names it). */
  attributeError(name, message) {
    this.attributes.set(name, message);
    this.paint();
    this.#refused(name, message);
  }

  /** Tells the page a setting was refused: `kneelab-error`, with `{ path, message }`. */
  #refused(path, message) {
    const detail = { path, message };
    this.#host.dispatchEvent(new CustomEvent('kneelab-error', { detail, bubbles: true, composed: true }));
  }

  set(id, message) {
    this.#errors.set(id, message);
    this.paint();
  }

  clear(id) {
    if (this.#errors.delete(id)) this.paint();
  }

  /** Drops the attribute errors of the settings `partial` sets (by either of their names). */
  forget(partial) {
    const names = SETTINGS.filter((s) => s.key in partial).flatMap((s) => [s.path, s.attribute]);
    if (names.map((n) => this.attributes.delete(n)).includes(true)) this.paint();
  }

  clearAll() {
    if (this.#errors.size === 0) return;
    this.#errors.clear();
    this.paint();
  }

  /** Where an error about control `id` shows: beside it, or in the general alert if it has none or is hidden. */
  #alertFor(id) {
    if (!id || id === 'general') return 'general';
    const control = this.#root.getElementById(id);
    const alert = this.#root.getElementById(`${id}-error`);
    return control && alert && !control.closest('[data-group]')?.hidden ? id : 'general';
  }

  /** Fills every alert from the engine's and the attributes' errors, and marks the controls. */
  paint() {
    // An engine error means the charts are from the last settings it accepted: say they are stale.
    this.#host.toggleAttribute('data-stale', this.#errors.size > 0);
    const texts = new Map();
    const add = (id, text) => {
      const at = this.#alertFor(id);
      texts.set(at, texts.has(at) ? `${texts.get(at)}\n${text}` : text);
    };
    for (const [name, text] of this.attributes) add(settingNamed(name)?.control, text);
    for (const [id, text] of this.#errors) add(id, text);
    for (const alert of this.#root.querySelectorAll('.error')) {
      const id = alert.id.replace(/-error$/, '');
      const text = texts.get(id) ?? '';
      if (alert.textContent !== text) alert.textContent = text;
      const control = id === 'general' ? null : this.#root.getElementById(id);
      if (!control) continue;
      const described = (control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter((t) => t && t !== alert.id);
      if (text) {
        control.setAttribute('aria-invalid', 'true');
        described.push(alert.id);
      } else {
        control.removeAttribute('aria-invalid');
      }
      const value = described.join(' ');
      if ((control.getAttribute('aria-describedby') ?? '') !== value) {
        if (value) control.setAttribute('aria-describedby', value);
        else control.removeAttribute('aria-describedby');
      }
    }
  }
}
