// What a vLLM engineer checks first (issue "Right for an expert"): Little's Law applied part by
// part, the replica's limits with the binding one named from the engine, and vLLM's names.
import fs from 'node:fs';
import path from 'node:path';
import { test, expect, inkedPixels, openPage, reach, setLab } from './helpers.mjs';

/** Commits `choice` in step `n`, reveals it, and returns the step's lab once it is idle. */
async function revealStep(page, n, choice) {
  const step = page.locator(`[data-step="${n}"]`);
  await step.locator(`input[value="${choice}"]`).check();
  await step.getByRole('button', { name: /Reveal/ }).click();
  const lab = step.locator('knee-lab');
  await lab.evaluate(async (el) => {
    await el.ready;
    await el.idle();
  });
  return lab;
}

/**
 * Ids of the shown selects whose chosen text (plus the arrow and padding) does not fit their box:
 * in the shadow root of `host` (a selector), or in the page when `host` is null; `renderedOnly`
 * also passes over selects that are not laid out.
 */
function cutSelects(page, host, { renderedOnly = false } = {}) {
  return page.evaluate(
    ([host, renderedOnly]) => {
      const root = host ? document.querySelector(host).shadowRoot : document;
      return [...root.querySelectorAll('select')]
        .filter((el) => {
          if (el.closest('[hidden]') || !el.selectedOptions[0] || (renderedOnly && el.offsetParent === null)) return false;
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.font = getComputedStyle(el).font;
          return ctx.measureText(el.selectedOptions[0].text).width + 28 > el.clientWidth;
        })
        .map((el) => el.id);
    },
    [host, renderedOnly],
  );
}

const artifacts = path.join(path.dirname(new URL(import.meta.url).pathname), 'test-results', 'screenshots');


test.describe('the limits chart', () => {
  // Workload and seats, the limit that must bind, and the words that say so.
  const rows = [
    [{ workload: 'rag', maxNumSeqs: 64 }, 'prefill', 'and prefill nearly tie'],
    [{ workload: 'chat', maxNumSeqs: 64 }, 'seq_cap', 'so the sequence cap binds'],
    [{ workload: 'rag', maxNumSeqs: 16 }, 'seq_cap', 'so the sequence cap binds'],
  ];
  for (const [state, binding, words] of rows) {
    test(`${state.workload} at ${state.maxNumSeqs} seqs: ${binding} binds, named from the engine`, async ({ page }) => {
      await openPage(page);
      await setLab(page, state);
      const lab = page.locator('#lab');
      const r = await lab.evaluate((el) => el.readouts);
      // The binding limit is the least one (ties go to prefill), and the engine's measured
      // saturation sits within 6% of it.
      expect(r[`limit_${binding}_rps`]).toBe(r.limit_rps);
      for (const other of ['seq_cap', 'kv_cache', 'prefill']) expect(r[`limit_${other}_rps`]).toBeGreaterThanOrEqual(r.limit_rps * 0.97);
      expect(Math.abs(r.limit_rps / r.capacity_rps - 1)).toBeLessThan(0.03);
      const sentence = lab.locator('#limits-sentence');
      await expect(sentence).toContainText(words);
      // A bar below the binding one (a tie the engine gives to prefill) is called a tie, not hidden.
      const lower = ['seq_cap', 'kv_cache'].find((k) => r[`limit_${k}_rps`] < r.limit_rps);
      if (lower) await expect(sentence).toContainText(/, so the (sequence cap|KV cache) and prefill nearly tie: either stops the replica at about that rate/);
      else await expect(sentence).not.toContainText('nearly tie');
      await expect(sentence).toContainText('the engine saturates at');
      await expect.poll(() => lab.locator('#chart-limits').evaluate(inkedPixels)).toBeGreaterThan(1500);
      await expect(lab.locator('#chart-limits')).toHaveAttribute('aria-label', new RegExp(words));
      await lab.locator('figure[data-panel="limits"]').screenshot({ path: path.join(artifacts, `limits-${state.workload}-${state.maxNumSeqs}.png`) });
    });
  }
});

test("the calculator follows the engine: the cap and its time in the batch with the batch full, the binding limit named", async ({ page }) => {
  await openPage(page);
  await setLab(page, { workload: 'chat' });
  await reach(page, 'sizing');
  await page.locator('#ll-use-knee').click();
  let r = await page.locator('#lab').evaluate((el) => el.readouts);
  await expect(page.locator('#ll-batch-s')).toHaveValue(String(Math.round(r.limit_seq_cap_batch_s * 100) / 100));
  await expect(page.locator('#ll-cap')).toHaveValue('64');
  // Where the cap binds, cap / that time is the chat replica's saturation within 5%.
  const qps = () => page.locator('[data-metric=ll_max_qps]').getAttribute('data-value').then(Number);
  expect(Math.abs((await qps()) / r.saturation_rps - 1)).toBeLessThan(0.05);
  await expect(page.locator('#ll-engine-why')).toContainText('so the sequence cap binds');
  await expect(page.locator('#ll-engine-why')).toContainText('running, each');
  // Where prefill binds (RAG) the batch never fills: the calculator's headline is still the
  // sequence cap's own limit, the one the sentence beside it quotes (here just under the
  // capacity), not cap / the time at saturation, which would read far above it.
  await setLab(page, { workload: 'rag' });
  r = await page.locator('#lab').evaluate((el) => el.readouts);
  await expect(page.locator('#ll-batch-s')).toHaveValue(String(Math.round(r.limit_seq_cap_batch_s * 100) / 100));
  await expect.poll(async () => Math.abs((await qps()) / r.limit_seq_cap_rps - 1)).toBeLessThan(0.005);
  expect(await qps()).toBeLessThan(r.capacity_rps * 1.03);
  expect(r.saturation_running).toBeLessThan(60); // why the batch time at saturation would overstate it
});

