// Beat 6, route and autoscale: the <fleet-lab> element (loaded with this module, as the
// section comes near), a sentence comparing a run with the pinned one, the predict-then-reveal
// question "which signal meets the SLO with the fewest GPU-hours?" answered by running every
// signal on the lab's day, and the reader's rule from "Explain it to a colleague", tried here.
// The words are the section's templates; every number in them comes from the runs.

import '../fleet-lab.js'; // defines <fleet-lab>
import { loadLater } from '../later.js';
import { runSliced } from '../fleet-run.js';

/** Which signal a reader's rule names, by the words it uses (first match wins). */
const RULE_WORDS = [
  ['gpu_util', /gpu[ -]?(util|usage|busy|load)|utili[sz]ation|nvidia-smi/i],
  ['ttft_p99', /ttft|first token|p99|tail latency/i],
  ['waiting_mean', /waiting|queue|num_requests_waiting|backlog/i],
  ['kv_usage', /\bkv\b|kv[ -]cache/i],
  ['rate', /request rate|\bqps\b|\brps\b|little/i],
];

/** The section's words and controls (`lesson/fleet.html`), put in place of `#fleet-body` (as
 * the section's own children, so its column grid lays them out). */
async function insertSection() {
  const response = await fetch(new URL('lesson/fleet.html', document.baseURI));
  if (!response.ok) throw new Error(`lesson/fleet.html: HTTP ${response.status}`);
  const doc = new DOMParser().parseFromString(await response.text(), 'text/html');
  // The parser puts the fragment's leading <link> in the head.
  document.getElementById('fleet-body').replaceWith(...doc.head.childNodes, ...doc.body.childNodes);
}

/**
 * `say` and `fill` are live.js's, and the model's name the schema's, handed over by main.js:
 * importing live.js here would split it out of the page's first bundle into a chunk of its own,
 * and the page would load more for it.
 */
