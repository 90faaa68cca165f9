// A long session in a real Chromium: 10,000 slider moves and 200 setting changes on one lab,
// then the JS heap (after a forced GC) and the wasm's linear memory must not have grown by more
// than 5 MB each. Runs on small simulated runs (requests="500") to stay a couple of minutes.
import { test, expect, openPage } from './helpers.mjs';

const LAB = 'knee-lab#lab';
const MB = 1024 * 1024;

/** JS heap in use after a full GC (CDP, so no flags are needed), and the wasm's memory. */
async function memory(page, cdp) {
  for (let i = 0; i < 3; i++) await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  const wasm = await page.evaluate(async () => (await import('/js/wasm.js')).kneelabMemoryBytes());
  return { heap: usedSize, wasm };
}

/** `count` slider moves, 10 per animation frame (a fast drag), to seeded random loads. */
async function moveSlider(page, count, seed) {
  return page.locator(LAB).evaluate(
    async (el, [n, s0]) => {
      const slider = el.shadowRoot.getElementById('offered-load');
      let s = s0;
      for (let i = 0; i < n; i++) {
        s = (Math.imul(s, 1103515245) + 12345) >>> 0;
        slider.value = String(s % 121);
        slider.dispatchEvent(new Event('input', { bubbles: true }));
        if (i % 10 === 9) await new Promise((resolve) => requestAnimationFrame(resolve));
      }
      await el.idle();
      return s;
    },
    [count, seed],
  );
}

/** Setting change `i`: through the lab's own controls, or its `state` setter. */
async function changeSetting(page, i) {
  await page.locator(LAB).evaluate((el, k) => {
    const root = el.shadowRoot;
    const select = (id, values) => {
      const box = root.getElementById(id);
      box.value = String(values[k % values.length]);
      box.dispatchEvent(new Event('change', { bubbles: true }));
    };
    const toggle = (id) => {
      const box = root.getElementById(id);
      box.checked = !box.checked;
      box.dispatchEvent(new Event('change', { bubbles: true }));
    };
    const steps = [
      () => toggle('closed-loop'),
      () => select('max-num-seqs', [8, 16, 32, 64, 128, 256]),
      () => toggle('chunked-prefill'),
      () => select('preset', ['llama-3-8b-h100', 'llama-3-8b-a100']),
      () => select('workload', ['chat', 'rag']),
      () => select('kv-cache-tokens', [50000, 100000, 200000, 440000]),
      () => select('max-num-batched-tokens', [512, 1024, 2048, 4096]),
      () => {
        const box = root.getElementById('slo-ttft-ms');
        box.value = String(300 + (k % 7) * 250);
        box.dispatchEvent(new Event('change', { bubbles: true }));
      },
      () => { el.state = { thinkTimeS: 1 + (k % 5), seed: k }; },
      () => { el.state = { mode: k % 2 ? 'open' : 'closed', maxNumSeqs: 64, chunkedPrefill: true }; },
    ];
    steps[k % steps.length]();
  }, i);
  // Most changes are left to finish their sweep; every third is overtaken by the next.
  if (i % 3 !== 2) await page.locator(LAB).evaluate((el) => el.idle());
}

test('10,000 slider moves and 200 setting changes leak neither JS heap nor wasm memory', async ({ page }) => {
  test.setTimeout(300_000);
  await openPage(page, '/lab.html');
  await page.locator(LAB).evaluate(async (el) => {
    el.setAttribute('requests', '500');
    await el.idle();
  });
  const cdp = await page.context().newCDPSession(page);

  // Warm up: every kind of change once, so first-use allocations are not counted as growth.
  let seed = await moveSlider(page, 200, 1);
  for (let i = 0; i < 20; i++) await changeSetting(page, i);
  await page.locator(LAB).evaluate((el) => el.idle());
  const before = await memory(page, cdp);

  const t0 = Date.now();
  for (let batch = 0; batch < 20; batch++) seed = await moveSlider(page, 500, seed);
  const movesMs = Date.now() - t0;
  const t1 = Date.now();
  for (let i = 0; i < 200; i++) await changeSetting(page, i);
  // And a drag after all that, then quiet.
  seed = await moveSlider(page, 100, seed);
  await page.locator(LAB).evaluate((el) => el.idle());
  const settingsMs = Date.now() - t1;
  const after = await memory(page, cdp);

  const state = await page.locator(LAB).evaluate((el) => ({
    readouts: el.readouts,
    timings: el.timings.input.length + el.timings.param.length,
    error: [...el.shadowRoot.querySelectorAll('.error')].map((a) => a.textContent).join(''),
  }));
  const heapGrowth = after.heap - before.heap;
  const wasmGrowth = after.wasm - before.wasm;
  const f = (bytes) => `${(bytes / MB).toFixed(2)} MB`;
  console.log(
    `SOAK 10,000 slider moves in ${(movesMs / 1000).toFixed(1)} s, 200 setting changes in ${(settingsMs / 1000).toFixed(1)} s; ` +
      `JS heap ${f(before.heap)} -> ${f(after.heap)} (${heapGrowth >= 0 ? '+' : ''}${f(heapGrowth)}), ` +
      `wasm memory ${f(before.wasm)} -> ${f(after.wasm)} (${wasmGrowth >= 0 ? '+' : ''}${f(wasmGrowth)})`,
  );
  expect(heapGrowth).toBeLessThanOrEqual(5 * MB);
  expect(wasmGrowth).toBeLessThanOrEqual(5 * MB);
  expect(before.wasm).toBeGreaterThan(0);
  // Still a working lab, with nothing to complain about, and bounded bookkeeping.
  expect(state.error).toBe('');
  await moveSlider(page, 1, 0); // 12345 % 121 = 3: a light load
  const light = await page.locator(LAB).evaluate((el) => el.readouts);
  expect(light.load).toBe(0.03);
  expect(light.ttft_p99).toBeGreaterThan(0);
  expect(state.timings).toBeLessThanOrEqual(2000);
});