test('the page pairs each L with its own W and never calls TPOT inter-token latency', async ({ page }) => {
  await openPage(page);
  const text = await page.locator('main').evaluate((el) => el.textContent.replace(/\s+/g, ' '));
  expect(text).not.toMatch(/TPOT[^.]{0,40}\(inter-token latency\)/);
  expect(text).not.toMatch(/also called inter-token latency/);
  expect(text).not.toMatch(/cap ÷ latency/);
  expect(text).toContain('time in the batch');
  // The TPOT histogram goes by its own name, and the ITL histogram is never called TPOT's.
  expect(text).toContain('vllm:request_time_per_output_token_seconds');
  const signals = await page.locator('dl.signals').evaluate((dl) =>
    Object.fromEntries([...dl.querySelectorAll('dt')].map((dt) => [dt.textContent.trim(), dt.nextElementSibling.textContent])),
  );
  expect(signals['vllm:request_time_per_output_token_seconds']).toContain('The TPOT histogram, one value per request');
  expect(signals['vllm:inter_token_latency_seconds']).toMatch(/^ITL, one sample per gap/);
  expect(signals['vllm:inter_token_latency_seconds']).not.toContain('TPOT histogram');
});

test('/metrics holds the request histograms vLLM exports, and the panel judges the queue over a window', async ({ page }) => {
  await openPage(page);
  await setLab(page, { load: 0.6 });
  await reach(page, 'cluster');
  const text = await page.locator('#lab').evaluate((el) => el.metricsText());
  for (const name of [
    'vllm:time_to_first_token_seconds',
    'vllm:request_time_per_output_token_seconds',
    'vllm:inter_token_latency_seconds',
    'vllm:request_queue_time_seconds',
    'vllm:e2e_request_latency_seconds',
    'vllm:request_prefill_time_seconds',
    'vllm:request_decode_time_seconds',
  ]) {
    expect(text, name).toContain(`# TYPE ${name} histogram`);
    expect(text, name).toMatch(new RegExp(`^${name}_bucket\\{[^}]*le="\\+Inf"\\} \\d+`, 'm'));
  }
  // vLLM's request-latency bounds, 0.3 s to 7,680 s.
  expect(text).toMatch(/^vllm:request_queue_time_seconds_bucket\{[^}]*le="0\.3"\}/m);
  expect(text).toMatch(/^vllm:e2e_request_latency_seconds_bucket\{[^}]*le="7680\.0"\}/m);
  const reading = page.locator('#metrics-reading');
  await expect(reading).toContainText("Over the run's last");
  await expect(reading).not.toContainText('time to scale out');
  await expect(page.locator('#waiting-note')).toHaveAttribute('data-case', /^(steady|empty)$/);
  // The exact values set beside the buckets' estimates: all three, each the run's own readout.
  for (const m of ['ttft', 'tpot', 'itl']) {
    const shown = page.locator(`#cluster-readouts [data-live=${m}_p99]`);
    await expect(shown).toHaveText(/\d/);
    await expect(reading.locator(`[data-live=${m}_exact]`)).toHaveText(await shown.textContent());
  }
  // The buckets' estimates are histogram_quantile over the text's own buckets, from the engine:
  // the reading the element returns beside that very text.
  const { text: again, dashboard: d } = await page.locator('#lab').evaluate((el) => el.metricsReading());
  expect(again).toBe(text);
  const fmt = (v) => page.evaluate(async (x) => (await import('/js/format.js')).formatSeconds(x), v);
  const families = {
    ttft: 'vllm:time_to_first_token_seconds',
    tpot: 'vllm:request_time_per_output_token_seconds',
    itl: 'vllm:inter_token_latency_seconds',
  };
  for (const [m, family] of Object.entries(families)) {
    const q = d.p99[family];
    expect(q.lower < q.value && q.value <= q.upper, `${m}: ${JSON.stringify(q)}`).toBe(true);
    await expect(reading.locator(`[data-live=${m}_q99]`)).toHaveText(await fmt(q.value));
  }
  const running = d.values['vllm:num_requests_running'];
  expect(text).toMatch(new RegExp(`^vllm:num_requests_running\\{[^}]*\\} ${running}\\.0$`, 'm'));
  await setLab(page, { load: 1.1 });
  await expect(reading).toContainText('still rising');
  await expect(reading).toContainText('time to scale out');
  await expect(reading).not.toContainText('close to the run');
  const r = await page.locator('#lab').evaluate((el) => el.readouts);
  expect(r.waiting_window_s).toBeGreaterThan(0);
  expect(r.waiting_window_max).toBeGreaterThanOrEqual(r.waiting_window_mean);
});

