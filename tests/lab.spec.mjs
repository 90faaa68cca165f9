// The knee lab (<knee-lab>) in a real Chromium: it loads, reacts to the slider and toggles with
// engine numbers, redraws its canvases, rejects bad input without losing its charts, and is
// fast enough to feel instant. Runs against /lab.html, the lab alone on a page.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test, expect, accessibilityViolations, openPage, recordLocaleCalls, setLab, trapNext } from './helpers.mjs';

const LAB = 'knee-lab#lab';
const artifacts = path.join(path.dirname(new URL(import.meta.url).pathname), 'test-results', 'screenshots');

/** Waits until the lab has no sweep or point pending. */
async function idle(page) {
  await page.evaluate((sel) => document.querySelector(sel).idle(), LAB);
}

/** Moves the offered-load slider the way a drag does: value change plus an `input` event. */
async function setLoadPercent(page, pct) {
  await page.locator(`${LAB} #offered-load`).evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, pct);
  await idle(page);
}

/** A readout's raw value (Summary units) from its data-value attribute. */
async function metric(page, name) {
  const value = await page.locator(`${LAB} [data-metric="${name}"]`).getAttribute('data-value');
  expect(value, `readout ${name} has a data-value`).not.toBeNull();
  return Number(value);
}

/** Any readout the element computes, shown or not (its `readouts` property). */
async function readout(page, name) {
  return page.locator(LAB).evaluate((el, n) => el.readouts[n], name);
}

/** A fingerprint of every visible canvas's pixels, by id. */
async function canvasPixels(page) {
  return page.locator(LAB).evaluate((host) => {
    const out = {};
    for (const c of host.shadowRoot.querySelectorAll('figure:not([hidden]) canvas')) {
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let hash = 0;
      let inked = 0;
      for (let i = 0; i < data.length; i += 4) {
        hash = (hash * 31 + data[i] * 7 + data[i + 1] * 3 + data[i + 2]) | 0;
        if (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200) inked++;
      }
      out[c.id] = { hash, inked, width: c.width, height: c.height, cssWidth: c.clientWidth };
    }
    return out;
  });
}

async function openLab(page) {
  await openPage(page, '/lab.html');
  await idle(page);
}

test('the lab loads, shows engine readouts and draws every chart', async ({ page }) => {
  await openLab(page);
  for (const name of ['ttft_p50', 'ttft_p99', 'tpot_p99', 'e2e_p99', 'throughput_rps', 'goodput_rps', 'slo_attainment', 'num_requests_running', 'num_requests_waiting']) {
    const v = await metric(page, name);
    expect(Number.isFinite(v), `${name} = ${v}`).toBe(true);
  }
  // Friendly units are shown to people; raw units stay in data-value.
  await expect(page.locator(`${LAB} [data-metric=ttft_p99] dd`)).toHaveText(/\d( ms| s)$/);
  expect(await metric(page, 'goodput_rps')).toBeLessThanOrEqual(await metric(page, 'throughput_rps'));
  const pixels = await canvasPixels(page);
  expect(Object.keys(pixels).sort()).toEqual(['chart-latency', 'chart-queue', 'chart-throughput', 'chart-timeline']);
  for (const [id, p] of Object.entries(pixels)) expect(p.inked, `${id} has ink`).toBeGreaterThan(2000);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'lab-1280.png'), fullPage: true });
});

test('dragging the load from 85% to 100% tears p99 away and collapses goodput', async ({ page }) => {
  await openLab(page);
  await setLoadPercent(page, 85);
  const [p99At85, p50At85, goodAt85] = [await metric(page, 'ttft_p99'), await metric(page, 'ttft_p50'), await metric(page, 'goodput_rps')];
  await setLoadPercent(page, 100);
  const [p99At100, p50At100, goodAt100] = [await metric(page, 'ttft_p99'), await metric(page, 'ttft_p50'), await metric(page, 'goodput_rps')];
  console.log(`TTFT p99 ${p99At85.toFixed(2)} s -> ${p99At100.toFixed(2)} s; goodput ${goodAt85.toFixed(2)} -> ${goodAt100.toFixed(2)} req/s`);
  expect(p99At100).toBeGreaterThanOrEqual(2 * p99At85);
  expect(p99At100 - p50At100).toBeGreaterThan(p99At85 - p50At85);
  expect(goodAt100).toBeLessThan(goodAt85);
  // The SLO line is crossed: the readout says so.
  await expect(page.locator(`${LAB} [data-metric=ttft_p99] dd`)).toHaveClass(/over/);
  await page.screenshot({ path: path.join(artifacts, 'lab-100pct.png'), fullPage: true });
});

test('a closed loop at 100% cuts the TTFT tail at least 2x', async ({ page }) => {
  await openLab(page);
  await setLoadPercent(page, 100);
  const open = await metric(page, 'ttft_p99');
  await page.locator(`${LAB} #closed-loop`).check();
  await idle(page);
  const closed = await metric(page, 'ttft_p99');
  console.log(`TTFT p99 at 100%: open ${open.toFixed(2)} s, closed ${closed.toFixed(2)} s`);
  expect(open).toBeGreaterThanOrEqual(2 * closed);
  // The mapping between the slider and the users is explained beside the toggle, with live numbers.
  const users = await readout(page, 'users');
  await expect(page.locator(`${LAB} #closed-mapping`)).toContainText(`${users} users`);
  // And the honest comparison at the same throughput is there too.
  await expect(page.locator(`${LAB} #closed-mapping`)).toContainText('open loop at the same');
  await page.screenshot({ path: path.join(artifacts, 'lab-closed.png'), fullPage: true });
});

test('every chart redraws when the load changes', async ({ page }) => {
  await openLab(page);
  const before = await canvasPixels(page);
  await setLoadPercent(page, 105);
  const after = await canvasPixels(page);
  for (const id of Object.keys(before)) {
    expect(after[id].hash, `${id} changed`).not.toBe(before[id].hash);
  }
});

test('the canvases are sharp on HiDPI screens', async ({ browser }) => {
  const context = await browser.newContext({ deviceScaleFactor: 2, viewport: { width: 900, height: 900 } });
  const page = await context.newPage();
  await openLab(page);
  for (const [id, p] of Object.entries(await canvasPixels(page))) {
    expect(p.width, `${id} backing store`).toBe(2 * p.cssWidth);
  }
  await context.close();
});

