// Beat 11's "ask a tutor": a prompt that carries the reader's lab (its link and numbers, from the
// engine), their predictions and their colleague answer, and asks for a critique against SLO
// percentiles, cold starts and Little's Law. Shown in the page and copied to the clipboard.

import { formatMetric, formatPercent, formatRate, formatSeconds } from './live.js';

/** The reader's committed predictions, step by step, in the page's own words. */
function predictions() {
  const lines = [];
  for (const step of document.querySelectorAll('[data-step]')) {
    const title = step.querySelector('h3')?.textContent.replace(/\s+/g, ' ').trim() ?? `Step ${step.dataset.step}`;
    const checked = step.querySelector('fieldset input:checked');
    const numbers = [...step.querySelectorAll('fieldset input[type=number]')].filter((i) => i.value.trim() !== '');
    let guess = null;
    if (checked) guess = checked.closest('label')?.textContent.trim();
    else if (numbers.length > 0) guess = numbers.map((i) => `${i.labels[0]?.textContent.trim()} ${i.value}`).join('; ');
    const verdict = step.querySelector('[data-verdict]')?.dataset.correct;
    lines.push(
      `- ${title}: ${guess ?? '(no prediction yet)'}${verdict ? ` (${verdict === 'true' ? 'right' : 'not right'})` : ''}`,
    );
  }
  return lines.join('\n');
}

/** The prompt for the lab's current state. */
export function tutorPrompt(lab) {
  const s = lab.state;
  const r = lab.readouts;
  const colleague = document.getElementById('colleague-text')?.value.trim();
  return [
    'I am learning how a vLLM replica\'s internals become its ops numbers (TTFT, TPOT, throughput, goodput, the latency-throughput knee, Little\'s Law). ' +
      'Please act as a demanding tutor who runs vLLM in production.',
    '',
    `My lab (a simulated replica): ${location.href}`,
    `- ${s.workload} traffic, ${s.preset}, --max-num-seqs ${s.maxNumSeqs}, chunked prefill ${s.chunkedPrefill ? `on (budget ${s.maxNumBatchedTokens})` : 'off'}, ` +
      `${s.mode} loop, SLOs TTFT ${formatMetric('slo_ttft_ms', s.sloTtftMs)} and TPOT ${formatMetric('slo_tpot_ms', s.sloTpotMs)}, knee judged on ${s.kneeRule}.`,
    `- At ${formatPercent(s.load)} of capacity: throughput ${formatRate(r.throughput_rps)}, goodput ${formatRate(r.goodput_rps)}, ` +
      `TTFT p50 ${formatSeconds(r.ttft_p50)} and p99 ${formatSeconds(r.ttft_p99)}, TPOT p99 ${formatSeconds(r.tpot_p99)}, ` +
      `num_requests_running ${formatMetric('num_requests_running', r.num_requests_running)}, num_requests_waiting ${formatMetric('num_requests_waiting', r.num_requests_waiting)}.`,
    `- Capacity ${formatRate(r.capacity_rps)}; SLO knee at ${formatPercent(r.knee_load)} (${formatRate(r.knee_rps)}); saturation at ${formatPercent(r.saturation_load)}; ` +
      `time in the batch at saturation ${formatSeconds(r.saturation_batch_s)}.`,
    '',
    'My predictions on the page:',
    predictions(),
    '',
    'My answer to "when should the fleet scale out, and why not just raise --max-num-seqs?":',
    colleague ? `"${colleague}"` : '(not written yet)',
    '',
    'Critique my predictions and my answer. In particular: which latency percentile my SLOs should be judged on and why a p50 or ' +
      'a mean hides the tail; how much margin below the knee a cold start of a few minutes (model load, CUDA-graph capture) forces; ' +
      'which signal and averaging window to autoscale on, with what hysteresis; and whether I applied Little\'s Law to the right ' +
      'part (running = throughput x time in the batch; in flight = throughput x end-to-end latency). Ask me one question at a time.',
  ].join('\n');
}

export function setup({ lab }) {
  const button = document.getElementById('tutor-copy');
  const box = document.getElementById('tutor-prompt');
  const status = document.getElementById('tutor-status');
  button.addEventListener('click', async () => {
    box.value = tutorPrompt(lab);
    box.hidden = false;
    try {
      await navigator.clipboard.writeText(box.value);
      status.textContent = 'Copied: paste it into your assistant.';
    } catch {
      box.select();
      status.textContent = 'Your browser did not allow copying: the prompt is selected below, copy it from there.';
    }
  });
}
