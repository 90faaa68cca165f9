// The hero's picture: the lesson's replica (RAG on the default GPU, the baseline engine, at the
// lesson's starting load) during one engine step from the middle of a simulated run, drawn by
// the engine (`ReplicaView`), with a caption made from that step's numbers.

import { SCHEMA } from '../knee-lab.js';
import { grouped as count } from '../format.js';
import { formatPercent } from './live.js';
import { stepped, workloadConfig } from './sweeps.js';

/** The caption: what the step holds, in vLLM's terms. */
export function heroCaption(s, load) {
  const prefilling = s.seats.filter((x) => x.prefill).length;
  const decoding = s.seats.filter((x) => !x.prefill && x.step_tokens > 0).length;
  const idle = s.seats.length - prefilling - decoding;
  const free = s.max_num_seqs - s.seats.length;
  const spent = s.decode_tokens + s.prefill_tokens >= s.max_num_batched_tokens;
  let waiting = s.waiting === 0 ? 'none is waiting' : `${count(s.waiting)} ${s.waiting === 1 ? 'waits' : 'wait'} in the queue`;
  if (s.waiting > 0 && free > 0 && spent) {
    waiting += ` although ${count(free)} seats are free: the step's token budget is spent, so admission waits for the next step`;
  }
  return (
    `One simulated vLLM replica (${SCHEMA.model_label}, RAG traffic at ${formatPercent(load)} of its capacity) during one engine step from ` +
    `the middle of a run. ${count(s.seats.length)} of its ${count(s.max_num_seqs)} seats are taken: ${count(decoding)} decode one ` +
    `token each, ${count(prefilling)} ${prefilling === 1 ? 'prefills a chunk' : 'prefill chunks'} of ${count(s.prefill_tokens)} prompt ` +
    `tokens${idle > 0 ? `, ${count(idle)} sit this step out` : ''}; ${waiting}. This step computes ` +
    `${count(s.decode_tokens + s.prefill_tokens)} of a ${count(s.max_num_batched_tokens)}-token budget. Steps like this, one after ` +
    'another, are what TTFT, TPOT and the knee are made of.'
  );
}

export function setup({ wasm, lab }) {
  const canvas = document.getElementById('hero-replica');
  const caption = document.getElementById('hero-caption');
  const load = SCHEMA.defaults.load;
  const config = workloadConfig(lab, 'rag');
  config.load = { mode: 'open', offered_load: load };
  const failed = (err) => {
    caption.textContent = `The replica could not be simulated: ${err.message}`;
  };
  let view;
  try {
    view = new wasm.ReplicaView(config);
  } catch (err) {
    failed(err);
    return;
  }
  // In slices while the page loads: the capacity alone takes 50-90 ms in one go.
  stepped(view).then(() => show(view, canvas, caption, load), failed);
}

function show(view, canvas, caption, load) {
  const snapshot = view.snapshot();
  caption.textContent = heroCaption(snapshot, load);
  canvas.setAttribute('aria-label', caption.textContent);
  const dark = matchMedia('(prefers-color-scheme: dark)');
  let frame = 0;
  const draw = () => {
    frame = 0;
    try {
      view.draw(canvas, dark.matches);
    } catch (err) {
      caption.textContent = `The picture could not be drawn: ${err.message}`;
    }
  };
  const schedule = () => {
    frame ||= requestAnimationFrame(draw);
  };
  new ResizeObserver(schedule).observe(canvas);
  dark.addEventListener('change', schedule);
  draw();
  canvas.dataset.drawn = 'true';
}
