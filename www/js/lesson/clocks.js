// Beat 3: the two clocks. A timeline of a few simulated requests (queue wait, prefill, token
// drip, with TTFT and TPOT marked by the chart itself), made when the reader scrolls near, and
// the batching trade-off read off the same lab's sweep.

import {
  configKey,
  createLab,
  fill,
  formatMetric,
  formatPercent,
  formatSeconds,
  formatTimes,
  onUpdate,
  pointAt,
  say,
  whenNear,
} from './live.js';

export function setup() {
  const slot = document.getElementById('clocks-slot');
  const live = document.getElementById('clocks-live');
  const batching = document.getElementById('batching-live');
  const steps = document.getElementById('steps-live');
  whenNear(slot, () => {
    const lab = createLab(slot, {
      id: 'clocks-lab',
      workload: 'rag',
      panels: 'timeline',
      controls: 'load',
      metrics: 'ttft_p50 queue_p50 tpot_p50 num_requests_running',
    });
    let sweptFor = null;
    onUpdate(lab, ({ readouts: r, state, sweepDone }) => {
      fill(live, { load: formatPercent(r.load), ttft_p50: formatSeconds(r.ttft_p50), tpot_p50: formatSeconds(r.tpot_p50) });
      fill(steps, {
        decode_step: formatSeconds(r.decode_step_s),
        prefill_step: formatSeconds(r.prefill_step_s),
        prefill_x: formatTimes(r.prefill_step_s / r.decode_step_s),
        prefill_share: formatMetric('prefill_step_share', r.prefill_step_share),
      });
      const key = configKey(state);
      if (!sweepDone || sweptFor === key) return;
      const sweep = lab.sweep;
      const lo = pointAt(sweep, 0.1);
      const knee = sweep?.knee ? pointAt(sweep, sweep.knee.offered_load) : null;
      if (!lo || !knee) return;
      sweptFor = key;
      const dstep = (pt) => pt.steps.decode_only_mean_s;
      const share = (pt) => pt.steps.with_prefill / (pt.steps.with_prefill + pt.steps.decode_only);
      const [tpotX, stepX] = [knee.tpot_s.p50 / lo.tpot_s.p50, dstep(knee) / dstep(lo)];
      fill(batching, {
        run_lo: formatMetric('num_requests_running', lo.num_requests_running_mean),
        dstep_lo: formatSeconds(dstep(lo)),
        knee_load: formatPercent(sweep.knee.offered_load),
        run_knee: formatMetric('num_requests_running', knee.num_requests_running_mean),
        batch_x: formatTimes(knee.num_requests_running_mean / lo.num_requests_running_mean),
        dstep_x: formatTimes(stepX),
        dstep_knee: formatSeconds(dstep(knee)),
      });
      // TPOT is decode steps and the prefill chunks riding them: say which moved it, from the run.
      const byPrefill = tpotX > stepX * 1.1 && share(knee) > share(lo);
      say(document.getElementById('batching-tpot'), byPrefill ? 'prefill' : 'other', {
        tpot_lo: formatSeconds(lo.tpot_s.p50),
        tpot_knee: formatSeconds(knee.tpot_s.p50),
        tpot_x: formatTimes(tpotX),
        share_lo: formatPercent(share(lo)),
        share_knee: formatPercent(share(knee)),
      });
    });
  });
}