test('one knee, named: the SLO knee by its rule, the p99 crossing and the saturation point, all from the sweep', async ({ page }) => {
  await openPage(page);
  await setLab(page, { load: 0.85 });
  const live = page.locator('#knee-live');
  let r = await page.locator('#lab').evaluate((el) => el.readouts);
  await expect(live).toContainText(`at least ${Math.round(r.attainment_target * 100)}% of requests meet both SLOs`);
  await expect(live).toContainText(`sits at ${Math.round(r.knee_load * 100)}% of capacity`);
  await expect(live).toContainText(`crosses its 2 s SLO at about ${Math.round(r.ttft_p99_crossing_load * 100)}% of capacity`);
  await expect(live).toContainText(`saturation point`);
  await expect(live).toContainText(`${Math.round(r.saturation_load * 100)}% of capacity`);
  // "The mean looks fine while p99 breaks": said exactly when the sweep shows it, at its load.
  const hides = await page.locator('#lab').evaluate((el) => {
    const slo = el.readouts.slo_ttft_s;
    const ps = el.sweep.points.filter((p) => p.offered_load >= 0.8 - 1e-9 && p.offered_load <= 1 + 1e-9);
    return ps.filter((p) => p.summary.ttft_s.mean <= slo && p.summary.ttft_s.p99 > slo).map((p) => p.offered_load).at(-1) ?? null;
  });
  const meanLive = page.locator('#mean-live');
  if (hides == null) await expect(meanLive).toHaveText('');
  else await expect(meanLive).toContainText(`At ${Math.round(hides * 100)}% of capacity the mean TTFT`);
  console.log(`mean inside the SLO while p99 breaks it, at the highest such load in 80-100%: ${hides}`);
  // The crossing sits below the attainment knee on this replica, and the page says so at the knee.
  expect(r.ttft_p99_crossing_load).toBeLessThan(r.knee_load);
  await setLab(page, { load: r.knee_load });
  await expect(live).toContainText('right at the SLO knee');
  if (r.knee_ttft_p99_s > r.slo_ttft_s) await expect(live).toContainText('judge the knee on p99');
  await expect(live).not.toContainText('where you want each replica at peak');
  // Judged on p99, the knee moves down to the crossing, and the text follows.
  await page.locator('#lab #knee-rule').selectOption('p99');
  await page.locator('#lab').evaluate((el) => el.idle());
  r = await page.locator('#lab').evaluate((el) => el.readouts);
  await expect(live).toContainText('TTFT p99 and TPOT p99 both stay within their SLOs');
  expect(r.knee_load).toBeLessThanOrEqual(r.ttft_p99_crossing_load + 1e-9);
  expect(r.knee_ttft_p99_s).toBeLessThanOrEqual(r.slo_ttft_s);
  await expect(page.locator('#lab').locator('#knee-rule')).toHaveValue('p99');
  // The choice is part of the link.
  await expect.poll(() => page.evaluate(() => location.hash)).toContain('slo.knee=p99');
});

test('a bad knee-rule attribute is an error naming it', async ({ page }) => {
  await openPage(page, '/lab.html');
  const lab = page.locator('knee-lab#lab');
  await lab.evaluate((el) => el.setAttribute('knee-rule', 'p50'));
  await expect(lab.locator('#knee-rule-error')).toHaveText('knee-rule: "p50" is not one of attainment, p99');
});

test('the colleague box flags the misconceptions, and the model answer carries the margin, the window and the hysteresis', async ({ page }) => {
  await openPage(page);
  const text = page.locator('#colleague-text');
  const flags = page.locator('#colleague-flags');
  await page.locator('#colleague-show').click();
  const answer = page.locator('#colleague-answer');
  for (const words of ['margin below the knee', 'averaged over the last few minutes', 'hysteresis', 'Not on GPU utilisation']) {
    await expect(answer).toContainText(words);
  }
  // Each misconception, written as a reader might, raises its own flag.
  const rows = [
    ['We should autoscale when GPU utilization passes 80% for five minutes.', 'GPU utilisation is the wrong signal'],
    ['Just raise max-num-seqs to 256 so more requests fit in a window of 5 minutes.', 'only helps if the KV cache has room'],
    ['Scale out once we are past the knee, over a 5 minute window.', 'scale with a margin below the knee'],
    ['Keep the p50 TTFT under 1 s, over a window of minutes.', 'A p50 (or mean) SLO hides the tail'],
    ['We should scale out when num_requests_waiting goes above 10.', 'Judge a signal over a window'],
  ];
  for (const [written, flag] of rows) {
    await text.fill(written);
    await expect(flags).toBeVisible();
    await expect(flags).toContainText(flag);
  }
  // A sound answer raises none.
  await text.fill(
    'Autoscale when num_requests_waiting, averaged over the last 5 minutes, keeps growing or TTFT p99 nears its SLO, with a margin ' +
      'below the knee for the cold start, and hysteresis with a cooldown before scaling down.',
  );
  await expect(flags).toBeHidden();
});

test('"Ask a tutor" writes a prompt with the lab link and numbers, the predictions and the colleague answer', async ({ page }) => {
  await openPage(page);
  await setLab(page, { load: 0.9 });
  await page.locator('[data-step="3"] input[value="flat"]').check();
  await page.locator('[data-step="3"] button.reveal').click();
  await page.locator('#colleague-text').fill('Scale out when GPU utilization is high.');
  await reach(page, 'worked');
  await page.locator('#tutor-copy').click();
  const prompt = page.locator('#tutor-prompt');
  await expect(prompt).toBeVisible();
  const text = await prompt.inputValue();
  const r = await page.locator('#lab').evaluate((el) => el.readouts);
  expect(text).toContain(page.url().split('#')[0]);
  expect(text).toContain('At 90% of capacity');
  expect(text).toContain(`SLO knee at ${Math.round(r.knee_load * 100)}%`);
  // The SLOs in the config's ms, written by the engine's formatter.
  expect(text).toContain('SLOs TTFT 2 s and TPOT 200 ms');
  expect(text).toContain('Neither moves much: the replica still has headroom (not right)');
  expect(text).toContain('"Scale out when GPU utilization is high."');
  for (const ask of ['percentile', 'cold start', 'hysteresis', "Little's Law", 'time in the batch']) expect(text).toContain(ask);
  await expect(page.locator('#tutor-status')).not.toBeEmpty();
});

