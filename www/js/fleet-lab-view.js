// The <fleet-lab> element's markup, styles, scoreboard and controls by config path: what it
// shows, apart from how it runs (fleet-lab.js). Option lists, labels, units, ranges and every
// number come from the fleet module (`fleetSchema()`, the run's totals, the engine's
// formatters); only the words are here.

/** Each control by the config path the wasm names in its errors. */
export const FIELDS = {
  'router.policy': 'router',
  'autoscaler.signal': 'signal',
  'autoscaler.scale_up': 'scale-up',
  'autoscaler.scale_down': 'scale-down',
  'autoscaler.cold_start_s': 'cold-start',
  'autoscaler.min_replicas': 'min-replicas',
  'autoscaler.max_replicas': 'max-replicas',
};

/** A config path's value in `config`, and setting one (`undefined` drops it). */
export const get = (config, path) => path.split('.').reduce((o, k) => o?.[k], config);
export function set(config, path, value) {
  const keys = path.split('.');
  const last = keys.pop();
  let o = config;
  for (const k of keys) o = o[k] ??= {};
  if (value === undefined) delete o[last];
  else o[last] = value;
}

/** A control's text as a number, or the text itself so the engine names what is wrong. */
export const number = (text) => (String(text).trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : String(text));

/** The controls that are choices (selects); the rest take numbers. */
export const CHOICES = ['router', 'signal'];

/** `values` by config path with each `undefined` (a dropped path) back at `defaults`' value. */
export const undropped = (values, defaults) =>
  Object.fromEntries(Object.entries(values).map(([p, v]) => [p, v === undefined ? get(defaults, p) : v]));

/**
 * Lays `values` (by config path, the signal apart) over `config`. A number control given what is
 * not a number keeps its last good value: each such comes back as a TypeError naming its path (an
 * `<input type=number>` would otherwise turn "x" into "", and the engine quote that).
 */
export function lay(config, values) {
  const bad = [];
  for (const [path, value] of Object.entries(values)) {
    if (path === 'autoscaler.signal') continue;
    if (FIELDS[path] && !CHOICES.includes(FIELDS[path]) && value !== undefined && typeof number(value) !== 'number') {
      bad.push(Object.assign(new TypeError(`${path}: ${JSON.stringify(value)} is not a number`), { path }));
    } else set(config, path, value);
  }
  return bad;
}

/** A run's policy in words, from `schema`'s labels. */
export function describePolicy(schema, c) {
  const label = (list, name) => list.find((o) => o.name === name)?.label ?? name;
  const a = c.autoscaler;
  const sig = schema.signals.find((s) => s.name === a.signal);
  const unit = sig?.unit ? ` ${sig.unit}` : '';
  const rule = a.signal === 'none' ? label(schema.signals, a.signal) : `${label(schema.signals, a.signal)}: up above ${a.scale_up}${unit}, down below ${a.scale_down}`;
  return `${label(schema.routers, c.router.policy)}; ${rule}; cold start ${a.cold_start_s / 60} min; ${a.min_replicas} to ${a.max_replicas} replicas`;
}

/** Shows `message` at the control of `path` in `root` (clearing the others); whether one has it. */
export function markField(root, path, message) {
  let marked = false;
  for (const [p, id] of Object.entries(FIELDS)) {
    const input = root.getElementById(id);
    const text = p === path ? message : '';
    root.getElementById(`${id}-error`).textContent = text;
    if (text) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    marked ||= Boolean(text);
  }
  return marked;
}

export const fleetSheet = new CSSStyleSheet();
fleetSheet.replaceSync(`
/* Two choices side by side on one row, the numbers packed below them. */
.controls { grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); grid-auto-flow: row dense; }
.control:has(select) { grid-column: span 2; }
.play-row { grid-column: 1 / -1; display: flex; flex-wrap: wrap; align-items: center; gap: 10px; }
button {
  font: inherit; font-weight: 600; color: var(--kl-fg); background: var(--kl-bg);
  border: 1px solid var(--kl-line); border-radius: 8px; padding: 6px 14px; min-height: 36px; cursor: pointer;
}
button.primary { background: var(--kl-accent); border-color: var(--kl-accent); color: var(--kl-bg); }
button:disabled { opacity: 0.55; cursor: default; }
progress { flex: 1; min-width: 80px; height: 10px; accent-color: var(--kl-accent); }
.boards { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 260px), 1fr)); gap: 12px; }
.board { border: 1px solid var(--kl-line); border-radius: 10px; padding: 10px 12px; background: var(--kl-panel); min-width: 0; }
.board h3 { margin: 0 0 4px; font-size: 15px; }
.board .policy { margin: 0 0 8px; font-size: 13px; color: var(--kl-muted); overflow-wrap: anywhere; }
.board .readouts { grid-template-columns: repeat(2, minmax(0, 1fr)); }
.board[data-kind=pinned] { border-style: dashed; }
.board dd.meets { color: var(--kl-good); }
.board dd.misses { color: var(--kl-bad); }
.unit { font-weight: 400; color: var(--kl-muted); font-size: 13px; }
`);