export async function setup({ say, fill, modelLabel }) {
  const $ = (id) => document.getElementById(id);
  let [fleet] = await Promise.all([loadLater(), insertSection()]);
  // The model the prose names, as the rest of the page names it.
  fill($('fleet'), { model_label: modelLabel });
  const el = $('fleet-lab');
  await el.ready;
  const schema = fleet.fleetSchema();
  const signals = schema.signals.filter((s) => s.name !== 'none');
  const label = (name) => schema.signals.find((s) => s.name === name)?.label ?? name;
  const pct = (x) => fleet.formatPercent(x);
  const hours = (h) => h.toFixed(h < 10 ? 2 : 1);

  // A run beside the pinned one, in words.
  el.addEventListener('fleet-run', ({ detail }) => {
    const pinned = el.pinned;
    if (!pinned) return;
    const t = detail.totals;
    const d = t.gpu_hours - pinned.gpu_hours;
    const verdict = Math.abs(d) < 0.005 ? 'same' : d < 0 ? 'cheaper' : 'dearer';
    say($('fleet-compare'), 'pinned', {
      att: pct(t.attainment),
      att_pinned: pct(pinned.attainment),
      hours: hours(t.gpu_hours),
      hours_pinned: hours(pinned.gpu_hours),
      verdict: $('fleet-compare').querySelector(`template[data-when="${verdict}"]`).content.textContent,
    });
  });

  // Predict, then run every signal.
  const choices = $('fleet-choices');
  for (const s of signals) {
    const input = Object.assign(document.createElement('input'), { type: 'radio', name: 'fleet-signal', value: s.name });
    const row = document.createElement('label');
    row.append(input, ` ${s.label}`);
    choices.append(row);
  }
  const reveal = $('fleet-reveal');
  const hint = reveal.parentElement.querySelector('.gate-hint');
  choices.addEventListener('change', () => {
    reveal.disabled = false;
    hint.hidden = true;
  });
  reveal.addEventListener('click', async () => {
    const picked = choices.querySelector('input:checked')?.value;
    if (!picked) return;
    reveal.disabled = true;
    choices.disabled = true;
    const body = $('fleet-reveal-body');
    body.hidden = false;
    const status = $('fleet-step-status');
    const rows = [];
    const base = el.config();
    try {
      fleet = await loadLater(); // a fresh one if the lab's had to restart
      for (const s of signals) {
        status.textContent = `Playing the day with ${s.label}…`;
        const config = structuredClone(base);
        Object.assign(config.autoscaler, { signal: s.name, scale_up: s.scale_up, scale_down: s.scale_down });
        const { lab, totals } = await runSliced(fleet, config);
        lab.free();
        rows.push({ signal: s, totals, meets: totals.attainment >= schema.attainment_target });
      }
    } catch (err) {
      status.textContent = `The runs failed: ${err.message ?? err}`;
      reveal.disabled = false;
      choices.disabled = false;
      return;
    }
    status.textContent = '';
    showRuns(rows, picked);
    body.focus({ preventScroll: true });
  });

  function showRuns(rows, picked) {
    $('fleet-runs-body').replaceChildren(
      ...rows.map((r) => {
        const tr = document.createElement('tr');
        tr.dataset.signal = r.signal.name;
        // A line may break after each underscore of a metric name.
        const cells = [r.signal.label.replaceAll('_', '_\u200b'), pct(r.totals.attainment), hours(r.totals.gpu_hours), r.meets ? 'yes' : 'no'];
        cells.forEach((text, i) => tr.append(Object.assign(document.createElement(i ? 'td' : 'th'), { textContent: text })));
        tr.firstChild.scope = 'row';
        tr.dataset.meets = String(r.meets);
        return tr;
      }),
    );
    const meeting = rows.filter((r) => r.meets).sort((a, b) => a.totals.gpu_hours - b.totals.gpu_hours);
    const best = meeting[0] ?? null;
    // Runs as cheap as the cheapest, as the table shows GPU-hours, tie with it: each is right.
    const tied = meeting.filter((r) => hours(r.totals.gpu_hours) === hours(best.totals.gpu_hours)).map((r) => r.signal.name);
    const gpu = rows.find((r) => r.signal.name === 'gpu_util');
    const answer = $('fleet-answer');
    answer.dataset.best = best?.signal.name ?? '';
    const target = pct(schema.attainment_target);
    if (best) {
      say(answer, 'best', {
        best: tied.length > 1 ? `${best.signal.label}, tied with ${tied.slice(1).map(label).join(' and ')},` : best.signal.label,
        target,
        hours: hours(best.totals.gpu_hours),
        gpu_hours: gpu ? hours(gpu.totals.gpu_hours) : '—',
        gpu_att: gpu ? pct(gpu.totals.attainment) : '—',
      });
    } else {
      const top = [...rows].sort((a, b) => b.totals.attainment - a.totals.attainment)[0];
      say(answer, 'none', { target, best: top.signal.label, best_att: pct(top.totals.attainment) });
    }
    const right = best ? tied.includes(picked) : false;
    const verdict = body().querySelector('[data-verdict]');
    verdict.dataset.correct = String(right);
    say(verdict, right ? 'right' : 'wrong', { picked: label(picked) });
    for (const row of choices.querySelectorAll('label')) {
      row.classList.toggle('is-correct', best != null && tied.includes(row.querySelector('input').value));
    }
  }
  const body = () => $('fleet-reveal-body');

  // The reader's rule, from "Explain it to a colleague".
  const text = $('colleague-text');
  const tryIt = $('fleet-rule-try');
  let named = null;
  const showRule = () => {
    const rule = text.value.trim();
    named = rule ? (RULE_WORDS.find(([, re]) => re.test(rule))?.[0] ?? null) : null;
    const shown = rule.length > 160 ? `${rule.slice(0, 157)}…` : rule;
    say($('fleet-rule-text'), !rule ? 'empty' : named ? 'rule' : 'unknown', { rule: shown, signal: named ? label(named) : '' });
    tryIt.hidden = !named;
  };
  text.addEventListener('input', showRule);
  showRule();
  tryIt.addEventListener('click', () => {
    el.settings = { 'autoscaler.signal': named };
    el.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
    el.play().catch(() => {}); // a refused setting is named on the lab itself
  });

  el.play().catch(() => {});
}