test('the tear you can see: a linear latency axis by default with a log toggle, a mean line, p99/p50, and no steady state past 100%', async ({ page }) => {
  await openPage(page);
  await setLab(page, { load: 0.95 });
  const lab = page.locator('#lab');
  // The chart's own pixels: redrawn when the scale flips, and the state and link follow.
  const pixels = () => lab.locator('#chart-latency').evaluate((c) => c.toDataURL());
  const linear = await pixels();
  await expect(lab.locator('#latency-log')).not.toBeChecked();
  await lab.locator('#latency-log').check();
  await expect.poll(pixels).not.toBe(linear);
  expect(await lab.evaluate((el) => el.state.latencyScale)).toBe('log');
  await expect.poll(() => page.evaluate(() => location.hash)).toContain('latency-scale=log');
  await lab.locator('#latency-log').uncheck();
  await expect.poll(pixels).toBe(linear);
  // p99 / p50 as a readout, from the run.
  const r = await lab.evaluate((el) => el.readouts);
  expect(r.ttft_p99_over_p50).toBeCloseTo(r.ttft_p99 / r.ttft_p50, 9);
  await expect(lab.locator('[data-metric="ttft_p99_over_p50"]')).toContainText('×');
  // A ratio is not a latency: it is never marked against the TTFT SLO, while the p99 beside it is.
  expect(r.ttft_p99_over_p50).toBeGreaterThan(r.slo_ttft_s);
  await expect(lab.locator('[data-metric="ttft_p99_over_p50"] dd')).not.toHaveClass(/over|ok/);
  await expect(lab.locator('[data-metric="ttft_p99"] dd')).toHaveClass(r.ttft_p99 > r.slo_ttft_s ? /over/ : /ok/);
  await expect(lab.locator('figure[data-panel="latency"] figcaption')).toContainText('no steady state');
  await lab.locator('figure[data-panel="latency"]').screenshot({ path: path.join(artifacts, 'latency-linear-95.png') });
});

test("vLLM V1's defaults by GPU class are stated, from the engine's presets", async ({ page }) => {
  await openPage(page);
  await reach(page, 'cluster');
  const text = page.locator('#v1-defaults');
  await expect(text).toContainText('on an A100-80GB, --max-num-batched-tokens 2,048 and --max-num-seqs 256');
  await expect(text).toContainText('on an H100-SXM, --max-num-batched-tokens 8,192 and --max-num-seqs 1,024');
  await expect(page.locator('#knobs + ul')).toContainText('In vLLM V1 chunked prefill is on by default');
});

test('open and closed loops are named as vllm bench serve runs them, and coordinated omission only where it fits', async ({ page }) => {
  await openPage(page);
  const loops = page.locator('#loops + p');
  await expect(loops).toContainText('vllm bench serve --max-concurrency N');
  // Its default rate sends everything at once; Poisson arrivals take a finite --request-rate.
  await expect(loops).toContainText('with --request-rate R it sends Poisson arrivals');
  await expect(loops).toContainText('its default rate, inf, sends every prompt at once');
  const text = await page.locator('main').evaluate((el) => el.textContent.replace(/\s+/g, ' '));
  expect(text).not.toMatch(/This is coordinated omission/);
  expect(text).not.toMatch(/to capacity \(coordinated omission\)/);
});

test('a closed loop speaks of users and demand, and shows no knee at the end of its range', async ({ page }) => {
  await openPage(page);
  await setLab(page, { mode: 'closed', load: 1.1 });
  const lab = page.locator('#lab');
  await expect(lab.locator('label[for="offered-load"]')).toContainText('Users’ demand');
  await expect(lab.locator('#offered-load')).toHaveAttribute('aria-valuetext', /users offering 110% of capacity/);
  const r = await lab.evaluate((el) => el.readouts);
  const live = page.locator('#knee-live');
  await expect(live).toContainText(`You have ${r.users.toLocaleString('en-US')} users`);
  // This page's closed loop never pushes the replica past its SLOs, inside the sweep's range.
  expect(r.knee_beyond_sweep).toBeGreaterThanOrEqual(1.2);
  expect(r.knee_load ?? null).toBeNull();
  await expect(live).toContainText('no SLO knee here');
  await expect(live).not.toContainText('knee 120%');
  // No sentence left with holes in it, and the closed loop's ceiling is called the users', not the replica's.
  await expect(live).toContainText(`lies past the sweep's range: that holds at every load up to ${Math.round(r.knee_beyond_sweep * 100)}%`);
  await expect(live).not.toContainText('—');
  await expect(live).toContainText(`The most these users get done in the sweep is`);
  await expect(live).toContainText(`not the replica's`);
  expect(r.saturation_rps).toBeLessThan(r.capacity_rps);
  // The knee's readout says how far the sweep looked, not a bare dash.
  const kneeBox = lab.locator('.readouts [data-metric=knee_load] dd');
  await expect(kneeBox).toHaveText(`past ${Math.round(r.knee_beyond_sweep * 100)}%`);
  await expect(kneeBox).toHaveAttribute('title', /SLOs hold at every load swept/);
  await setLab(page, { mode: 'open' });
  await expect(lab.locator('label[for="offered-load"]')).toContainText('Offered load');
  await expect(lab.locator('.readouts [data-metric=knee_load] dd')).toHaveText(/^\d+%$/);
});

test('below 90% load throughput is at most 1.01x what arrived, and the lab says what the run drew', async ({ page }) => {
  await openPage(page);
  await setLab(page, { load: 0.5 });
  const sweep = await page.locator('#lab').evaluate((el) => el.sweep);
  const below = sweep.points.filter((p) => p.offered_load < 0.9);
  expect(below.length).toBeGreaterThan(10);
  for (const p of below) expect(p.summary.throughput_rps, `at ${p.offered_load}`).toBeLessThanOrEqual(1.01 * p.offered_rps);
  await expect(page.locator('#lab #offered-load-rate')).toContainText('this run drew');
});