test('the arrow keys move the slider and the numbers follow', async ({ page }) => {
  await openLab(page);
  const slider = page.locator(`${LAB} #offered-load`);
  await slider.focus();
  const start = Number(await slider.inputValue());
  const rateBefore = await metric(page, 'throughput_rps');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
  await idle(page);
  expect(Number(await slider.inputValue())).toBe(start - 5);
  await expect(page.locator(`${LAB} #offered-load-value`)).toHaveText(`${start - 5}%`);
  expect(await metric(page, 'throughput_rps')).toBeLessThan(rateBefore);
  await page.keyboard.press('ArrowRight');
  await idle(page);
  expect(Number(await slider.inputValue())).toBe(start - 4);
});

test('bad input shows an alert beside the control and keeps the last good charts', async ({ page }) => {
  await openLab(page);
  const good = await canvasPixels(page);
  const p99 = await metric(page, 'ttft_p99');
  const box = page.locator(`${LAB} #slo-ttft-ms`);
  const alert = page.locator(`${LAB} #slo-ttft-ms-error`);
  for (const [value, says] of [
    ['0', /slo\.ttft_ms.*above 0/],
    ['-50', /slo\.ttft_ms.*above 0/],
    ['', /enter a number/i],
    ['1e15', /slo\.ttft_ms.*at most/],
  ]) {
    await box.fill(value);
    await box.press('Tab');
    await idle(page);
    await expect(alert).toHaveAttribute('role', 'alert');
    await expect(alert).toHaveText(says);
    await expect(box).toHaveAttribute('aria-invalid', 'true');
    expect(await canvasPixels(page)).toEqual(good);
    expect(await metric(page, 'ttft_p99')).toBe(p99);
  }
  // A good value clears the alert and the lab carries on. The core's rule is "above 0", and the
  // box states no range of its own: half a millisecond is a valid (if harsh) SLO.
  await box.fill('0.5');
  await box.press('Tab');
  await idle(page);
  await expect(alert).toHaveText('');
  expect(await box.evaluate((el) => el.validity.valid)).toBe(true);
  expect(await readout(page, 'slo_ttft_s')).toBe(0.0005);
  await box.fill('3000');
  await box.press('Tab');
  await idle(page);
  await expect(alert).toHaveText('');
  await expect(box).not.toHaveAttribute('aria-invalid', 'true');
  expect(await readout(page, 'slo_ttft_s')).toBe(3);
});

test('a vanishing load attribute is an error naming the field, and the lab recovers', async ({ page }) => {
  // `load="5e-324"` once panicked inside the wasm (an infinite first gap) and killed every lab
  // on the page; `load="1e-300"` froze the tab. Both are below the core's lowest offered load.
  await openLab(page);
  const good = await canvasPixels(page);
  const alert = page.locator(`${LAB} #offered-load-error`);
  for (const value of ['5e-324', '1e-300']) {
    await page.locator(LAB).evaluate((el, v) => el.setAttribute('load', v), value);
    await idle(page);
    await expect(alert).toHaveText(/load\.offered_load: must be from 0\.001/);
    expect(await canvasPixels(page)).toEqual(good);
  }
  // A good load clears the alert and the engine still answers.
  await page.locator(LAB).evaluate((el) => el.setAttribute('load', '0.9'));
  await idle(page);
  await expect(alert).toHaveText('');
  expect(await metric(page, 'ttft_p99')).toBeGreaterThan(0);
});

test('an engine change re-sweeps: chunked prefill off makes TPOT worse', async ({ page }) => {
  await openLab(page);
  await setLoadPercent(page, 80);
  const chunked = await metric(page, 'tpot_p99');
  await page.locator(`${LAB} #chunked-prefill`).uncheck();
  await idle(page);
  await expect(page.locator(`${LAB} #max-num-batched-tokens`)).toBeDisabled();
  const unchunked = await metric(page, 'tpot_p99');
  console.log(`TPOT p99 at 80%: chunked 2048 ${(chunked * 1e3).toFixed(0)} ms, unchunked ${(unchunked * 1e3).toFixed(0)} ms`);
  expect(unchunked).toBeGreaterThan(chunked);
});

test('a KV cache too small for the batch makes vLLM preempt', async ({ page }) => {
  await openLab(page);
  await setLoadPercent(page, 95);
  expect(await readout(page, 'num_preemptions')).toBe(0);
  // The hint under the control says how this run's cache fared, from the run.
  await expect(page.locator(`${LAB} #kv-hint`)).toHaveText('Holds this batch: no preemption in this run.');
  const roomy = await readout(page, 'kv_cache_usage');
  await page.locator(`${LAB} #kv-cache-tokens`).selectOption('50000');
  await idle(page);
  const preemptions = await readout(page, 'num_preemptions');
  await expect(page.locator(`${LAB} #kv-hint`)).toHaveText(
    `Too small for this batch: ${preemptions.toLocaleString('en-US')} preemption${preemptions === 1 ? '' : 's'} in this run (evicted, recomputed later).`,
  );
  const tight = await readout(page, 'kv_cache_usage');
  console.log(`at 95%: KV cache used ${(roomy * 100).toFixed(1)}% of 440k tokens, ${(tight * 100).toFixed(1)}% of 50k with ${preemptions} preemptions`);
  expect(preemptions).toBeGreaterThan(0);
  // The same requests in a cache a ninth the size: a far larger share of it in use, and full at
  // times (so it preempts).
  expect(tight).toBeGreaterThan(1.5 * roomy);
});

test('controls are labelled, keyboard reachable, and a polite live summary follows the numbers', async ({ page }) => {
  await openLab(page);
  const host = page.locator(LAB);
  for (const label of ['Offered load', 'Closed loop', '--enable-chunked-prefill', '--max-num-seqs', '--max-num-batched-tokens', 'KV cache (tokens)', 'TTFT SLO (ms)', 'TPOT SLO (ms)', 'GPU (Llama-3-8B)', 'Workload', '--burstiness']) {
    await expect(host.getByLabel(label, { exact: false }).first()).toBeVisible();
  }
  await expect(host.locator('#live-summary')).toHaveAttribute('aria-live', 'polite');
  await expect(host.locator('#live-summary')).toContainText('TTFT p99');
  // Tab order starts at the slider and walks the controls in reading order.
  await page.locator('h1').click();
  await page.keyboard.press('Tab');
  const first = await page.evaluate((sel) => document.querySelector(sel).shadowRoot.activeElement?.id, LAB);
  expect(first).toBe('offered-load');
  await page.keyboard.press('Tab');
  expect(await page.evaluate((sel) => document.querySelector(sel).shadowRoot.activeElement?.id, LAB)).toBe('closed-loop');
});