/** The element's shadow markup; `s` is `fleetSchema()`. */
export function markup(s) {
  const opt = (list) => list.map((o) => `<option value="${o.name}">${escape(o.label)}</option>`).join('');
  const num = (id, label, r, hint = '') => `
    <div class="control">
      <label for="${id}">${label}</label>
      <input id="${id}" type="number" min="${r.min}" max="${r.max}" step="${r.step}" inputmode="decimal" aria-describedby="${id}-error">
      ${hint}
      <p class="error" id="${id}-error" role="alert"></p>
    </div>`;
  return `
  <div class="lab" part="lab">
    <form class="controls" part="controls" novalidate>
      <div class="control">
        <label for="router">Router</label>
        <select id="router" aria-describedby="router-error">${opt(s.routers)}</select>
        <p class="error" id="router-error" role="alert"></p>
      </div>
      <div class="control">
        <label for="signal">Autoscale on</label>
        <select id="signal" aria-describedby="signal-error">${opt(s.signals)}</select>
        <p class="error" id="signal-error" role="alert"></p>
      </div>
      ${num('scale-up', 'Scale up above <span class="unit" data-unit></span>', { min: 0, max: '', step: 'any' })}
      ${num('scale-down', 'Drain one below <span class="unit" data-unit></span>', { min: 0, max: '', step: 'any' })}
      ${num('cold-start', 'Cold start <span class="unit">(minutes)</span>', s.cold_start_min, '<p class="hint">Model load and CUDA-graph capture: a new replica costs from its start, serves after this.</p>')}
      ${num('min-replicas', 'Fewest replicas', s.replicas)}
      ${num('max-replicas', 'Most replicas', s.replicas)}
      <div class="play-row">
        <button type="button" class="primary" id="play">Play the day</button>
        <button type="button" id="pin" disabled>Pin this run</button>
        <progress id="progress" max="1" value="0" aria-label="Simulated time played"></progress>
      </div>
      <p class="status" id="status" role="status" aria-live="polite"></p>
    </form>
    <div class="boards" aria-live="polite">
      <section class="board" id="current" data-kind="current" aria-labelledby="current-title" hidden>
        <h3 id="current-title">This run</h3>
        <p class="policy"></p>
        ${board()}
      </section>
      <section class="board" id="pinned" data-kind="pinned" aria-labelledby="pinned-title" hidden>
        <h3 id="pinned-title">Pinned</h3>
        <p class="policy"></p>
        ${board()}
      </section>
    </div>
    <div class="charts">
      <figure class="wide" data-chart="replicas"><canvas role="img" aria-label="Replicas ready and starting against the traffic over the day"></canvas>
        <figcaption><strong>Replicas against the traffic.</strong> The filled steps are the ready replicas (the fleet's capacity, one replica's capacity each), the dashed line adds those still starting, and the solid line is the traffic in replicas' worth.</figcaption></figure>
      <figure data-chart="ttft"><canvas role="img" aria-label="TTFT p99 over the day against the SLO"></canvas>
        <figcaption><strong>TTFT p99</strong> of the requests finished in each scrape interval, against the SLO.</figcaption></figure>
      <figure data-chart="waiting"><canvas role="img" aria-label="Requests waiting in the fleet over the day"></canvas>
        <figcaption><strong><code>num_requests_waiting</code></strong>, summed over the fleet at each scrape.</figcaption></figure>
    </div>
  </div>`;
}

function board() {
  const row = (key, label) => `<div><dt>${label}</dt><dd data-metric="${key}">—</dd></div>`;
  return `<dl class="readouts">
    ${row('attainment', 'SLO attainment')}
    ${row('goodput_rps', 'Goodput')}
    ${row('gpu_hours', 'GPU-hours')}
    ${row('cost_per_1k_good_usd', 'Cost per 1k good requests')}
  </dl>`;
}

function escape(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

/**
 * Fills a scoreboard `section` with `totals` (a run's, so far or whole) and the words for its
 * `policy`; `target` is the schema's attainment target, `fmt` the engine's formatters.
 */
export function fillBoard(section, totals, policy, target, fmt) {
  section.hidden = false;
  section.querySelector('.policy').textContent = policy;
  const values = {
    attainment: [totals.attainment, fmt.formatPercent(totals.attainment)],
    goodput_rps: [totals.goodput_rps, fmt.formatRate(totals.goodput_rps)],
    gpu_hours: [totals.gpu_hours, totals.gpu_hours.toFixed(totals.gpu_hours < 10 ? 2 : 1)],
    cost_per_1k_good_usd: [
      totals.cost_per_1k_good_usd,
      Number.isFinite(totals.cost_per_1k_good_usd) ? `$${totals.cost_per_1k_good_usd.toFixed(3)}` : 'no good requests',
    ],
  };
  for (const [key, [value, text]] of Object.entries(values)) {
    const dd = section.querySelector(`[data-metric="${key}"]`);
    dd.textContent = text;
    if (Number.isFinite(value)) dd.dataset.value = String(value);
    else dd.removeAttribute('data-value');
  }
  const att = section.querySelector('[data-metric="attainment"]');
  att.classList.toggle('meets', totals.attainment >= target);
  att.classList.toggle('misses', totals.attainment < target);
  att.title = `${totals.attainment >= target ? 'meets' : 'misses'} the target of ${fmt.formatPercent(target)} of requests within both SLOs`;
}
