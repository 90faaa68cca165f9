// "On your cluster": two pasted /metrics scrapes read by the engine's probe (the paste module,
// loaded on first use; its page module as the section comes near) and placed as a dot on a
// simulated sweep of the chosen GPU and workload.
import { test, expect, inkedPixels, openPage, setLab } from './helpers.mjs';

/** Sums every `vllm:request_success_total` sample of a scrape. */
function successTotal(text) {
  return text
    .split('\n')
    .filter((l) => l.startsWith('vllm:request_success_total{'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Two engines of one model: `n` x 100 requests done each, of 2 s each (TTFT 0.2 s). */
function scrape(n, waiting) {
  const lines = [];
  for (const engine of ['0', '1']) {
    const l = `engine="${engine}",model_name="my-llama"`;
    lines.push(
      `vllm:num_requests_running{${l}} 20`,
      `vllm:num_requests_waiting{${l}} ${waiting}`,
      `vllm:kv_cache_usage_perc{${l}} 0.4`,
      `vllm:request_success_total{${l},finished_reason="stop"} ${n * 100}`,
      `vllm:e2e_request_latency_seconds_bucket{${l},le="1.0"} 0`,
      `vllm:e2e_request_latency_seconds_bucket{${l},le="5.0"} ${n * 100}`,
      `vllm:e2e_request_latency_seconds_bucket{${l},le="+Inf"} ${n * 100}`,
      `vllm:e2e_request_latency_seconds_count{${l}} ${n * 100}`,
      `vllm:e2e_request_latency_seconds_sum{${l}} ${n * 200}`,
    );
  }
  return [
    '# TYPE vllm:num_requests_running gauge',
    ...lines.filter((x) => x.startsWith('vllm:num_requests_running')),
    '# TYPE vllm:num_requests_waiting gauge',
    ...lines.filter((x) => x.startsWith('vllm:num_requests_waiting')),
    '# TYPE vllm:kv_cache_usage_perc gauge',
    ...lines.filter((x) => x.startsWith('vllm:kv_cache_usage_perc')),
    '# TYPE vllm:request_success_total counter',
    ...lines.filter((x) => x.startsWith('vllm:request_success_total')),
    '# TYPE vllm:e2e_request_latency_seconds histogram',
    ...lines.filter((x) => x.startsWith('vllm:e2e_request_latency')),
    '',
  ].join('\n');
}

async function placeIt(page) {
  await page.locator('#paste-place').click();
  await expect(page.locator('#paste-form')).toHaveAttribute('data-placed', 'true', { timeout: 20_000 });
  await expect(page.locator('#paste-form')).not.toHaveAttribute('aria-busy', 'true');
}

test('the lab replica pasted lands where the slider is, with the numbers read from the scrapes', async ({ page }) => {
  await openPage(page);
  await setLab(page, { workload: 'rag', load: 0.6 });
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await page.locator('#paste').scrollIntoViewIfNeeded();
  await expect(page.locator('#paste-form')).toHaveAttribute('data-ready', 'true');
  expect(requests.some((p) => p.includes('kneelab_paste'))).toBe(false);
  await page.locator('#paste-example').click();
  await expect(page.locator('#paste-first')).toHaveValue(/vllm:request_success_total/);
  expect(requests.some((p) => p.endsWith('kneelab_paste_bg.wasm')), 'the paste module loads on first use').toBe(true);
  const [first, second] = await Promise.all([page.locator('#paste-first').inputValue(), page.locator('#paste-second').inputValue()]);
  const seconds = Number(await page.locator('#paste-seconds').inputValue());
  await expect(page.locator('#paste-workload')).toHaveValue('rag');
  await placeIt(page);

  // The rate is the counters' increase over the gap, read by the test from the pasted text.
  const expected = (successTotal(second) - successTotal(first)) / seconds;
  const rate = Number(await page.locator('[data-metric=paste_rate]').getAttribute('data-value'));
  expect(Math.abs(rate / expected - 1)).toBeLessThan(1e-9);
  // One engine, so the dot's load is the served load, within the noise of a 600 s window.
  const where = page.locator('#paste-where');
  const load = Number(await where.getAttribute('data-load'));
  console.log(`PASTE lab replica at 60%: ${expected.toFixed(3)} req/s placed at load ${load.toFixed(3)}`);
  expect(Math.abs(load / 0.6 - 1)).toBeLessThan(0.08);
  await expect(where).toHaveAttribute('data-zone', 'below_knee');
  await expect(where).toContainText('below the knee');
  await expect(where).toContainText('Prefill binds first');
  await expect(page.locator('#paste-fleet')).toContainText(/A peak of 100 req\/s needs \d+ such replicas/);
  await expect(page.locator('[data-metric=paste_ttft_p99]')).not.toHaveText('—');
  const inked = await page.locator('#paste-chart').evaluate(inkedPixels);
  expect(inked).toBeGreaterThan(5000);
  await page.locator('#paste-result').screenshot({ path: 'test-results/screenshots/paste-lab-replica.png' });
});

test('two engines of a model: the rate adds up, each engine is placed, and bad pastes are named at their field', async ({ page }) => {
  await openPage(page);
  await page.locator('#paste').scrollIntoViewIfNeeded();
  await expect(page.locator('#paste-form')).toHaveAttribute('data-ready', 'true');
  await page.locator('#paste-first').fill(scrape(1, 0));
  await page.locator('#paste-second').fill(scrape(4, 0));
  await page.locator('#paste-seconds').fill('60');
  await page.locator('#paste-workload').selectOption('chat');
  await placeIt(page);
  // 2 engines x 300 more requests over 60 s.
  await expect(page.locator('[data-metric=paste_rate]')).toHaveAttribute('data-value', '10');
  await expect(page.locator('#paste-where')).toContainText('At 5.00 req/s per engine');
  await expect(page.locator('#paste-warnings')).toContainText('missing vllm:time_to_first_token_seconds');
  const drawn = await page.locator('#paste-chart').evaluate((c) => c.toDataURL());

  // Garbage in the first box: named there; the last good reading stays, marked stale.
  await page.locator('#paste-first').fill('<!doctype html><html>Grafana</html>');
  await page.locator('#paste-place').click();
  await expect(page.locator('#paste-first-error')).toContainText('expected Prometheus text format');
  await expect(page.locator('#paste-first-error')).toContainText('got an HTML page');
  await expect(page.locator('#paste-first')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator('#paste-result')).toBeVisible();
  await expect(page.locator('#paste-result')).toHaveAttribute('data-stale', '');
  await expect(page.locator('[data-metric=paste_rate]')).toHaveAttribute('data-value', '10');
  expect(await page.locator('#paste-chart').evaluate((c) => c.toDataURL())).toBe(drawn);

  for (const [field, value, id, said] of [
    ['#paste-first', 'vllm_nothing 1\n', 'paste-first', 'no vLLM metrics'],
    ['#paste-second', '', 'paste-second', 'Second scrape: is empty'],
    ['#paste-seconds', '0', 'paste-seconds', 'Seconds between them: the time between the two scrapes must be above 0'],
    ['#paste-peak', '-5', 'paste-peak', 'Peak to serve (requests/s): must be'],
  ]) {
    await page.locator('#paste-first').fill(scrape(1, 0));
    await page.locator('#paste-second').fill(scrape(4, 0));
    await page.locator('#paste-seconds').fill('60');
    await page.locator('#paste-peak').fill('100');
    await page.locator(field).fill(value);
    await page.locator('#paste-place').click();
    await expect(page.locator(`#${id}-error`)).toContainText(said);
    await expect(page.locator(`#${id}`)).toHaveAttribute('aria-invalid', 'true');
  }
  // Put right, it reads again and the marks go.
  await page.locator('#paste-peak').fill('100');
  await placeIt(page);
  await expect(page.locator('#paste-result')).not.toHaveAttribute('data-stale', '');
  await expect(page.locator('#paste-form [aria-invalid]')).toHaveCount(0);
});

test('a click on the example while the section is still loading is not lost: it acts once the section is ready', async ({ page }) => {
  // Hold the section's module until the click has been made.
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route(/\/js\/paste(-[A-Z0-9]+)?\.js$/, async (route) => {
    await held;
    await route.continue();
  });
  await openPage(page);
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await page.locator('#paste').scrollIntoViewIfNeeded();
  await expect.poll(() => requests.some((p) => /\/js\/paste(-[A-Z0-9]+)?\.js$/.test(p))).toBe(true);
  await page.locator('#paste-example').click();
  await expect(page.locator('#paste-form')).not.toHaveAttribute('data-ready', 'true');
  await expect(page.locator('#paste-first')).toHaveValue('');
  release();
  await expect(page.locator('#paste-form')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('#paste-first')).toHaveValue(/vllm:request_success_total/);
  await expect(page.locator('#paste-status')).toContainText('Two scrapes of the lab');
});