test('usable 360 px wide: no horizontal scroll, charts fit', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 360, height: 800 } });
  const page = await context.newPage();
  await openLab(page);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  for (const [id, p] of Object.entries(await canvasPixels(page))) {
    expect(p.cssWidth, id).toBeLessThanOrEqual(340);
    expect(p.inked, `${id} has ink`).toBeGreaterThan(1000);
  }
  await page.screenshot({ path: path.join(artifacts, 'lab-360.png'), fullPage: true });
  await context.close();
});

test('dark mode follows prefers-color-scheme', async ({ browser }) => {
  const context = await browser.newContext({ colorScheme: 'dark' });
  const page = await context.newPage();
  await openLab(page);
  // The chart background is dark: sample a corner pixel.
  const corner = await page.locator(LAB).evaluate((host) => {
    const c = host.shadowRoot.getElementById('chart-latency');
    return [...c.getContext('2d').getImageData(2, 2, 1, 1).data].slice(0, 3);
  });
  expect(Math.max(...corner)).toBeLessThan(80);
  await page.screenshot({ path: path.join(artifacts, 'lab-dark.png'), fullPage: true });
  await context.close();
});

test('timing: slider input to readout, and a parameter change to all charts redrawn', async ({ page }) => {
  await openLab(page);
  const slider = page.locator(`${LAB} #offered-load`);
  await slider.focus();
  // A drag: 40 moves, a frame apart, across the interesting range.
  await setLoadPercent(page, 80);
  await page.evaluate((sel) => { document.querySelector(sel).timings.input.length = 0; }, LAB);
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press(i < 25 ? 'ArrowRight' : 'ArrowLeft');
    await page.waitForTimeout(16);
  }
  await idle(page);
  // Parameter changes: each re-measures capacity and re-sweeps 24 load points.
  await page.evaluate((sel) => { document.querySelector(sel).timings.param.length = 0; }, LAB);
  for (const id of ['#chunked-prefill', '#closed-loop', '#chunked-prefill', '#closed-loop']) {
    await page.locator(`${LAB} ${id}`).click();
    await idle(page);
  }
  const { input, param } = await page.evaluate((sel) => document.querySelector(sel).timings, LAB);
  const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.95 * xs.length))];
  const line = `input->readout p95 ${p95(input).toFixed(1)} ms over ${input.length} inputs; ` +
    `parameter change->all charts ${param.map((t) => t.toFixed(0)).join(', ')} ms (max ${Math.max(...param).toFixed(0)} ms)`;
  console.log(`TIMING ${line}`);
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, 'timings.txt'), `${line}\n`);
  expect(input.length).toBeGreaterThanOrEqual(20);
  expect(param.length).toBe(4);
  // Ceilings with room for a slower CI machine (here: 19-22 ms and 140-300 ms): the slider's
  // answer within 34 ms at the 95th percentile, and every chart redrawn within a second.
  expect(p95(input)).toBeLessThanOrEqual(34);
  expect(Math.max(...param)).toBeLessThan(1000);
});

test('a lab’s readings below its charts wait for its point, not for its whole sweep', async ({ page }) => {
  await openLab(page);
  const lab = page.locator(LAB);
  await lab.evaluate((el) => el.metricsText()); // the third module, fetched once
  // A long run: its sweep takes about a second after the point is back.
  const early = await lab.evaluate(async (el) => {
    el.setAttribute('requests', '20000');
    const text = await el.metricsText();
    return { text, sweepDone: el.sweepDone };
  });
  expect(early.sweepDone).toBe(false);
  expect(early.text).toContain('vllm:num_requests_running{');
  // The point the reading came from is the one the settled lab shows.
  const settled = await lab.evaluate(async (el) => {
    await el.idle();
    return { text: await el.metricsText(), sweepDone: el.sweepDone };
  });
  expect(settled.sweepDone).toBe(true);
  expect(settled.text).toBe(early.text);
});

test('opening a lab loads no locale data: its counts are grouped as en-US writes them, without Intl', async ({ page }) => {
  await recordLocaleCalls(page);
  await openLab(page);
  await page.locator(LAB).evaluate((lab) => lab.idle());
  expect(await page.evaluate(() => window.localeCalls)).toEqual([]);
  // The markup's counts, as en-US writes them.
  await expect(page.locator(`${LAB} #max-num-batched-tokens option`).first()).toHaveText(/^\d{1,3}(,\d{3})*$/);
  const pairs = await page.evaluate(async () => {
    const { grouped } = await import('/js/format.js');
    const values = [0, 7, 999, 1000, 2047.6, 12345, 131072, 1234567, 98765432109, -1234, -0.2];
    return values.map((v) => [grouped(v), Math.round(v).toLocaleString('en-US')]);
  });
  for (const [ours, intl] of pairs) expect(ours).toBe(intl === '-0' ? '0' : intl);
});

test('the lab alone breaks no WCAG 2.2 A or AA rule axe-core checks, light or dark, nor once a change fails', async ({ page }) => {
  await openLab(page);
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.locator(LAB).evaluate((lab) => lab.idle());
    expect(await accessibilityViolations(page), scheme).toEqual([]);
  }
  // A refused value is named beside its control, and that breaks nothing either.
  await page.locator(LAB).evaluate((lab) => lab.setAttribute('max-num-seqs', 'lots'));
  await expect(page.locator(`${LAB} #max-num-seqs-error`)).toHaveText(/"lots" is not a decimal number/);
  expect(await accessibilityViolations(page), 'with an error shown').toEqual([]);
});

