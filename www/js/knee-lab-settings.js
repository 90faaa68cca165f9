// <knee-lab>'s state and the one table of its settings. The table is the schema's
// (`kneelab_sim::settings`, written out by the build): each row is a Config path
// (`engine.max_num_seqs`), the short attribute alias (`max-num-seqs`), the state key, a kind and
// the control that shows its errors. Attributes and the lesson's URL state are keyed through it,
// and an engine error marks the control whose row carries its `path`. This module only reads
// text as its kind says (a number, a name, a flag); the engine judges the value.

import SCHEMA from '../pkg/kneelab_schema.js';
import { grouped } from './format.js';

/** The page's settings, stated once in Rust (`kneelab_sim::schema`, written out by the build). */
export { SCHEMA };

/** The GPU presets by name: label, model, GPU, source and vLLM V1's batch defaults there. */
export const PRESETS = Object.fromEntries(SCHEMA.presets.map((p) => [p.name, p]));

/** The workloads by name: the control's label (with the preset's mean lengths) and its SLOs. */
export const WORKLOADS = Object.fromEntries(
  SCHEMA.workloads.map((w) => [
    w.name,
    {
      label: `${w.label} (≈${grouped(w.prompt_mean_tokens)} in, ${grouped(w.output_mean_tokens)} out)`,
      sloTtftMs: w.slo_ttft_ms,
      sloTpotMs: w.slo_tpot_ms,
    },
  ]),
);

/** vLLM's max_model_len for these presets: the step budget when chunked prefill is off. */
export const MAX_MODEL_LEN = SCHEMA.max_model_len;

/** The `--max-num-seqs` choices. */
export const SEQS = SCHEMA.options.max_num_seqs;
/** The `--max-num-batched-tokens` choices (with chunked prefill on). */
export const BUDGETS = SCHEMA.options.max_num_batched_tokens;
/** KV cache sizes in tokens (see `kneelab_sim::schema::Options`). */
export const KV_CACHE_TOKENS = SCHEMA.options.kv_cache_tokens;
/** `--burstiness` choices: `{shape, label}` (the label gives the gaps' CV). */
export const BURSTINESS = SCHEMA.options.burstiness;
/** The groups of controls a lab can show (its `controls`), by their `data-group` in the markup. */
export const ALL_CONTROLS = ['load', 'mode', 'engine', 'slo', 'knee', 'model'];
/**
 * Labels of the readouts a lab can show (`metrics` attribute), from the schema's readout
 * registry (`kneelab_sim::schema::READOUTS`); the first `default_metrics` are the default.
 */
export const METRIC_LABELS = Object.fromEntries(SCHEMA.readouts.filter((r) => r.label).map((r) => [r.name, r.label]));

/** The state every lab starts from; attributes override it. */
export const DEFAULT_STATE = SCHEMA.defaults;

/** What the SLO knee can be judged on (the config's `slo.knee`), as the control names them. */
export const KNEE_RULES = Object.fromEntries(SCHEMA.options.knee_rules.map((c) => [c.value, c.label]));

/** A KV cache size as a control lists it, by the schema's label ("440k (80 GB card)"). */
export const kvLabel = (k) => SCHEMA.options.kv_cache_labels[KV_CACHE_TOKENS.indexOf(k)] ?? grouped(k);

/** The offered-load slider's range, in percent. */
export const LOAD_PCT = {
  min: Math.round(SCHEMA.load_range.min * 100),
  max: Math.round(SCHEMA.load_range.max * 100),
  step: Math.round(SCHEMA.load_range.step * 100),
};

/** The list attributes: what they may name, and what they show when absent. */
export const LISTS = {
  panels: { all: SCHEMA.panels, fallback: SCHEMA.default_panels },
  controls: { all: ALL_CONTROLS, fallback: ALL_CONTROLS },
  metrics: { all: Object.keys(METRIC_LABELS), fallback: Object.keys(METRIC_LABELS).slice(0, SCHEMA.default_metrics) },
};

