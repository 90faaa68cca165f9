// Beat 2: five predict-then-reveal steps. Reveal stays disabled until a guess is committed;
// revealing shows the verdict, the answer, the why, and a live <knee-lab> set up for the point
// (made only then, so five labs don't simulate at page load). Live sentences are filled from
// that lab's readouts and sweep.

import {
  configKey,
  createLab,
  fill,
  formatChange,
  formatMetric,
  formatNumber,
  formatPercent,
  formatRate,
  formatSeconds,
  formatTimes,
  meanVsTail,
  onUpdate,
  p99Crossing,
  pointAt,
  say,
  whenNear,
  words,
} from './live.js';
import { SCHEMA } from '../knee-lab.js';
import { BASE_ENGINE, sweepCached, workloadConfig } from './sweeps.js';
import { callLater } from '../later.js';

/** The verdicts' words, shared by the five steps (the page's, an author's to edit). */
const VERDICTS = document.getElementById('verdict-words');

/** The two loads the lesson compares: just below the knee, and capacity. */
const [BELOW, FULL] = SCHEMA.compare_loads;

/**
 * Per step: the live numbers it quotes. The right answer (`data-correct` on its fieldset) and the
 * lab that proves it (a `<knee-lab>` in its `<template data-lab>`) are in the HTML, so an author
 * changes either without touching this file.
 */
const STEPS = {
  1: {
    values: (r) => ({
      load: formatPercent(r.load),
      ttft_mean: formatSeconds(r.ttft_mean),
      queue_mean: formatSeconds(r.queue_mean),
      prefill_mean: formatSeconds(r.ttft_mean - r.queue_mean),
      ttft_p50: formatSeconds(r.ttft_p50),
      ttft_p99: formatSeconds(r.ttft_p99),
      queue_p99: formatSeconds(r.queue_p99),
    }),
  },
  2: {
    values: (r) => ({
      load: formatPercent(r.load),
      tpot_p50: formatSeconds(r.tpot_p50),
      tpot_p99: formatSeconds(r.tpot_p99),
      itl_p99: formatSeconds(r.itl_p99),
      num_requests_running: formatMetric('num_requests_running', r.num_requests_running),
    }),
  },
  3: {
    sweepValues: (sweep, r) => {
      const a = pointAt(sweep, BELOW);
      const b = pointAt(sweep, FULL);
      if (!a || !b) return {};
      const note = meanVsTail(sweep, r.slo_ttft_s);
      return {
        thr_85: formatRate(a.throughput_rps),
        thr_100: formatRate(b.throughput_rps),
        thr_gain: formatChange(a.throughput_rps, b.throughput_rps),
        p99_85: formatSeconds(a.ttft_s.p99),
        p99_100: formatSeconds(b.ttft_s.p99),
        p99_factor: formatTimes(b.ttft_s.p99 / a.ttft_s.p99),
        p50_85: formatSeconds(a.ttft_s.p50),
        p50_100: formatSeconds(b.ttft_s.p50),
        mean_note: note ?? '',
        crossing: p99Crossing(r),
      };
    },
  },
  4: {
    sweepValues: (sweep) => {
      const knee = sweep.knee ? pointAt(sweep, sweep.knee.offered_load) : null;
      const high = pointAt(sweep, SCHEMA.lesson.overload);
      return {
        knee_load: formatPercent(sweep.knee?.offered_load),
        g_knee: formatRate(knee?.goodput_rps),
        t_knee: formatRate(knee?.throughput_rps),
        overload: formatPercent(SCHEMA.lesson.overload),
        t_over: formatRate(high?.throughput_rps),
        g_over: formatRate(high?.goodput_rps),
      };
    },
  },
  5: {
    numeric: true,
    values: (r) => ({
      load: formatPercent(r.load),
      littles_l: formatNumber(r.littles_l, 1),
      littles_batch_l: formatNumber(r.littles_batch_l, 1),
      littles_lambda_rps: formatRate(r.littles_lambda_rps),
      littles_w_s: formatSeconds(r.littles_w_s),
      littles_batch_w_s: formatSeconds(r.littles_batch_w_s),
      lw: formatNumber(r.littles_lambda_rps * r.littles_w_s, 1),
      lw_batch: formatNumber(r.littles_lambda_rps * r.littles_batch_w_s, 1),
      knee_rps: formatRate(r.knee_rps),
    }),
  },
};