test.describe('layout a phone reader and a contents reader see', () => {
  for (const width of [390, 1280]) {
    test(`${width} px: every contents link lands within 40 px of its heading`, async ({ page }) => {
      await page.setViewportSize({ width, height: 800 });
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await openPage(page);
      const links = await page.locator('nav a[href^="#"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      expect(links.length).toBeGreaterThan(5);
      const off = [];
      for (const href of links) {
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.locator(`nav a[href="${href}"]`).click();
        // Let lazy labs near the target load and lay out, as a reader's pause would.
        await page.waitForTimeout(600);
        await page.evaluate(() => Promise.all([...document.querySelectorAll('knee-lab')].map((el) => el.idle?.())));
        const top = await page.locator(href).evaluate((el) => el.getBoundingClientRect().top);
        if (top < -2 || top > 40) off.push(`${href}: ${Math.round(top)} px`);
      }
      expect(off, off.join(', ')).toEqual([]);
    });

    test(`${width} px: nothing overflows its box and no word breaks mid-word`, async ({ page }) => {
      await page.setViewportSize({ width, height: 800 });
      await openPage(page);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
      // Readout labels in the main lab: each word on one line (metric names wrap at '_', not inside a word).
      const broken = await page.locator('#lab').evaluate((host) =>
        [...host.shadowRoot.querySelectorAll('.readouts dt')]
          .filter((dt) => {
            const style = getComputedStyle(dt);
            const midWord = ['anywhere', 'break-word'].includes(style.overflowWrap) || style.wordBreak === 'break-all';
            return midWord || dt.scrollWidth > dt.clientWidth + 1;
          })
          .map((dt) => dt.textContent),
      );
      expect(broken).toEqual([]);
      // Selects show their whole choice.
      expect(await cutSelects(page, '#lab')).toEqual([]);
    });
  }
});

test('390 px: a table scrolled sideways keeps its row names in view, and the page selects show their whole choice', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 800 });
  await openPage(page);
  for (const id of ['loop-compare', 'knobs-compare']) {
    const region = page.locator(`#${id}`);
    await region.scrollIntoViewIfNeeded();
    // Filled once computed: the numbers set the columns' widths.
    await expect(region.locator('tbody td').first()).not.toHaveText('—', { timeout: 60_000 });
    const seen = await region.evaluate((box) => {
      const wide = box.scrollWidth > box.clientWidth + 1;
      box.scrollLeft = box.scrollWidth;
      const edge = box.getBoundingClientRect().left;
      const names = [...box.querySelectorAll('th[scope=row]')].map((th) => Math.round(th.getBoundingClientRect().left - edge));
      return { wide, scrolled: box.scrollLeft, names };
    });
    // The table is wider than a phone (else this checks nothing), and after scrolling to its last
    // column every row name still starts at the box's left edge.
    expect(seen.wide, `${id} should be wider than 390 px`).toBe(true);
    expect(seen.scrolled).toBeGreaterThan(0);
    expect(seen.names.length).toBeGreaterThan(2);
    expect(seen.names.every((x) => Math.abs(x) <= 1), `${id} row names at ${seen.names}`).toBe(true);
  }
  expect(await cutSelects(page, null, { renderedOnly: true })).toEqual([]);
});

test('why batch: the engine’s own decode-only and prefill-carrying step times, and the tick pattern named', async ({ page }) => {
  await openPage(page);
  const slot = page.locator('#clocks-slot');
  await slot.scrollIntoViewIfNeeded();
  await expect(slot.locator('knee-lab')).toHaveCount(1);
  await slot.locator('knee-lab').evaluate(async (el) => {
    await el.ready;
    await el.idle();
  });
  const r = await slot.locator('knee-lab').evaluate((el) => el.readouts);
  expect(r.prefill_step_s).toBeGreaterThan(3 * r.decode_step_s);
  const steps = page.locator('#steps-live');
  await expect(steps).toContainText(`takes ${Math.round(r.decode_step_s * 1000)} ms`);
  await expect(steps).toContainText(`${Math.round(r.prefill_step_s * 1000)} ms`);
  await expect(steps).toContainText('densely');
  await expect(steps).toContainText('sparsely');
});

test('why batch: decode-only steps at 10% and at the knee, and TPOT put on prefill chunks only where the sweep shows it', async ({ page }) => {
  await openPage(page);
  const slot = page.locator('#clocks-slot');
  await slot.scrollIntoViewIfNeeded();
  const tpot = page.locator('#batching-tpot');
  await expect(tpot).toHaveAttribute('data-case', /^(prefill|other)$/, { timeout: 30_000 });
  const m = await slot.locator('knee-lab').evaluate((el) => {
    const s = el.sweep;
    const at = (l) => s.points.find((p) => Math.abs(p.offered_load - l) < 1e-6).summary;
    const of = (pt) => ({
      running: pt.num_requests_running_mean,
      step: pt.steps.decode_only_mean_s,
      share: pt.steps.with_prefill / (pt.steps.with_prefill + pt.steps.decode_only),
      tpot: pt.tpot_s.p50,
    });
    return { lo: of(at(0.1)), knee: of(at(s.knee.offered_load)) };
  });
  // Batching pays: many times the sequences for a decode step only a little longer.
  const [batchX, stepX, tpotX] = [m.knee.running / m.lo.running, m.knee.step / m.lo.step, m.knee.tpot / m.lo.tpot];
  expect(batchX).toBeGreaterThan(5);
  expect(stepX).toBeGreaterThan(1);
  expect(stepX).toBeLessThan(batchX / 5);
  const live = page.locator('#batching-live');
  await expect(live).toContainText(`a step that only decodes takes ${Math.round(m.lo.step * 1000)} ms`);
  await expect(live).toContainText(`(${Math.round(m.knee.step * 1000)} ms)`);
  // The case is the run's: RAG's TPOT outgrows its decode step because prefill chunks ride more steps.
  const byPrefill = tpotX > stepX * 1.1 && m.knee.share > m.lo.share;
  expect(byPrefill, 'RAG at its knee: prefill chunks, not batch size, stretch TPOT').toBe(true);
  await expect(tpot).toHaveAttribute('data-case', 'prefill');
  await expect(tpot).toContainText(`${Math.round(m.knee.share * 100)}% of the steps also carry a prefill chunk`);
});

