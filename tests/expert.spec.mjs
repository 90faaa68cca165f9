// What a vLLM engineer checks first (issue "Right for an expert"): Little's Law applied part by
// part, the replica's limits with the binding one named from the engine, and vLLM's names.
import path from 'node:path';
import { test, expect, inkedPixels, openPage, setLab } from './helpers.mjs';

const artifacts = path.join(path.dirname(new URL(import.meta.url).pathname), 'test-results', 'screenshots');


test.describe('the limits chart', () => {
  // Workload and seats, the limit that must bind, and the words that say so.
  const rows = [
    [{ workload: 'rag', maxNumSeqs: 64 }, 'prefill', 'so prefill binds'],
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
      await expect(sentence).toContainText('the engine saturates at');
      await expect.poll(() => lab.locator('#chart-limits').evaluate(inkedPixels)).toBeGreaterThan(1500);
      await expect(lab.locator('#chart-limits')).toHaveAttribute('aria-label', new RegExp(words));
      await lab.locator('figure[data-panel="limits"]').screenshot({ path: path.join(artifacts, `limits-${state.workload}-${state.maxNumSeqs}.png`) });
    });
  }
});

test("the calculator follows the engine: the cap and the time in the batch at saturation, the binding limit named", async ({ page }) => {
  await openPage(page);
  await setLab(page, { workload: 'chat' });
  await page.locator('#ll-use-knee').click();
  const r = await page.locator('#lab').evaluate((el) => el.readouts);
  await expect(page.locator('#ll-batch-s')).toHaveValue(String(Math.round(r.saturation_batch_s * 100) / 100));
  await expect(page.locator('#ll-cap')).toHaveValue('64');
  // cap / time in the batch at saturation is the chat replica's saturation within 15%.
  const qps = Number(await page.locator('[data-metric=ll_max_qps]').getAttribute('data-value'));
  expect(Math.abs(qps / r.saturation_rps - 1)).toBeLessThan(0.15);
  await expect(page.locator('#ll-engine-why')).toContainText('so the sequence cap binds');
  await expect(page.locator('#ll-engine-why')).toContainText('running, each');
});

test('the page pairs each L with its own W and never calls TPOT inter-token latency', async ({ page }) => {
  await openPage(page);
  const text = await page.locator('main').evaluate((el) => el.textContent.replace(/\s+/g, ' '));
  expect(text).not.toMatch(/TPOT[^.]{0,40}\(inter-token latency\)/);
  expect(text).not.toMatch(/also called inter-token latency/);
  expect(text).not.toMatch(/cap ÷ latency/);
  expect(text).toContain('time in the batch');
  // The TPOT histogram goes by its own name.
  expect(text).toContain('vllm:request_time_per_output_token_seconds');
});

test('/metrics holds the request histograms vLLM exports, and the panel judges the queue over a window', async ({ page }) => {
  await openPage(page);
  await setLab(page, { load: 0.6 });
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
  await setLab(page, { load: 1.1 });
  await expect(reading).toContainText('still rising');
  await expect(reading).toContainText('time to scale out');
  const r = await page.locator('#lab').evaluate((el) => el.readouts);
  expect(r.waiting_window_s).toBeGreaterThan(0);
  expect(r.waiting_window_max).toBeGreaterThanOrEqual(r.waiting_window_mean);
});