test('a lab draws its charts a frame’s time at a time: the rest on the next frame, those left first when new data comes', async ({ page }) => {
  await openLab(page);
  const frames = await page.locator(LAB).evaluate(async (host) => {
    const { Painter } = await import('/js/knee-lab-paint.js');
    const panels = ['latency', 'throughput', 'queue', 'timeline'];
    let drawn = [];
    const slow = (ms) => {
      const t = performance.now();
      while (performance.now() - t < ms);
    };
    // The lab's own markup and numbers; drawing that takes 5.5 ms a chart.
    const core = {
      panels,
      state: host.state,
      readouts: host.readouts,
      sim: { lab: { setLatencyLog() {}, draw: (panel) => (slow(5.5), drawn.push(panel), true) }, crashed: () => false },
      alerts: { showError: (err) => { throw err; } },
      feed: { redraw() {} },
    };
    const painter = new Painter(host, host.shadowRoot, core);
    const frame = () => {
      drawn = [];
      painter.draw(performance.now());
      return [...drawn, painter.pending];
    };
    painter.redrawAll();
    const out = [frame()];
    painter.redrawAll(); // new data before the rest was drawn
    out.push(frame());
    core.panels = ['latency', 'throughput', 'timeline']; // the one left is hidden meanwhile
    out.push(frame());
    painter.redrawAll();
    out.push(frame());
    return out;
  });
  // 5.5 ms a chart and 16 ms a frame: three charts a frame, the third past the frame's time.
  expect(frames).toEqual([
    ['latency', 'throughput', 'queue', true],
    ['timeline', 'latency', 'throughput', true],
    [false],
    ['latency', 'throughput', 'timeline', false],
  ]);
});

test('every control change: first redraw within 150 ms (p95), the whole sweep within 1 s, no long task over 50 ms', async ({ page }) => {
  await openLab(page);
  await idle(page);
  const r = await page.evaluate(async (sel) => {
    const lab = document.querySelector(sel);
    const root = lab.shadowRoot;
    const longTasks = [];
    new PerformanceObserver((list) => list.getEntries().forEach((e) => longTasks.push([e.startTime, e.duration]))).observe({ type: 'longtask' });
    const select = (id, value) => () => {
      const el = root.getElementById(id);
      el.value = value;
      el.dispatchEvent(new Event('change', { bubbles: true }));
    };
    const click = (id) => () => root.getElementById(id).click();
    const number = (id, value) => () => {
      const el = root.getElementById(id);
      el.value = String(value);
      el.dispatchEvent(new Event('change', { bubbles: true }));
    };
    const slide = (id, value) => () => {
      const el = root.getElementById(id);
      el.value = String(value);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    };
    const changes = [
      ['closed loop', click('closed-loop')],
      ['open loop', click('closed-loop')],
      ['burstiness', slide('burstiness', 0)],
      ['chunked prefill off', click('chunked-prefill')],
      ['chunked prefill on', click('chunked-prefill')],
      ['max-num-batched-tokens', select('max-num-batched-tokens', root.getElementById('max-num-batched-tokens').options[0].value)],
      ['max-num-seqs', select('max-num-seqs', root.getElementById('max-num-seqs').options[0].value)],
      ['kv cache', select('kv-cache-tokens', root.getElementById('kv-cache-tokens').options[0].value)],
      ['TTFT SLO', number('slo-ttft-ms', 1500)],
      ['TPOT SLO', number('slo-tpot-ms', 120)],
      ['knee rule', select('knee-rule', root.getElementById('knee-rule').options[1].value)],
      ['GPU', select('preset', root.getElementById('preset').options[1].value)],
      ['workload', select('workload', root.getElementById('workload').options[0].value)],
    ];
    const rows = [];
    for (const [name, change] of changes) {
      await lab.idle();
      await new Promise((done) => setTimeout(done, 50));
      const first = new Promise((done) => lab.addEventListener('kneelab-update', () => done(performance.now()), { once: true }));
      const t0 = performance.now();
      change();
      const drawn = await first;
      await lab.idle();
      rows.push({ name, t0, first: drawn - t0, done: performance.now() - t0, sweepDone: lab.sweepDone });
    }
    // Each long task, by the change it followed.
    const tasks = longTasks.map(([start, duration]) => {
      const row = [...rows].reverse().find((x) => x.t0 <= start);
      return { duration, after: row ? `${row.name} +${(start - row.t0).toFixed(0)} ms` : 'before the first change' };
    });
    return { rows, longTasks: tasks };
  }, LAB);
  const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.95 * xs.length))];
  const firsts = r.rows.map((x) => x.first);
  const dones = r.rows.map((x) => x.done);
  const line = `first redraw p95 ${p95(firsts).toFixed(0)} ms (max ${Math.max(...firsts).toFixed(0)}), whole sweep max ${Math.max(...dones).toFixed(0)} ms, ` +
    `long tasks ${r.longTasks.length} (max ${Math.max(0, ...r.longTasks.map((t) => t.duration)).toFixed(0)} ms${r.longTasks.map((t) => `; ${t.duration.toFixed(0)} ms after ${t.after}`).join('')}) over ${r.rows.length} changes: ` +
    r.rows.map((x) => `${x.name} ${x.first.toFixed(0)}/${x.done.toFixed(0)}`).join(', ');
  console.log(`CHANGES ${line}`);
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, 'changes.txt'), `${line}\n`);
  for (const row of r.rows) expect(row.sweepDone, row.name).toBe(true);
  expect(p95(firsts)).toBeLessThanOrEqual(150);
  expect(Math.max(...dones)).toBeLessThanOrEqual(1000);
  expect(Math.max(0, ...r.longTasks.map((t) => t.duration))).toBeLessThanOrEqual(50);
});