/**
 * The lesson's sizing question: a chat replica (where the sequence cap binds) with the schema's
 * cap and the step's peak; its time in the batch comes from the engine's sweep, at saturation,
 * where the batch is fullest.
 */
export const SIZING = {
  cap: BASE_ENGINE.max_num_seqs,
  // The peak the question states, from its article (`data-peak-qps`): the prose and the arithmetic agree.
  peakQps: Number(document.querySelector('[data-step="5"]')?.dataset.peakQps),
  workload: 'chat',
};

/** Step 5's numbers from the engine: the sweep, and the batch and E2E times at saturation. */
export async function sizingFromEngine(wasm, lab) {
  const sweep = await sweepCached(wasm, workloadConfig(lab, SIZING.workload));
  const sat = sweep.saturation && pointAt(sweep, sweep.saturation.offered_load);
  if (!sat || !sweep.sizing) return null;
  // The sweep's sizing basis: its batch time at saturation, as the CLI and the calculator use.
  return { sweep, batchS: sweep.sizing.batch_s, e2eS: sat.e2e_s.mean };
}

function labelOf(input) {
  return input.closest('label')?.textContent.trim() ?? input.value;
}

/** Wires one step. `wasm` is the loaded module (for step 5's arithmetic). */
function setupStep(article, spec, wasm, lab) {
  const button = article.querySelector('button.reveal');
  const body = article.querySelector('.reveal-body');
  const fieldset = article.querySelector('fieldset');
  const verdict = body.querySelector('[data-verdict]');
  const hint = article.querySelector('.gate-hint');

  const guess = () => {
    if (spec.numeric) {
      const [qps, replicas] = [...fieldset.querySelectorAll('input')].map((i) => i.valueAsNumber);
      return Number.isFinite(qps) && qps > 0 && Number.isFinite(replicas) && replicas > 0 ? { qps, replicas } : null;
    }
    return fieldset.querySelector('input:checked');
  };
  // Step 5 asks with the engine's own time in the batch: measured once the step comes near.
  let sizing = null;
  if (spec.numeric) {
    // The question's own givens: the cap from the schema's engine, the peak from the article.
    fill(article, { cap: String(SIZING.cap), peak: String(SIZING.peakQps) });
    whenNear(article, async () => {
      const engine = await sizingFromEngine(wasm, lab);
      if (!engine) return;
      // The answer's sizes (they depend on no guess), by the engine's `size()` on the third module.
      const sized = { max_num_seqs: SIZING.cap, batch_s: engine.batchS, peak_qps: SIZING.peakQps };
      const knee = engine.sweep.knee;
      const [s, naive, atKnee] = await Promise.all([
        callLater('size', sized),
        callLater('size', { ...sized, batch_s: engine.e2eS }),
        knee ? callLater('size', { ...sized, knee_qps: knee.throughput_rps }) : null,
      ]);
      sizing = { ...engine, sizes: { s, naive, atKnee } };
      fill(article, { q_batch: formatSeconds(sizing.batchS), q_e2e: formatSeconds(sizing.e2eS) });
      gate();
    });
  }
  const gate = () => {
    const ready = Boolean(guess()) && !article.dataset.revealed && (!spec.numeric || sizing != null);
    button.disabled = !ready;
    if (!article.dataset.revealed) hint.hidden = ready;
  };
  fieldset.addEventListener('input', gate);
  fieldset.addEventListener('change', gate);
  gate();

  button.addEventListener('click', () => {
    const g = guess();
    if (!g || article.dataset.revealed) return;
    article.dataset.revealed = 'true';
    button.disabled = true;
    button.textContent = 'Revealed';
    hint.hidden = true;
    fieldset.disabled = true;

    let right;
    let text;
    if (spec.numeric) {
      const { s, naive, atKnee } = sizing.sizes;
      const { knee, saturation } = sizing.sweep;
      const qpsRight = Math.abs(g.qps - s.per_replica_max_qps) <= 0.05 * s.per_replica_max_qps;
      const replicasRight = Math.round(g.replicas) === s.replicas && g.replicas === Math.round(g.replicas);
      right = qpsRight && replicasRight;
      const off = s.per_replica_max_qps / saturation.throughput_rps - 1;
      fill(body, {
        cap: String(SIZING.cap),
        peak: String(SIZING.peakQps),
        q_batch_bare: formatSeconds(sizing.batchS),
        qps: formatRate(s.per_replica_max_qps),
        qps_bare: formatNumber(s.per_replica_max_qps),
        replicas: String(s.replicas),
        naive_qps: formatRate(naive.per_replica_max_qps),
        naive_replicas: String(naive.replicas),
      });
      say(body.querySelector('#engine-agrees'), Math.abs(off) < 0.01 ? 'match' : off >= 0 ? 'below' : 'above', {
        saturation: formatRate(saturation.throughput_rps),
        off: formatPercent(Math.abs(off)),
        cap: String(SIZING.cap),
      });
      say(body.querySelector('#engine-knee'), knee ? 'knee' : 'no-knee', {
        target: formatPercent(sizing.sweep.attainment_target),
        knee_rps: formatRate(knee?.throughput_rps),
        peak: String(SIZING.peakQps),
        knee_qps: formatNumber(knee?.throughput_rps),
        knee_replicas: atKnee ? String(atKnee.replicas_at_knee) : '',
      });
      text = words(VERDICTS, right ? 'numbers-right' : 'numbers-wrong', {
        qps: formatNumber(g.qps),
        replicas: formatNumber(g.replicas),
        qps_verdict: qpsRight ? 'right' : 'off',
        replicas_verdict: replicasRight ? 'right' : 'off',
      });
    } else {
      right = g.value === fieldset.dataset.correct;
      const correctInput = fieldset.querySelector(`input[value="${fieldset.dataset.correct}"]`);
      correctInput.closest('label').classList.add('is-correct');
      text = words(VERDICTS, right ? 'right' : 'wrong', { guess: labelOf(g) });
    }
    verdict.textContent = text;
    verdict.dataset.correct = String(right);
    body.hidden = false;
    body.focus({ preventScroll: true });
    again.hidden = false;
    // The lab stays across tries: it is the same experiment.
    if (!body.querySelector('knee-lab')) showPicture(article, body, spec);
  });

  // After a reveal the reader may clear the guess and predict again (the answer folds away).
  const again = document.createElement('button');
  again.type = 'button';
  again.className = 'try-again';
  again.textContent = 'Try again';
  again.hidden = true;
  button.after(again);
  again.addEventListener('click', () => {
    delete article.dataset.revealed;
    article.dataset.tries = String(Number(article.dataset.tries ?? 1) + 1);
    fieldset.disabled = false;
    for (const input of fieldset.querySelectorAll('input')) {
      if (input.type === 'radio') input.checked = false;
      else input.value = '';
    }
    for (const label of fieldset.querySelectorAll('.is-correct')) label.classList.remove('is-correct');
    body.hidden = true;
    again.hidden = true;
    button.textContent = 'Reveal the answer';
    gate();
    fieldset.querySelector('input')?.focus();
  });
}