test("Step 1's timeline shows six requests from the middle of the run whose waits are typical of the load", async ({ page }) => {
  await openPage(page);
  const lab = await revealStep(page, 1, 'prefill');
  const r = await lab.evaluate((el) => el.readouts);
  const state = await lab.evaluate((el) => el.state);
  // Waits are typical: the shown six's mean wait is within 25% of the run's mean wait (at 85%
  // load the first requests after warm-up can have waited far less, or far more).
  expect(r.queue_mean).toBeGreaterThan(0);
  expect(Math.abs(r.timeline_wait_mean_s / r.queue_mean - 1)).toBeLessThan(0.25);
  // From the middle of the measured run, not its start: the warm-up is what the run simulated
  // but did not measure (every measured request completes at this load).
  const warmup = state.requests - r.requests_completed;
  expect(warmup).toBeGreaterThan(0);
  expect(r.timeline_first_id).toBeGreaterThan(warmup + (state.requests - warmup) / 4);
  await expect(lab.locator('#timeline-pick')).toContainText("nearest the run's mean wait");
  await expect.poll(() => lab.locator('#chart-timeline').evaluate(inkedPixels)).toBeGreaterThan(1000);
});

test('the page takes its settings from one schema (kneelab_sim::schema, written out by the build): the controls list its choices', async ({ page }) => {
  await openPage(page);
  const schema = await page.evaluate(async () => (await import('/pkg/kneelab_schema.js')).default);
  const lab = page.locator('#lab');
  const options = (id) => lab.evaluate((host, id) => [...host.shadowRoot.getElementById(id).options].map((o) => o.value), id);
  expect(await options('max-num-seqs')).toEqual(schema.options.max_num_seqs.map(String));
  expect(await options('max-num-batched-tokens')).toEqual(schema.options.max_num_batched_tokens.map(String));
  expect(await options('kv-cache-tokens')).toEqual(schema.options.kv_cache_tokens.map(String));
  // Their labels too: which size an 80 GB card holds is the schema's to say.
  const texts = (id) => lab.evaluate((host, id) => [...host.shadowRoot.getElementById(id).options].map((o) => o.textContent), id);
  expect(await texts('kv-cache-tokens')).toEqual(schema.options.kv_cache_labels);
  expect(schema.options.kv_cache_labels[schema.options.kv_cache_tokens.indexOf(schema.engine.kv_cache_tokens)]).toContain('80 GB card');
  expect(await options('workload')).toEqual(schema.workloads.map((w) => w.name));
  expect(await options('preset')).toEqual(schema.presets.map((p) => p.name));
  expect(await options('knee-rule')).toEqual(schema.options.knee_rules.map((c) => c.value));
  // The workload's label carries its preset's mean lengths; a workload change brings its SLOs.
  const label = await lab.evaluate((host) => host.shadowRoot.querySelector('#workload option[value=chat]').textContent);
  expect(label).toBe(`Chat (≈${schema.workloads[0].prompt_mean_tokens} in, ${schema.workloads[0].output_mean_tokens} out)`);
  await setLab(page, { workload: 'chat' });
  const s = await lab.evaluate((el) => el.state);
  expect([s.sloTtftMs, s.sloTpotMs]).toEqual([schema.workloads[0].slo_ttft_ms, schema.workloads[0].slo_tpot_ms]);
  // The slider's range and the page's cluster selects come from it too.
  const slider = await lab.evaluate((host) => {
    const el = host.shadowRoot.getElementById('offered-load');
    return [Number(el.min), Number(el.max)];
  });
  expect(slider).toEqual([schema.load_range.min * 100, schema.load_range.max * 100]);
  await reach(page, 'cluster');
  expect(await page.locator('#cluster-kv option').evaluateAll((os) => os.map((o) => o.value))).toEqual(
    schema.options.kv_cache_tokens.map(String),
  );
  expect(await page.locator('#cluster-kv option').allTextContents()).toEqual(schema.options.kv_cache_labels);
  // The worked example states the RAG SLOs from it.
  const rag = schema.workloads.find((w) => w.name === 'rag');
  await reach(page, 'worked');
  await expect(page.locator('[data-live=rag_slo_tpot]')).toHaveText(`${rag.slo_tpot_ms} ms`);
  // The premises the prose states are the schema's: the RAG prompt, the compared loads, the cap.
  const pct = (x) => `${Math.round(x * 100)}%`;
  await expect(page.locator('[data-step="1"] > p').first()).toContainText(`about ${rag.prompt_mean_tokens.toLocaleString('en-US')} tokens`);
  await expect(page.locator('#step3-title')).toContainText(`from ${pct(schema.compare_loads[0])} to ${pct(schema.compare_loads[1])}`);
  await expect(page.locator('[data-step="5"] > p').first()).toContainText(`--max-num-seqs ${schema.engine.max_num_seqs}`);
  // Step 5's peak: the question's text, its data-peak-qps and the engine's arithmetic agree.
  const peak = await page.locator('[data-step="5"]').getAttribute('data-peak-qps');
  await expect(page.locator('[data-step="5"] > p').first()).toContainText(`Your peak is ${peak} requests per second`);
  await expect(page.locator('label[for=step5-replicas]')).toContainText(`the ${peak} QPS peak`);
  await expect(page.locator('#worked-fleet + p')).toContainText(`--max-num-seqs ${schema.engine.max_num_seqs}`);
  expect(Number(await page.locator('#rag-load input:checked').getAttribute('value'))).toBe(schema.compare_loads[0]);
});