// The budget was 200 KB; the typed wasm boundary, exact ITL tails, trap recovery and strict
// attribute parsing took the page from 192 to 207 KB; the limits chart, Little's Law per part,
// vLLM's request histograms, the knee rule, the latency chart's mean and unsteady region, step
// kinds and the lesson's computed sentences to 225 KB (the wasm from 136 to 142 KB of it; building
// the engine for size instead of speed would save 4 KB but slow slider input to readout from 32 to
// 45 ms). The TTFT-by-percentile chart (3.4 KB of wasm), the page's schema module (1 KB) and the
// hero's picture of one engine step (5.5 KB, wasm and module) took it to about 239 KB. Moving the
// lab's experiments into their own size-optimised crate won 0.3 KB; the V1-calibrated cost model
// (a step-time table, a per-sequence term), vLLM bench's burst load and client-side TTFT and E2E
// (the frontend's cost) added 2.9 KB, the lab's --burstiness control 0.4 KB, giving a removed
// lab's memory back and applying a state set before the element upgrades 0.4 KB, to about 243.8 KB. (Joint length tables stay out of the wasm: kneelab-sim's `empirical` feature, 7 KB, is
// the CLI's.) Embedding (a theme and a host page's --kl-* colours reaching the charts, a site's
// own theme toggle followed, stale charts marked, `ready` rejecting with a bad attribute, the
// wasm's MIME type checked and said, the hash keyed by attribute names) added 3.9 KB, to about
// 247.7 KB. The engine's lazy cohort of decoding requests made a step cost O(what changes), after
// which building kneelab-sim for size (opt-level "s", not 3) no longer slows the slider: the page
// fell to 238.9 KB. Measuring the capacity a slice at a time (so a setting change leaves no long
// task) added 1.4 KB, to 240.7 KB; the knee sentences as page content (templates a course author
// edits) 0.4 KB, to 241.3 KB (the lab alone 190.9 KiB). Serving the pages as esbuild bundles,
// minified (the modules were served unminified, compressed one by one), took the page to
// 215.7 KiB and the lab alone to 178.5 KiB. Of the page's 220,851 bytes: the wasm 161,741, the
// HTML 17,706, the lesson's bundle 15,252, the element and shared chunks 17,171, the wasm glue
// 4,912, the CSS 3,881, the icon 184; "Your replica on its knee" is in those, its form and
// sentences in the HTML, its module loaded as the section nears and its reader, a second wasm
// module, only when a reader pastes. (Building kneelab-sim at opt-level "z" would save 2.4 KB of
// wasm, but a setting change's whole sweep then takes 1.3-1.4 s, past its 1 s bar.) The replica
// chart's playing parts (TTFT clocks, arrivals, preemptions, completions; the hero draws with the
// same chart) and the engine's step trace added 5.6 KB of wasm, to 221.3 KiB. The replica player
// (the `replica` panel: its data export, the whole run's queue strip, the windows traced on
// request, and its module) added 9.7 KiB, to 231.0 KiB (the wasm 174,788 bytes); the lesson's
// text for it and the fleet section's heading and loader (its lab, text and wasm module load as
// the section nears) 1.2 KiB, to 232.2 KiB. Running the CLI's random numbers and libm's
// functions in the page (so the page and the tests agree to the bit), one formatter in the wasm
// for every readout's unit, and the lesson's conditional sentences as templates in the HTML
// (each case's words, not one sentence assembled in JS) added 3.6 KiB, to 235.8 KiB (the lab
// alone 197.5 KiB; the wasm 177,602 bytes, the HTML 20,485). Splitting the element into modules
// (a core, a simulator handle, the form, the words; +550 bytes of the element's chunk), the
// schema's table of settings by Config path (+433) and a lab's own checks of its load and run
// length in the wasm (+208), and the core's recorder and batch behind methods (+0.5 KB of wasm)
// took it to 237.4 KiB, the lab alone 199.0 KiB (the wasm 178,278 bytes). A histogram bin found from the float's bits (+65 bytes of wasm), the calculator opening on Step 5's replica (+80 of the lesson's bundle) and SLOs in ms written by the engine's formatter (+44 of wasm) took the page to 237.7 KiB (243,384 bytes). Each sweep point's own judgement of its p99s against the SLOs (so the page no longer compares them itself) and percentiles selected in ascending order (+460 bytes of wasm together), the Step 5 question's cap and peak filled from the schema and the article, and the knee's readout saying how far the sweep looked (+190 of HTML, the rest in the bundles) took it to 238.2 KiB (243,957 bytes), the lab alone 199.7 KiB (204,510). Stripping the wasm's custom sections saved 183 bytes; /metrics telling a request cut off at its max_tokens ("length") from one that stopped on its own ("stop") added 184, to 244,035 bytes; reserving room for a run's measured samples up front (a 24-point sweep's peak memory 13.2 to 11.4 MiB natively) 78, to 244,113; the prose naming the baseline engine filled from the schema 39, to 244,152 (the lab alone 204,589).
// Until here the budget counted each file as `gzip -9` would compress it; from here it counts the
// bodies as the browser received them (`Content-Encoding: gzip`). `serve` sends each file's twin
// compressed once at build time by Zopfli, a gzip stream 4.7% smaller: the page 232,530 bytes
// (gzip -9: 244,116), the lab alone 194,443 (204,574), the wasm 169,609 (177,782). Reading
// configs with a deserializer of the boundary's own (crates/web/src/read.rs) instead of
// serde-wasm-bindgen's inside serde_path_to_error took the page to 226,384 bytes, the lab alone to
// 188,297 (the wasm 164,041). Moving the replica player into the third module, fetched when a
// `replica` panel first comes near (it runs the lab's point from the lab's own capacity, which
// the main module now exports for +480 bytes), took the page to 221,430 bytes, the lab alone to
// 183,343 (the wasm 159,246). Setting up the beats below the knee (the calculator, "On your
// cluster" with its /metrics panel, the worked examples and the tutor) only as they come near,
// their modules loaded then, took the page to 216,581 bytes (main.js 13,418 to 6,145, with 4,358
// of chunks it shares with them). Reading a struct only from an object (never from the list of
// its fields, which serde's derive also takes and the CLI now refuses too) left every struct's
// derived `visit_seq` out of the wasm: the page 213,251 bytes, the lab alone 180,013 (the wasm
// 155,916). Ordering a sweep's points by insertion, the one stable sort the wasm held, took the
// page to 211,236 bytes, the lab alone to 177,998. The readouts kept as a list, not a BTreeMap
// (the map's code was in the wasm for them alone), and the sizing error's `{:e}` written by hand:
// the page 208,319, the lab alone 175,081 (the wasm 150,984). The pages' lines unindented by the
// build (but in `<pre>` and `<textarea>`): the HTML 19,791 to 19,107, the page 207,635, the lab
// alone 175,065. The replica player's own handling of a trap in its module (+59 bytes of the
// element's chunk): the page 207,695, the lab alone 175,125. A review's clean-up (dead code,
// comments, one await) left the wasm 44 bytes larger, as code generation moved: the page 207,740,
// the lab alone 175,169. The engine's own functions (`simulate`, `sweep`, `size`) and the lab's
// readings below its charts (the loop comparison and the /metrics text, now computed from the
// lab's config and capacity) moved to the third module, fetched when first needed: the wasm
// 151,028 to 142,146, the page 199,075 (under the 200,000 bytes the schema's issue set), the lab
// alone 166,288. The bars below are what this reached. A routed replica's load stated in its
// scenario (Load::Routed) added 53 bytes of wasm: the page 199,030 to 199,083, the lab alone
// 166,279 to 166,332, so the lab's bar rose by 100 bytes; the page's stayed. A run keeping four
// numbers a request instead of nine (the phases computed from them when a scrape asks) halves
// what a lab holds for its sweeps' runs (at 20,000 requests a point, both sweeps: 62 MB to
// 28 MB) and cost 166 bytes of wasm (about 50 of them a long run's longer capacity measurement):
// the page 199,030 to 199,196, the lab alone 166,274 to 166,440, so both bars rose by 100 bytes.
// "Steady tails" (a lab's point re-run with the engine's most requests, whose p99 holds still
// across seeds) runs in the third module, fetched on the click, so the first load carries only
// its button and script (with its crash handling, about 530 bytes of the element's chunk) and two
// sentences of the lesson's: the page 199,830 (still under the 200,000 the schema's issue set), the
// lab alone 166,979. Its note then set the steady TTFT p99 beside the usual run's (the usual
// short run reads the tail low, as Step 3 now says in about the words it had): 96 bytes of the
// element's chunk, the page 199,944, the lab alone 167,075, so both bars rose by 100 bytes.
// Token counts rounded and floored by a cast rather than by `round` and `floor` (library calls),
// and a normal pair's sine and cosine from one `sincos`, took 649 bytes off the wasm: the page
// 199,295, the lab alone 166,426. The replica's clock then drew its ring with the same sincos
// (127 bytes): the page 199,168, the lab alone 166,299, and the bars came down by 650 and 700.
// The note then said the charts draw the usual run (22 bytes): 199,195 and 166,321. A histogram
// bin guessed from a quartic rather than a quadratic, its edges a fixed-size array, took 116
// bytes off the wasm: the page 199,027, the lab alone 166,150, and the bars came down by 100.
// A finished request's place in the running order kept on the request, not searched for (3% of a
// native RAG run), added 118: the page 199,145, the lab alone 166,268. The replica player's script
// and its controls loaded when a `replica` panel first comes near (only its markup and styles in
// every lab): the page 198,163, the lab alone 165,263, and the bars came down by 900. The lab
// alone then named the page's icon (its tab had none, and a browser's own ask for /favicon.ico
// logged a 404): 208 bytes, the lab alone 165,451, so its bar rose by 100. A sweep's load point
// then ran a few thousand engine steps a call instead of whole, and a SweepJob measured its
// capacity in slices too (its longest call went from 45 ms to 9-12 ms; the lab's, at 20,000
// requests a point, from 11 ms to 1.5 ms): 241 bytes of wasm, the page 198,384 and the lab alone
// 165,692, so the bars rose by 100 and 200. The hero's picture then found its step in slices
// (`ReplicaView.step()`), its capacity no longer measured inside the constructor, which had been
// one task of 50-90 ms as the lesson loaded: 398 bytes of wasm, the page 198,841 and the lab
// alone 166,095, so the bars rose by 500 and 400. A lab's charts then drew a frame's time
// (16 ms) at a time, the rest on the next frame (the first draw, with the wasm still cold, had
// been a task of 80-100 ms): 152 bytes of the element's chunk, the page 198,993 and the lab
// alone 166,256, so the bars rose by 100 and 200. Counts in a lab's markup and words then grouped
// without `Intl` (a page's first `toLocaleString` loads the browser's locale data, 10-20 ms of
// the task opening a lab): 72 bytes, the page 199,065 and the lab alone 166,316, so both bars
// rose by 100. A lab's readings below its charts (`metricsText()`, `compareLoops()`) then waited
// for its point rather than its whole sweep (39 bytes): the page 199,104 and the lab alone
// 166,351, so the page's bar rose by 100. The KV cache's hint then said how the run's cache
// fared (it held the batch, or the run's preemptions), not a fixed sentence that read as a verdict
// on any size shown (93 bytes): the page 199,195 and the lab alone 166,444, so the lab's bar rose
// by 100. The hero's view then ran to its step in slices too, not in the call after the capacity
// (a run of 50,000 requests: 25 calls, the longest 1.6 ms): 117 bytes of wasm, the page 199,312
// and the lab alone 166,561, so the bars rose by 200 and 100. A review then stated the KV hint's
// first words once and stepped jobs on the shared scheduler: the page 199,301, the lab alone 166,560.
// The engine then found a histogram bin by a table built at run time (not a quartic), remembered
// its compute times by token count and inlined its gauge updates (the sweep about 9% faster):
// 278 bytes of wasm, the page 199,579 and the lab alone 166,838, so the bars rose by 200 and 300.
// The cohort's block arithmetic then took a mask for a power-of-two block size (30 bytes): the
// page 199,609 and the lab alone 166,868, so the page's bar rose by 100. The arrivals' thinning
// under a traffic curve, which the page's wasm never runs, was then left out of it (336 bytes
// less): the page 199,299 and the lab alone 166,560, so the bars fell by 300 and 300. Each page's
// head then asked at once for the modules and the wasm it loads on opening (ready about a quarter
// sooner on a 100 ms link): 153 and 121 bytes of links, the page 199,452 and the lab alone 166,681,
// so the bars rose by 100 and 100. The lesson's picture of one engine step (`ReplicaView`) then
// moved to the lesson page's own first module (kneelab_lesson, named in its head), and the
// engine's step pictures (snapshots, step traces) to a `steps` feature that only it and the third
// module build, so the lab alone and the package carry neither: the lab alone 155,153 (11,528
// bytes less), the page 199,529 (the tag and the choice of module, 77 bytes), so the bars fell by
// 11,500 and rose by 100. The lesson's sliced sweeps (`SweepJob`) then moved there too: the lab
// alone 153,522 (1,631 bytes less), so its bar fell by 1,600. A review then moved code between
// modules to break the engine crate's, the charts' and the build's import circles (no behaviour
// changed): about 115 bytes of each first wasm, the page 199,655 and the lab alone 153,228, so
// the page's bar rose by 100. Then what course authors and an expert reader found: a `state`
// checked by kind with errors naming their path, a `kneelab-error` event, a lab with no accepted
// config saying so, a bundler's `<meta name="kneelab-pkg">`, the tail chart's names kept apart
// (296 bytes of wasm), and the lesson's sentences that broke or overstated given cases of their
// own (about 900 bytes of HTML and script): the page 201,358 and the lab alone 154,038, so the
// bars rose by 1,700 and 500. Then a click made while a section loads is kept, a misspelt URL
// parameter on lab.html is named, the web build no longer carries the CLI's "sharegpt" preset
// (141 bytes of wasm less), and "why batch" compares decode-only steps and says what stretches
// TPOT: the page 201,643 and the lab alone 154,057, so the page's bar rose by 300. Then what a
// course author and an expert reader found: a p99 past the latency chart's top marked on its edge
// with its value (about 130 bytes of each wasm, 445 of the lesson's), lab.html's theme and URL
// notes, a fleet or lab state set before its module loads, numbers no list offers shown as set,
// and the knee, tail, goodput and saturation sentences given the cases they lacked: the page
// 202,862 and the lab alone 154,578, so the bars rose by 1,200 and 500. Then the closed loop's
// think time, the KV read beside the weights, and a TTFT that stays the same said so: the page
// 203,010, so its bar rose by 200. Then both elements' pre-upgrade property became one helper in
// the settings module, which the lab's own chunk now carries: the lab alone 154,634 (+56), so its
// bar rose by 100.
const BUDGETS = { '/': 203_100, '/lab.html': 154_700 };
test('everything the pages load totals at most its budget as sent gzipped, all from this origin', async ({ page }) => {
  for (const [url, budget] of Object.entries(BUDGETS)) {
    const responses = [];
    page.on('response', (res) => responses.push(res));
    await openPage(page, url);
    await page.evaluate(() => Promise.all([...document.querySelectorAll('knee-lab')].map((l) => l.ready)));
    let sent = 0;
    let gzip9 = 0;
    const rows = [];
    for (const res of responses) {
      const u = res.url();
      if (u.startsWith('data:')) continue;
      expect(new URL(u).hostname).toBe('127.0.0.1');
      // Every text and wasm file comes gzipped (the build's precompressed twin), and what counts
      // is the body as it crossed the wire.
      expect(res.headers()['content-encoding'], u).toBe('gzip');
      const { responseBodySize } = await res.request().sizes();
      const body = await res.body();
      sent += responseBodySize;
      gzip9 += zlib.gzipSync(body, { level: 9 }).length;
      rows.push(`${new URL(u).pathname} ${responseBodySize}`);
    }
    console.log(
      `SIZE ${url}: ${(sent / 1024).toFixed(1)} KiB sent gzipped (${sent} bytes; gzip -9 would be ${gzip9}) ` +
        `over ${rows.length} files: ${rows.join(', ')}`,
    );
    expect(sent, url).toBeLessThanOrEqual(budget);
    page.removeAllListeners('response');
  }
});