/** Makes the step's lab from its template and keeps its sentence filled from the lab's numbers. */
function showPicture(article, body, spec) {
  const template = article.querySelector('template[data-lab]').content.querySelector('knee-lab');
  const lab = createLab(body.querySelector('.picture'), Object.fromEntries([...template.attributes].map((a) => [a.name, a.value])));
  let sweptFor = null;
  let jumpedToKnee = false;
  onUpdate(lab, ({ readouts, state, sweepDone }) => {
    if (spec.values) fill(body, spec.values(readouts));
    if (!sweepDone) return;
    // Step 5 sits the slider at the knee once it is known: the law at the point you provision for.
    if (spec.numeric && !jumpedToKnee && readouts.knee_load != null) {
      jumpedToKnee = true;
      if (Math.abs(state.load - readouts.knee_load) > 1e-9) lab.state = { load: readouts.knee_load };
    }
    const key = configKey(state);
    if (spec.sweepValues && sweptFor !== key) {
      const sweep = lab.sweep;
      if (sweep) {
        sweptFor = key;
        fill(body, spec.sweepValues(sweep, readouts));
      }
    }
  });
}

export function setup({ wasm, lab }) {
  for (const article of document.querySelectorAll('[data-step]')) {
    const spec = STEPS[article.dataset.step];
    if (spec) setupStep(article, spec, wasm, lab);
  }
}