test('Step 3 draws TTFT by percentile at 85% and 100% on axes that stay put while the slider moves', async ({ page }) => {
  await openPage(page);
  const lab = await revealStep(page, 3, 'knee');
  const canvas = lab.locator('#chart-tail');
  await expect.poll(() => canvas.evaluate(inkedPixels)).toBeGreaterThan(2000);
  // The canvas's left strip (the y axis and its labels) and its bottom strip (the x axis), as pixels.
  const strips = () =>
    canvas.evaluate((c) => {
      const ctx = c.getContext('2d');
      const k = c.width / c.clientWidth;
      const left = ctx.getImageData(0, Math.round(40 * k), Math.round(44 * k), c.height - Math.round(40 * k)).data;
      const bottom = ctx.getImageData(0, c.height - Math.round(30 * k), c.width, Math.round(30 * k)).data;
      const all = ctx.getImageData(0, 0, c.width, c.height).data;
      const hash = (d) => d.reduce((h, v, i) => (h * 31 + v * (i % 7 + 1)) >>> 0, 7);
      return { left: hash(left), bottom: hash(bottom), all: hash(all) };
    });
  const at85 = await strips();
  await lab.evaluate(async (el) => {
    el.state = { load: 1.0 };
    await el.idle();
  });
  const at100 = await strips();
  expect(at100.all).not.toBe(at85.all);
  expect(at100.left).toBe(at85.left);
  expect(at100.bottom).toBe(at85.bottom);
  await expect(lab.locator('#tail-loads')).toHaveText('85% and 100%');
});

test('after a reveal the reader can try again: the guess clears, the answer folds away, the lab stays', async ({ page }) => {
  await openPage(page);
  const step = page.locator('[data-step="4"]');
  const reveal = step.getByRole('button', { name: /Reveal/ });
  const again = step.getByRole('button', { name: 'Try again' });
  await expect(again).toBeHidden();
  await step.locator('input[value="hold"]').check();
  await reveal.click();
  await expect(step.locator('[data-verdict]')).toHaveAttribute('data-correct', 'false');
  await expect(again).toBeVisible();
  await again.click();
  await expect(step.locator('.reveal-body')).toBeHidden();
  await expect(step.locator('input[value="hold"]')).not.toBeChecked();
  await expect(step.locator('input[value="collapse"]')).toBeEnabled();
  await expect(reveal).toBeDisabled();
  await step.locator('input[value="collapse"]').check();
  await expect(reveal).toBeEnabled();
  await reveal.click();
  await expect(step.locator('[data-verdict]')).toHaveAttribute('data-correct', 'true');
  await expect(step.locator('knee-lab')).toHaveCount(1);
  // Step 5's numbers clear too.
  const five = page.locator('[data-step="5"]');
  await five.scrollIntoViewIfNeeded();
  await five.locator('#step5-qps').fill('10');
  await five.locator('#step5-replicas').fill('10');
  await expect(five.getByRole('button', { name: /Reveal/ })).toBeEnabled({ timeout: 60_000 });
  await five.getByRole('button', { name: /Reveal/ }).click();
  await five.getByRole('button', { name: 'Try again' }).click();
  await expect(five.locator('#step5-qps')).toHaveValue('');
  await expect(five.getByRole('button', { name: /Reveal/ })).toBeDisabled();
});

test('the hero shows one engine step of the lesson’s replica, drawn by the engine, with a caption from that step', async ({ page }) => {
  await openPage(page);
  const canvas = page.locator('#hero-replica');
  await expect(canvas).toHaveAttribute('data-drawn', 'true');
  await expect.poll(() => canvas.evaluate(inkedPixels)).toBeGreaterThan(3000);
  // The same step, from the engine, for the numbers the caption must quote. It is found in
  // slices: the capacity takes several, so no one call blocks the page for long.
  const { s, calls, early, byRate, long } = await page.evaluate(async () => {
    const { loadKneelab } = await import('/js/wasm.js');
    const { workloadConfig } = await import('/js/lesson/sweeps.js');
    const { SCHEMA } = await import('/js/knee-lab.js');
    const wasm = await loadKneelab();
    const config = workloadConfig(document.getElementById('lab'), 'rag');
    config.load = { mode: 'open', offered_load: SCHEMA.defaults.load };
    const view = new wasm.ReplicaView(config);
    let early = '';
    try {
      view.snapshot();
    } catch (err) {
      early = err.message;
    }
    let calls = 1;
    while (view.step()) calls += 1;
    const s = view.snapshot();
    view.free();
    // A rate needs no capacity; a long run takes many calls, each a slice, not one long one.
    const stepsOf = (cfg) => {
      const view = new wasm.ReplicaView(cfg);
      let n = 1;
      while (view.step()) n += 1;
      const found = view.snapshot().t_s > 0;
      view.free();
      return [n, found];
    };
    const byRate = stepsOf({ ...config, load: { mode: 'open', rate_rps: 1 } });
    const long = stepsOf({ ...config, run: { requests: 50000 } });
    return { s, calls, early, byRate, long };
  });
  expect(early).toContain('call step() until it returns false');
  expect(calls).toBeGreaterThan(3);
  expect(byRate[1]).toBe(true);
  expect(byRate[0]).toBeLessThan(calls);
  expect(long[1]).toBe(true);
  expect(long[0]).toBeGreaterThan(calls + 10);
  expect(s.prefill_tokens).toBeGreaterThan(0);
  expect(s.seats.length).toBeLessThanOrEqual(s.max_num_seqs);
  const caption = page.locator('#hero-caption');
  await expect(caption).toContainText(`${s.seats.length} of its ${s.max_num_seqs} seats are taken`);
  await expect(caption).toContainText(`${s.prefill_tokens.toLocaleString('en-US')} prompt tokens`);
  await expect(caption).toContainText(`of a ${s.max_num_batched_tokens.toLocaleString('en-US')}-token budget`);
  expect(await canvas.getAttribute('aria-label')).toBe(await caption.textContent());
  // A dark reader gets the dark picture.
  const light = await canvas.evaluate((c) => c.getContext('2d').getImageData(2, 2, 1, 1).data.join());
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(() => canvas.evaluate((c) => c.getContext('2d').getImageData(2, 2, 1, 1).data.join())).not.toBe(light);
});