test('each page asks from its head for every module and the wasm it loads on opening, and uses each it asks for', async ({ page }) => {
  for (const url of Object.keys(BUDGETS)) {
    await openPage(page, url);
    await page.evaluate(() => Promise.all([...document.querySelectorAll('knee-lab')].map((l) => l.ready)));
    const { asked, loaded, entries } = await page.evaluate(() => ({
      asked: [...document.querySelectorAll('link[rel=modulepreload], link[rel=preload]')].map((l) => l.href),
      loaded: performance.getEntriesByType('resource').map((e) => e.name),
      entries: [...document.querySelectorAll('script[type=module][src]')].map((s) => s.src),
    }));
    const code = loaded.filter((u) => /\.(js|wasm)$/.test(new URL(u).pathname) && !entries.includes(u));
    // Without the links, each module waits for the one importing it, and the wasm for all of them.
    expect(asked.toSorted(), url).toEqual([...new Set(code)].toSorted());
    expect(asked.filter((u) => u.endsWith('.wasm')), url).toHaveLength(1);
  }
});

test('on a slow link the wasm is asked for with the page’s first module, not round trips after it', async ({ page }) => {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const rtt = 100;
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: rtt, downloadThroughput: 10e6 / 8, uploadThroughput: 5e6 / 8 });
  for (const url of Object.keys(BUDGETS)) {
    const asked = new Map();
    const note = (req) => asked.set(new URL(req.url()).pathname, performance.now());
    page.on('request', note);
    await openPage(page, url);
    const ready = await page.evaluate(() => Promise.all([...document.querySelectorAll('knee-lab')].map((l) => l.ready)).then(() => performance.now()));
    page.off('request', note);
    const entry = await page.evaluate(() => new URL(document.querySelector('script[type=module][src]').src).pathname);
    const wasm = [...asked.keys()].find((p) => p.endsWith('.wasm'));
    const lag = asked.get(wasm) - asked.get(entry);
    console.log(`PRELOAD ${url}: on a ${rtt} ms link the wasm asked for ${lag.toFixed(0)} ms after ${entry}; ready ${ready.toFixed(0)} ms after navigation`);
    // Without the head's links it waited for every module in between, a round trip each.
    expect(lag, url).toBeLessThan(rtt);
  }
});