/** Longest attribute value read: a number, a name or a flag is far shorter. */
const MAX_ATTRIBUTE_LENGTH = 200;
/** How much of a bad value an error message shows. */
const ECHO_LENGTH = 60;

/** `text` cut to about `ECHO_LENGTH` characters (never inside a surrogate pair), with "…". */
export function clip(text) {
  if (text.length <= ECHO_LENGTH) return text;
  let end = ECHO_LENGTH;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** An attribute value, trimmed, or an Error naming the attribute if it is empty or too long. */
function attributeText(name, raw, want) {
  const text = raw.trim();
  if (text === '') throw new Error(`${name}: the value is empty; give ${want}`);
  if (text.length > MAX_ATTRIBUTE_LENGTH) {
    throw new Error(
      `${name}: "${clip(text)}" is too long (${grouped(text.length)} characters); give ${want}`,
    );
  }
  return text;
}

// Plain decimal notation only: not hex (0x40), not Infinity or NaN, not an empty string
// (`Number` would read all of those, the last as 0).
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** A finite decimal number, or an Error naming the attribute. */
function decimal(name, raw) {
  const text = attributeText(name, raw, 'a decimal number');
  const value = Number(text);
  if (!DECIMAL.test(text)) throw new Error(`${name}: "${clip(text)}" is not a decimal number`);
  if (!Number.isFinite(value)) throw new Error(`${name}: ${clip(text)} is too large`);
  return value;
}

/** One of `choices` (case does not matter), or an Error naming the attribute and the choices. */
export const oneOf = (choices) => (name, raw) => {
  const want = `one of ${choices.join(', ')}`;
  const text = attributeText(name, raw, want).toLowerCase();
  if (!choices.includes(text)) throw new Error(`${name}: "${clip(raw.trim())}" is not ${want}`);
  return text;
};

/** A boolean attribute: present (empty), "true" or "1" is on; "false" or "0" is off. */
function flag(name, raw) {
  const text = raw.trim().toLowerCase();
  if (text === '' || text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new Error(`${name}: "${clip(raw.trim())}" is not true or false (or 1 or 0)`);
}

/** How each kind of row reads its text: the only checks made outside the engine. */
const READERS = { number: () => decimal, choice: ({ choices }) => oneOf(choices), flag: () => flag };

/**
 * The settings, the schema's rows with `parse(name, text)`: a value, or an Error naming the
 * attribute. Each is `{ path, attribute, key, kind, choices?, control?, derived?, parse }`.
 */
export const SETTINGS = SCHEMA.settings.map((row) => ({ ...row, parse: READERS[row.kind](row) }));

const BY_NAME = new Map(SETTINGS.flatMap((s) => (s.path ? [[s.path, s], [s.attribute, s]] : [[s.attribute, s]])));

/**
 * A property set on element `el` before its class was defined is an own property hiding the
 * setter: set it again through the setter. Returns null if there was none, else `{ value }` and,
 * if the setter threw, `error`.
 */
export function upgrade(el, name) {
  if (!Object.hasOwn(el, name)) return null;
  const value = el[name];
  delete el[name];
  try {
    el[name] = value;
    return { value };
  } catch (error) {
    return { value, error };
  }
}

/** What a script may give each kind of setting through `state`, in words, and the check. */
const SCRIPT_KINDS = {
  number: [() => 'a finite number', (v) => typeof v === 'number' && Number.isFinite(v)],
  choice: [({ choices }) => `one of ${choices.map((c) => `"${c}"`).join(', ')}`, (v, { choices }) => choices.includes(v)],
  flag: [() => 'true or false', (v) => typeof v === 'boolean'],
};

/**
 * Checks a partial state a script sets (`el.state = {...}`): every key a setting's and every
 * value of its kind. Throws a TypeError whose `path` names the setting (its Config path, or the
 * key itself); the engine judges each value's range.
 */
export function checkState(partial) {
  const keys = SETTINGS.map((s) => s.key).join(', ');
  if (partial == null || typeof partial !== 'object' || Array.isArray(partial)) {
    throw Object.assign(new TypeError(`state: expected an object of settings (${keys})`), { path: 'state' });
  }
  for (const [key, value] of Object.entries(partial)) {
    const spec = SETTINGS.find((s) => s.key === key);
    if (!spec) {
      throw Object.assign(new TypeError(`state: unknown setting "${clip(key)}"; the settings are ${keys}`), { path: key });
    }
    const [want, ok] = SCRIPT_KINDS[spec.kind];
    if (!ok(value, spec)) {
      const got = typeof value === 'string' ? `"${clip(value)}" (a string)` : clip(String(value));
      const path = spec.path ?? spec.attribute;
      throw Object.assign(new TypeError(`state.${key} (${path}): expected ${want(spec)}, got ${got}`), { path });
    }
  }
}

/** Every name a setting answers to: its Config path and its attribute alias. */
export const SETTING_NAMES = [...BY_NAME.keys()];

/** The setting named `name` (a Config path or an attribute alias), or undefined. */
export const settingNamed = (name) => BY_NAME.get(name);

/** The control whose alert shows an engine error at `path` (by equality), or `general`. */
export const controlFor = (path) =>
  SETTINGS.find((s) => s.path === path || s.derived?.includes(path))?.control ?? 'general';

/**
 * `[name, text]` pairs (a URL's parameters or hash, by Config path or attribute alias) as a
 * partial state: a name that is no setting's, or text its kind cannot read, is left out.
 */
export function readSettings(pairs) {
  const out = {};
  for (const [name, text] of pairs) {
    const spec = settingNamed(name);
    try {
      if (spec) out[spec.key] = spec.parse(name, text);
    } catch {
      // refused: the setting keeps its value
    }
  }
  return out;
}

/** A state as `[name, text]` pairs, keyed by Config path (the alias for a view setting). */
export const settingsOf = (state) =>
  SETTINGS.filter(({ key }) => Number.isFinite(state[key]) || typeof state[key] === 'string' || typeof state[key] === 'boolean')
    .map(({ path, attribute, key }) => [path ?? attribute, String(key === 'load' ? Math.round(state.load * 100) / 100 : state[key])]);

/** State `before` with `partial` laid over it: a new workload brings its SLOs, unless `partial` sets them too. */
export function merged(before, partial) {
  const next = { ...before, ...partial };
  if (partial.workload && partial.workload !== before.workload && Object.hasOwn(WORKLOADS, partial.workload)) {
    if (!('sloTtftMs' in partial)) next.sloTtftMs = WORKLOADS[partial.workload].sloTtftMs;
    if (!('sloTpotMs' in partial)) next.sloTpotMs = WORKLOADS[partial.workload].sloTpotMs;
  }
  return next;
}

/**
 * The simulator's config for a lab's state, in the CLI's JSON schema. Its `load` carries the
 * mode and think time only; the lab supplies the offered load.
 */
export function configOf(s) {
  const chunked = s.chunkedPrefill;
  return {
    seed: s.seed,
    engine: {
      max_num_seqs: s.maxNumSeqs,
      // vLLM without chunked prefill runs whole prompts: its budget is max_model_len (and, as in
      // vLLM, the engine refuses a budget below max_num_seqs).
      max_num_batched_tokens: chunked ? s.maxNumBatchedTokens : MAX_MODEL_LEN,
      chunked_prefill: chunked,
      kv_cache_tokens: s.kvCacheTokens,
    },
    cost: { model: 'roofline', preset: s.preset },
    workload: { preset: s.workload },
    load: s.mode === 'closed' ? { mode: 'closed', think_time_s: s.thinkTimeS } : { mode: 'open', burstiness: s.burstiness },
    slo: { ttft_ms: s.sloTtftMs, tpot_ms: s.sloTpotMs, knee: s.kneeRule },
    // The warm-up is the engine's default share of the requests.
    run: { requests: s.requests },
  };
}