test('one readout registry: every number a lab reports is registered, and every name the page uses is a readout or the lesson’s own', async ({ page }) => {
  const www = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'www');
  await openPage(page, '/lab.html');
  const schema = await page.evaluate(async () => (await import('/pkg/kneelab_schema.js')).default);
  const registered = new Set(schema.readouts.map((r) => r.name));
  const labelled = new Set(schema.readouts.filter((r) => r.label).map((r) => r.name));
  // What the lab reports, in both load modes, is exactly the registry.
  const lab = page.locator('knee-lab').first();
  const reported = new Set();
  for (const mode of ['open', 'closed']) {
    const keys = await lab.evaluate(async (el, mode) => {
      await el.ready;
      el.state = { mode };
      await el.idle();
      return Object.keys(el.readouts);
    }, mode);
    keys.forEach((k) => reported.add(k));
  }
  expect([...reported].filter((k) => !registered.has(k)), 'reported but not registered').toEqual([]);
  expect([...registered].filter((k) => !reported.has(k)), 'registered but never reported').toEqual([]);
  // Every `metrics` list the lesson gives a lab names labelled readouts only.
  const sources = [
    fs.readFileSync(path.join(www, 'index.html'), 'utf8'),
    ...fs.readdirSync(path.join(www, 'js', 'lesson')).map((f) => fs.readFileSync(path.join(www, 'js', 'lesson', f), 'utf8')),
  ];
  const lists = sources.flatMap((src) => [...src.matchAll(/metrics(?:=|: )["']([a-z0-9_ ]+)["']/g)].map((m) => m[1]));
  expect(lists.length).toBeGreaterThan(4);
  const unknown = lists.flatMap((l) => l.split(/\s+/).filter(Boolean)).filter((n) => !labelled.has(n));
  expect(unknown, 'metrics names that are not labelled readouts').toEqual([]);
  // Every data-metric in the page is a readout, or a number the lesson's code fills itself.
  const lessonCode = sources.slice(1).join('\n');
  const names = [...new Set([...sources[0].matchAll(/data-metric="([a-z0-9_]+)"/g)].map((m) => m[1]))];
  expect(names.length).toBeGreaterThan(10);
  const orphans = names.filter((n) => !registered.has(n) && !new RegExp(`\\b${n}\\b`).test(lessonCode));
  expect(orphans, 'data-metric names neither registered nor filled by the lesson').toEqual([]);
  // Each readout formats by its registered unit.
  const text = await page.evaluate(async () => {
    const { formatMetric } = await import('/js/format.js');
    return [formatMetric('slo_attainment', 0.9), formatMetric('users', 12.4), formatMetric('ttft_p99_over_p50', 3.14), formatMetric('littles_l', 3.14)];
  });
  expect(text).toEqual(['90%', '12', '3.1×', '3.1']);
});

test('a step’s answer and its lab are content: changing the HTML changes the verdict and the lab', async ({ page }) => {
  await openPage(page);
  // An author's edit, as the page would be served with it.
  await page.evaluate(() => {
    const step = document.querySelector('[data-step="1"]');
    step.querySelector('fieldset').dataset.correct = 'network';
    step.querySelector('template[data-lab]').content.querySelector('knee-lab').setAttribute('panels', 'queue');
  });
  const lab = await revealStep(page, 1, 'network');
  await expect(page.locator('[data-step="1"] [data-verdict]')).toHaveAttribute('data-correct', 'true');
  await expect(page.locator('[data-step="1"] label.is-correct input')).toHaveAttribute('value', 'network');
  await expect(lab.locator('#chart-queue')).toBeVisible();
  await expect(lab.locator('#chart-timeline')).toBeHidden();
});

test("the worked fleet's ceiling says what the batch held at saturation, and never gives the cap two values unexplained", async ({ page }) => {
  await openPage(page);
  const box = page.locator('#fleet-box');
  await box.scrollIntoViewIfNeeded();
  await expect(box.locator('[data-metric=fleet_replicas_knee]')).toHaveAttribute('data-value', /\d+/);
  const running = Number(await box.locator('[data-live=fleet_sat_running]').textContent());
  const note = await box.locator('[data-live=fleet_fill_note]').textContent();
  // RAG on the A100: prefill binds, so at saturation the batch is not full and 64 ÷ W overstates the cap.
  expect(running).toBeGreaterThan(1);
  expect(running).toBeLessThan(63.5);
  expect(note).toContain('overstates what the cap allows');
  await expect(box).toContainText("The engine's model of each limit, with its resource full: the sequence cap ÷ time in the batch allows");
  await expect(box).not.toContainText('With the batch at its fullest');
});