test('the config a lab runs leaves the derived rules to the engine: the warm-up share, and the budget without chunking', async ({ page }) => {
  await openLab(page);
  const lab = page.locator(LAB);
  const schema = await page.evaluate(async () => (await import('/pkg/kneelab_schema.js')).default);
  // No warm-up of the page's own: the engine's default share applies, the CLI's too.
  const config = await lab.evaluate((el) => el.config());
  expect(config.run).toEqual({ requests: schema.defaults.requests });
  // Chunked prefill off: vLLM's budget is max_model_len, from the schema.
  await lab.locator('#chunked-prefill').uncheck();
  await idle(page);
  expect(await lab.evaluate((el) => el.config().engine.max_num_batched_tokens)).toBe(schema.max_model_len);
  // More sequences than that budget: the engine refuses it as vLLM does, naming the budget, and
  // the page does not quietly raise it.
  await lab.evaluate((el, n) => el.setAttribute('max-num-seqs', String(n)), schema.max_model_len + 1);
  await expect(lab.locator('#max-num-batched-tokens-error')).toContainText(
    `engine.max_num_batched_tokens: must be at least engine.max_num_seqs (${schema.max_model_len + 1})`,
  );
  // Chunking back on with its own budget: the message goes.
  await lab.evaluate((el) => el.removeAttribute('max-num-seqs'));
  await lab.locator('#chunked-prefill').check();
  await idle(page);
  await expect(lab.locator('#max-num-batched-tokens-error')).toHaveText('');
});

test('--burstiness: burstier arrivals at the same load make the TTFT tail worse; the CV is shown; closed loops hide it', async ({ page }) => {
  await openLab(page);
  const lab = page.locator(LAB);
  const shapes = await page.evaluate(async () => (await import('/pkg/kneelab_schema.js')).default.options.burstiness);
  const poisson = shapes.findIndex((c) => c.shape === 1);
  await expect(lab.locator('#burstiness')).toHaveValue(String(poisson));
  await expect(lab.locator('#burstiness-value')).toHaveText(shapes[poisson].label);
  expect(shapes[poisson].label).toContain('CV 1.00');
  const p99 = () => lab.evaluate((el) => el.readouts.ttft_p99);
  const smooth = await p99();
  // Drag to the burstiest choice, as a reader would.
  await lab.locator('#burstiness').focus();
  for (let i = 0; i < poisson; i++) await page.keyboard.press('ArrowLeft');
  await lab.evaluate((el) => el.idle());
  await expect(lab.locator('#burstiness-value')).toHaveText(shapes[0].label);
  expect(await lab.evaluate((el) => el.config().load.burstiness)).toBe(shapes[0].shape);
  const bursty = await p99();
  console.log(`TTFT p99 at the default load: Poisson ${smooth.toFixed(2)} s, burstiness ${shapes[0].shape} ${bursty.toFixed(2)} s`);
  expect(bursty).toBeGreaterThan(smooth * 1.2);
  // A closed loop has no arrival process to shape.
  await lab.locator('#closed-loop').check();
  await expect(lab.locator('#burst-box')).toBeHidden();
  expect(await lab.evaluate((el) => el.config().load.burstiness)).toBeUndefined();
  // A bad attribute is named, beside the control.
  await lab.evaluate((el) => el.setAttribute('mode', 'open'));
  await lab.evaluate((el) => el.setAttribute('burstiness', '0.001'));
  await expect(lab.locator('#burstiness-error')).toContainText('load.burstiness');
});

test('each GPU preset says which vLLM it stands for, and which measurements', async ({ page }) => {
  await openLab(page);
  const lab = page.locator(LAB);
  const presets = await page.evaluate(async () => (await import('/pkg/kneelab_schema.js')).default.presets);
  for (const p of presets) {
    await lab.locator('#preset').selectOption(p.name);
    await expect(lab.locator('#preset option:checked')).toHaveText(`${p.gpu} · ${p.vllm}`);
    await expect(lab.locator('#preset-hint')).toHaveText(p.source);
  }
  expect(presets.map((p) => p.vllm)).toEqual(['vLLM 0.6', 'vLLM V1']);
});

test('steady tails: a steady run at 85% holds TTFT p99 within 10% across five seeds, where the usual run does not; a change drops it', async ({ page }) => {
  test.setTimeout(120_000);
  await openLab(page);
  const lab = page.locator(LAB);
  const button = lab.locator('#steady');
  const note = lab.locator('#steady-note');
  const spread = (xs) => Math.max(...xs) / Math.min(...xs) - 1;
  const usual = [];
  const steady = [];
  const costs = [];
  for (const seed of [1, 2, 3, 4, 5]) {
    await setLab(page, { seed, load: 0.85, mode: 'open' });
    usual.push(await readout(page, 'ttft_p99'));
    const measured = await readout(page, 'requests_completed');
    await expect(note).toHaveText(`Readouts from ${measured.toLocaleString('en-US')} measured requests.`);
    const p99Box = lab.locator('[data-metric="ttft_p99"] dd');
    const usualText = await p99Box.textContent();
    const started = Date.now();
    await button.click();
    await expect(lab.locator('#status')).toContainText('Steady run');
    await expect.poll(() => readout(page, 'requests_completed'), { timeout: 60_000 }).toBeGreaterThan(100 * measured);
    costs.push(Date.now() - started);
    steady.push(await readout(page, 'ttft_p99'));
    // The note sets the steady tail beside the usual run's.
    await expect(note).toHaveText(
      `Readouts from ${(await readout(page, 'requests_completed')).toLocaleString('en-US')} measured requests: ` +
        `TTFT p99 ${await p99Box.textContent()}, where the usual run's ${measured.toLocaleString('en-US')} (drawn in the charts) read ${usualText}.`,
    );
    // Nothing new to run until something changes: the same state draws the same requests.
    await expect(button).toBeDisabled();
    await expect(lab.locator('#status')).not.toContainText('Steady run');
  }
  console.log(
    `STEADY TTFT p99 at 85%, seeds 1-5: usual ${usual.map((p) => p.toFixed(2)).join(' ')} s (spread ${(100 * spread(usual)).toFixed(1)}%), ` +
      `steady ${steady.map((p) => p.toFixed(2)).join(' ')} s (spread ${(100 * spread(steady)).toFixed(1)}%), ${costs.join(', ')} ms a steady run`,
  );
  expect(spread(usual)).toBeGreaterThan(0.3);
  expect(spread(steady)).toBeLessThanOrEqual(0.1);
  // The usual runs read the tail low on the whole (lesson, Step 3).
  const mean = (xs) => xs.reduce((a, b) => a + b) / xs.length;
  expect(mean(usual)).toBeLessThan(mean(steady));
  // Any change brings the button back. The page stays answered meanwhile: a load change during
  // a steady run drops it, and the readouts are the usual run's at the new load.
  await setLoadPercent(page, 86);
  await expect(button).toBeEnabled();
  await button.click();
  await expect(lab.locator('#status')).toContainText('Steady run');
  await setLoadPercent(page, 60);
  await expect(lab.locator('#status')).not.toContainText('Steady run');
  expect(await readout(page, 'requests_completed')).toBeLessThan(20_000);
  expect(await readout(page, 'offered_load')).toBe(0.6);
  // A crash in the third module mid-run says so and leaves the lab as it was; the next press
  // runs on a fresh instance.
  await trapNext(page, '/pkg/kneelab_later.js', 'SteadyRun', 'step');
  await button.click();
  await expect(lab.locator('#status')).toHaveText('The steady run crashed; press Steady tails to try again.');
  await expect(button).toBeEnabled();
  expect(await readout(page, 'requests_completed')).toBeLessThan(20_000);
  await button.click();
  await expect.poll(() => readout(page, 'requests_completed'), { timeout: 60_000 }).toBeGreaterThan(100_000);
  // A closed loop has no steady run.
  await setLab(page, { mode: 'closed' });
  await expect(button).toBeDisabled();
});
