// The lab under abuse, in a real Chromium: the simulator crashing under every lab on the page
// (they say so, keep their charts and come back on their own), and attribute values that are
// empty, hex, NaN, enormous or unknown (an error on the page naming the attribute, the last good
// charts kept, never a hang or a fault).
import { test, expect, openPage } from './helpers.mjs';

const LAB = 'knee-lab#lab';

async function openLab(page) {
  await openPage(page, '/lab.html');
  await page.evaluate((sel) => document.querySelector(sel).idle(), LAB);
}

/** A fingerprint of every visible canvas of `sel`, by id. */
async function canvasPixels(page, sel = LAB) {
  return page.locator(sel).evaluate((host) => {
    const out = {};
    for (const c of host.shadowRoot.querySelectorAll('figure:not([hidden]) canvas')) {
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let hash = 0;
      for (let i = 0; i < data.length; i += 4) hash = (hash * 31 + data[i] * 7 + data[i + 1] * 3 + data[i + 2]) | 0;
      out[c.id] = hash;
    }
    return out;
  });
}

/** Sets `name` on the lab (or removes it, for null) and waits until it is idle. */
async function setAttr(page, name, value, sel = LAB) {
  await page.locator(sel).evaluate(
    async (el, [n, v]) => {
      if (v == null) el.removeAttribute(n);
      else el.setAttribute(n, v);
      await el.idle();
    },
    [name, value],
  );
}

const alert = (page, id, sel = LAB) => page.locator(`${sel} #${id}-error`);

test.describe('a crashed simulator', () => {
  // The panic hook reports the deliberate panic on the console; nothing else may appear.
  test.use({ allowedIssues: ['crashForTest: the module was asked to trap'] });

  /** Opens the lab page with a second lab on it; records each lab's status and alert texts. */
  async function twoLabs(page) {
    await openLab(page);
    await page.evaluate(async () => {
      const second = document.createElement('knee-lab');
      second.id = 'lab2';
      second.setAttribute('requests', '500');
      second.setAttribute('panels', 'latency queue');
      document.querySelector('main').append(second);
      await second.ready;
      await second.idle();
      // What each lab said, in order, and whether its charts still had ink while it said it.
      window.said = { lab: [], lab2: [] };
      for (const el of document.querySelectorAll('knee-lab')) {
        const root = el.shadowRoot;
        const record = () => {
          const text = `${root.getElementById('status').textContent} ${root.getElementById('general-error').textContent}`.trim();
          const log = window.said[el.id];
          if (text && log.at(-1)?.text !== text) {
            const c = root.getElementById('chart-latency');
            const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let inked = 0;
            for (let i = 0; i < px.length; i += 4) if (px[i] < 200 || px[i + 1] < 200 || px[i + 2] < 200) inked++;
            log.push({ text, inked });
          }
        };
        new MutationObserver(record).observe(root, { subtree: true, childList: true, characterData: true });
      }
    });
  }

  /** Moves each lab's slider to `pct` and waits until both are idle; returns their readouts. */
  async function moveBoth(page, pct) {
    return page.evaluate(async (v) => {
      const out = {};
      for (const el of document.querySelectorAll('knee-lab')) {
        const slider = el.shadowRoot.getElementById('offered-load');
        slider.value = String(v);
        slider.dispatchEvent(new Event('input', { bubbles: true }));
      }
      for (const el of document.querySelectorAll('knee-lab')) {
        await el.idle();
        out[el.id] = el.readouts;
      }
      return out;
    }, pct);
  }

  async function checkRecovered(page, before) {
    const after = await moveBoth(page, 100);
    for (const id of ['lab', 'lab2']) {
      // A fresh run at the new load: the readouts moved with the slider.
      expect(after[id].load, id).toBe(1);
      expect(after[id].ttft_p99, id).toBeGreaterThan(0);
      expect(after[id].ttft_p99, id).not.toBe(before[id].ttft_p99);
      const said = await page.evaluate((i) => window.said[i], id);
      const crash = said.find((s) => /The simulator crashed; restarting it/.test(s.text));
      expect(crash, `${id} said it crashed: ${JSON.stringify(said)}`).toBeTruthy();
      // While it restarted, its last good chart stayed on screen.
      expect(crash.inked, `${id} kept its chart`).toBeGreaterThan(2000);
      // And it came back: nothing is left on the status or in the alert.
      await expect(page.locator(`#${id}`).locator('#status')).toHaveText('');
      await expect(page.locator(`#${id}`).locator('#general-error')).toHaveText('');
    }
    // The page itself was never reloaded.
    expect(await page.evaluate(() => window.said !== undefined)).toBe(true);
  }

  test('a trap in the shared module: every lab says so and recovers without a reload', async ({ page }) => {
    await twoLabs(page);
    const before = await moveBoth(page, 90);
    const trap = await page.evaluate(async () => {
      const { loadKneelab, kneelabGeneration } = await import('/js/wasm.js');
      const wasm = await loadKneelab();
      try {
        wasm.crashForTest();
        return 'no trap';
      } catch (err) {
        return { runtimeError: err instanceof WebAssembly.RuntimeError, generation: kneelabGeneration() };
      }
    });
    expect(trap).toEqual({ runtimeError: true, generation: 1 });
    await checkRecovered(page, before);
    // The module the page's other code holds works again too.
    const version = await page.evaluate(async () => (await (await import('/js/wasm.js')).loadKneelab()).version());
    expect(version).toMatch(/^kneelab /);
  });

  test('a trap inside one lab’s own call restarts every lab on the page', async ({ page }) => {
    await twoLabs(page);
    const before = await moveBoth(page, 90);
    // Make the first instance's Lab trap on its next load change, as a bug in it would. A fresh
    // instance (a fresh copy of the glue) does not carry the patch.
    await page.evaluate(async () => {
      const first = await import('/pkg/kneelab_web.js');
      first.Lab.prototype.setLoad = function () {
        first.crashForTest();
      };
    });
    await checkRecovered(page, before);
    expect(await page.evaluate(async () => (await import('/js/wasm.js')).kneelabGeneration())).toBe(1);
  });

  test.describe('with the module gone from the network', () => {
    test.use({
      // Strings only: an option's array whose second item is an object reads as [value, options].
      allowedIssues: [
        'crashForTest: the module was asked to trap',
        'kneelab_web.js?instance=',
        'kneelab_web_bg.wasm: net::',
        // The wasm is fetched beside the glue, so its cut request is logged too.
        'kneelab_web_bg.wasm:0)',
        'dynamically imported module',
        'Failed to fetch',
      ],
    });
    test('a trap when no fresh simulator can load: every lab says to reload, and the page is marked data-ready="error"', async ({ page }) => {
      await twoLabs(page);
      await moveBoth(page, 90);
      // From now on the module cannot be fetched again, as on a dropped connection.
      await page.route(/kneelab_web(_bg\.wasm|\.js\?instance=)/, (route) => route.abort());
      await page.evaluate(async () => {
        const wasm = await (await import('/js/wasm.js')).loadKneelab();
        try {
          wasm.crashForTest();
        } catch {
          // the trap
        }
        for (const el of document.querySelectorAll('knee-lab')) el.state = { load: 0.95 };
      });
      for (const id of ['lab', 'lab2']) {
        await expect(page.locator(`#${id}`).locator('#status')).toContainText('could not be restarted', { timeout: 15_000 });
        await expect(page.locator(`#${id}`).locator('#status')).toContainText('Reload the page');
      }
      await expect(page.locator('html')).toHaveAttribute('data-ready', 'error');
    });
  });

  test('crash after crash: the labs keep coming back', async ({ page }) => {
    await twoLabs(page);
    let before = await moveBoth(page, 90);
    for (let i = 0; i < 3; i++) {
      await page.evaluate(async () => {
        const wasm = await (await import('/js/wasm.js')).loadKneelab();
        try {
          wasm.crashForTest();
        } catch {
          // the trap
        }
      });
      const after = await moveBoth(page, i % 2 ? 90 : 100);
      for (const id of ['lab', 'lab2']) expect(after[id].ttft_p99, id).not.toBe(before[id].ttft_p99);
      before = after;
    }
    expect(await page.evaluate(async () => (await import('/js/wasm.js')).kneelabGeneration())).toBe(3);
  });
});

test.describe('attributes', () => {
  test('bad numbers are errors naming the attribute, and the last good charts stay', async ({ page }) => {
    await openLab(page);
    const good = await canvasPixels(page);
    const p99 = await page.locator(LAB).evaluate((el) => el.readouts.ttft_p99);
    for (const [name, value, id, says] of [
      ['load', '0x40', 'offered-load', /^load: "0x40" is not a decimal number$/],
      ['load', '', 'offered-load', /^load: the value is empty/],
      ['load', 'NaN', 'offered-load', /^load: "NaN" is not a decimal number$/],
      ['load', 'Infinity', 'offered-load', /^load: "Infinity" is not a decimal number$/],
      ['load', 'lots', 'offered-load', /^load: "lots" is not a decimal number$/],
      // Ranges are the engine's (a lab's slider, its run lengths): its errors name the config path.
      ['load', '5', 'offered-load', /^load\.offered_load: a lab's slider goes from 0 to 1\.2, got 5$/],
      ['load', '-0.1', 'offered-load', /^load\.offered_load: must be from/],
      ['load', '1e400', 'offered-load', /^load: 1e400 is too large$/],
      ['max-num-seqs', '0x40', 'max-num-seqs', /^max-num-seqs: "0x40" is not a decimal number$/],
      ['max-num-seqs', '64.5', 'max-num-seqs', /^engine\.max_num_seqs: /],
      ['slo-ttft-ms', '', 'slo-ttft-ms', /^slo-ttft-ms: the value is empty/],
      ['kv-cache-tokens', 'Infinity', 'kv-cache-tokens', /^kv-cache-tokens: "Infinity" is not a decimal number$/],
      ['think-time-s', 'NaN', 'offered-load', /^think-time-s: "NaN" is not a decimal number$/],
      ['requests', '100', 'general', /^run\.requests: a lab runs 500 to 20000 requests a point/],
      ['seed', '-1', 'general', /^seed: /],
      ['engine.max_num_seqs', 'lots', 'max-num-seqs', /^engine\.max_num_seqs: "lots" is not a decimal number$/],
      ['load.offered_load', 'lots', 'offered-load', /^load\.offered_load: "lots" is not a decimal number$/],
    ]) {
      await setAttr(page, name, value);
      await expect(alert(page, id), `${name}="${value}"`).toHaveText(says);
      expect(await canvasPixels(page), `${name}="${value}" kept the charts`).toEqual(good);
      expect(await page.locator(LAB).evaluate((el) => el.readouts.ttft_p99)).toBe(p99);
      // A good value (here: the default again) clears it.
      await setAttr(page, name, null);
      await expect(alert(page, id)).toHaveText('');
    }
  });

  test('a lab opened at a load the engine refuses runs at the default and says so, naming the load it ran', async ({ page }) => {
    await openPage(page, '/lab.html?load=1.5');
    await page.evaluate((sel) => document.querySelector(sel).idle(), LAB);
    await expect(alert(page, 'offered-load')).toHaveText(/^load\.offered_load: a lab's slider goes from 0 to 1\.2, got 1\.5$/);
    // The words under the slider describe the run, at the load in force, not the refused one.
    const rate = page.locator(LAB).locator('#offered-load-rate');
    await expect(rate).toContainText('85% of a capacity');
    await expect(rate).not.toContainText('150%');
    expect(await page.locator(LAB).evaluate((el) => el.readouts.load)).toBe(0.85);
  });

  test('unknown names are errors naming the attribute and the allowed values', async ({ page }) => {
    await openLab(page);
    for (const [name, value, says] of [
      ['mode', 'sideways', /^mode: "sideways" is not one of open, closed$/],
      ['workload', 'video', /^workload: "video" is not one of chat, rag$/],
      ['preset', 'gpt-5', /^preset: "gpt-5" is not one of llama-3-8b-a100, llama-3-8b-h100$/],
      ['preset', '', /^preset: the value is empty; give one of llama-3-8b-a100, llama-3-8b-h100$/],
      ['chunked-prefill', 'maybe', /^chunked-prefill: "maybe" is not true or false/],
      ['panels', 'latency pie', /^panels: "pie" is not among latency, throughput, queue, timeline, goodput, limits, tail, replica$/],
      ['controls', 'load knobs', /^controls: "knobs" is not among load, mode, engine, slo, knee, model$/],
    ]) {
      await setAttr(page, name, value);
      await expect(alert(page, 'general'), `${name}="${value}"`).toHaveText(says);
      await setAttr(page, name, null);
      await expect(alert(page, 'general')).toHaveText('');
    }
  });

  test('a preset this build does not carry is refused like any unknown one, listing only what it has', async ({ page }) => {
    await openLab(page);
    const refused = await page.evaluate(async () => {
      const { Lab } = await (await import('/js/wasm.js')).loadKneelab();
      const lab = new Lab();
      const out = [];
      for (const preset of ['sharegpt', 'video']) {
        try {
          lab.setConfig({ workload: { preset } });
          out.push('accepted');
        } catch (err) {
          out.push(`${err.path} | ${err.message}`);
        }
      }
      lab.free();
      return out;
    });
    // The CLI's joint-table preset is not in the page's wasm, and its message does not offer it.
    expect(refused).toEqual([
      'workload.preset | workload.preset: unknown variant `sharegpt`, expected `chat` or `rag`',
      'workload.preset | workload.preset: unknown variant `video`, expected `chat` or `rag`',
    ]);
  });

  test('a state set before the module loads wins over the markup; attributes apply again after', async ({ page }) => {
    await page.route('**/blank.html', (route) =>
      route.fulfill({ contentType: 'text/html', body: '<!doctype html><html lang="en"><title>Course</title><link rel="icon" href="data:,"><body></body></html>' }),
    );
    await page.goto('/blank.html');
    const states = await page.evaluate(async () => {
      const host = document.createElement('div');
      host.innerHTML = '<knee-lab load="0.6" workload="chat" requests="1000"></knee-lab><knee-lab workload="chat" requests="1000"></knee-lab>';
      document.body.append(host);
      const [a, b] = host.children;
      for (const el of [a, b]) el.state = { load: 0.3, workload: 'rag' };
      await import('/js/knee-lab.js');
      await Promise.all([a.ready, b.ready]);
      const before = [a.state, b.state];
      a.setAttribute('load', '0.7');
      await a.idle();
      return [...before, a.state];
    });
    expect(states[0]).toMatchObject({ load: 0.3, workload: 'rag', requests: 1000 });
    expect(states[1]).toMatchObject({ load: 0.3, workload: 'rag', requests: 1000 });
    expect(states[2]).toMatchObject({ load: 0.7, workload: 'rag' });
  });

  test('a number no list offers is shown as set by the page, not as a blank choice', async ({ page }) => {
    await openLab(page);
    const lab = page.locator(LAB);
    for (const [name, id, value, label] of [
      ['max-num-seqs', 'max-num-seqs', '100', '100 (set by the page)'],
      ['max-num-batched-tokens', 'max-num-batched-tokens', '3000', '3,000 (set by the page)'],
      ['kv-cache-tokens', 'kv-cache-tokens', '300000', '300,000 (set by the page)'],
    ]) {
      await setAttr(page, name, value);
      await expect(lab.locator(`#${id}`)).toHaveValue(value);
      await expect(lab.locator(`#${id} option:checked`)).toHaveText(label);
      await expect(alert(page, id)).toHaveText('');
    }
    // A choice from the list drops the page's own.
    await lab.locator('#max-num-seqs').selectOption('64');
    await expect(lab.locator('#max-num-seqs option[data-set-by-page]')).toHaveCount(0);
  });

  test('chunked-prefill reads like a boolean attribute', async ({ page }) => {
    await openLab(page);
    const chunked = () => page.locator(LAB).evaluate((el) => el.state.chunkedPrefill);
    for (const [value, want] of [['false', false], ['', true], ['0', false], ['TRUE', true], ['0', false], ['1', true]]) {
      await setAttr(page, 'chunked-prefill', value);
      expect(await chunked(), `chunked-prefill="${value}"`).toBe(want);
    }
    await setAttr(page, 'chunked-prefill', 'false');
    await setAttr(page, 'chunked-prefill', null);
    expect(await chunked()).toBe(true);
  });

  test('a lab made with a bad preset rejects ready with the error naming it, shows it and runs the default', async ({ page }) => {
    await openLab(page);
    const result = await page.evaluate(async () => {
      const lab = document.createElement('knee-lab');
      lab.id = 'bad';
      lab.setAttribute('preset', 'nope');
      lab.setAttribute('workload', 'chat');
      lab.setAttribute('requests', '500');
      document.querySelector('main').append(lab);
      const timeout = new Promise((resolve) => setTimeout(() => resolve('timed out'), 15000));
      const ready = await Promise.race([lab.ready.then(() => 'ready', (e) => `rejected at ${e.path}: ${e.message}`), timeout]);
      await lab.idle();
      return {
        ready,
        error: lab.shadowRoot.getElementById('general-error').textContent,
        state: lab.state,
        ttft: lab.readouts.ttft_p99,
      };
    });
    expect(result.ready).toBe('rejected at preset: preset: "nope" is not one of llama-3-8b-a100, llama-3-8b-h100');
    expect(result.error).toMatch(/^preset: "nope" is not one of llama-3-8b-a100, llama-3-8b-h100$/);
    expect(result.state.preset).toBe('llama-3-8b-a100');
    expect(result.state.workload).toBe('chat');
    expect(result.ttft).toBeGreaterThan(0);
  });

  test('a lab whose first config the engine refuses rejects ready with the engine\'s error, and is idle', async ({ page }) => {
    await openLab(page);
    const result = await page.evaluate(async () => {
      const lab = document.createElement('knee-lab');
      lab.setAttribute('slo-ttft-ms', '0');
      document.querySelector('main').append(lab);
      const timeout = new Promise((resolve) => setTimeout(() => resolve('timed out'), 15000));
      const ready = await Promise.race([lab.ready.then(() => 'ready', (e) => `rejected at ${e.path}`), timeout]);
      const idle = await Promise.race([lab.idle().then(() => 'idle'), timeout]);
      return { ready, idle, stale: lab.hasAttribute('data-stale'), error: lab.shadowRoot.getElementById('slo-ttft-ms-error').textContent };
    });
    expect(result).toEqual({ ready: 'rejected at slo.ttft_ms', idle: 'idle', stale: true, error: expect.stringMatching(/^slo\.ttft_ms: .*above 0/) });
    // No charts were ever drawn: it says so, not "out of date", and nothing says it is still loading.
    const lab = page.locator('knee-lab:not(#lab)');
    const said = () => lab.evaluate((el) => ({
      status: el.shadowRoot.getElementById('status').textContent,
      general: el.shadowRoot.getElementById('general-error').textContent,
      note: getComputedStyle(el.shadowRoot.querySelector('.charts'), '::before').content,
    }));
    // A resize, a load change and a theme change each ask for a frame: none may reach the engine unconfigured.
    await lab.evaluate(async (el) => {
      el.style.width = '500px';
      el.state = { load: 0.5 };
      el.setAttribute('theme', 'dark');
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    });
    const blank = await said();
    expect(blank.status).toBe('');
    expect(blank.general).toBe('');
    expect(blank.note).toContain('No charts yet');
    await expect(lab).toHaveAttribute('data-blank', '');
    // Corrected: the lab runs, and the notes go.
    await lab.evaluate(async (el) => {
      el.setAttribute('slo-ttft-ms', '2000');
      await el.idle();
    });
    await expect(lab).not.toHaveAttribute('data-blank');
    await expect(lab).not.toHaveAttribute('data-stale');
    expect((await said()).general).toBe('');
    expect(await lab.evaluate((el) => el.readouts.load)).toBe(0.5);
  });

  test('controls without the mode group hide --burstiness too; with it, only a closed loop hides it', async ({ page }) => {
    await openLab(page);
    const lab = page.locator(LAB);
    await expect(lab.locator('#burst-box')).toBeVisible();
    await setAttr(page, 'controls', 'load slo');
    await expect(lab.locator('#burst-box')).toBeHidden();
    await setAttr(page, 'mode', 'closed');
    await setAttr(page, 'mode', 'open');
    await expect(lab.locator('#burst-box')).toBeHidden();
    await setAttr(page, 'controls', null);
    await expect(lab.locator('#burst-box')).toBeVisible();
    await setAttr(page, 'mode', 'closed');
    await expect(lab.locator('#burst-box')).toBeHidden();
  });

  test('the vanishing loads: a named error or a bounded result, never a hang or a fault', async ({ page }) => {
    await openLab(page);
    const good = await canvasPixels(page);
    for (const value of ['5e-324', '1e-300']) {
      const started = Date.now();
      await setAttr(page, 'load', value);
      expect(Date.now() - started, `load="${value}" answered quickly`).toBeLessThan(5000);
      await expect(alert(page, 'offered-load')).toHaveText(/^load\.offered_load: must be from 0\.001/);
      expect(await canvasPixels(page)).toEqual(good);
    }
    await setAttr(page, 'load', '0.9');
    await expect(alert(page, 'offered-load')).toHaveText('');
    expect(await page.locator(LAB).evaluate((el) => el.readouts.load)).toBe(0.9);
    expect(await page.evaluate(async () => (await import('/js/wasm.js')).kneelabGeneration())).toBe(0);
  });

  test('a 100,000-character value is cut short in the message and never widens the lab', async ({ page }) => {
    await openLab(page);
    const good = await canvasPixels(page);
    const width = () =>
      page.locator(LAB).evaluate((el) => ({
        lab: el.getBoundingClientRect().width,
        container: el.parentElement.getBoundingClientRect().width,
        scroll: document.documentElement.scrollWidth,
        viewport: document.documentElement.clientWidth,
        canvases: [...el.shadowRoot.querySelectorAll('canvas')].map((c) => c.width),
      }));
    const before = await width();
    for (const [name, id, value] of [
      ['load', 'offered-load', '9'.repeat(100_000)],
      ['max-num-seqs', 'max-num-seqs', `0.${'5'.repeat(99_998)}`],
      ['preset', 'general', 'x'.repeat(100_000)],
      ['panels', 'general', 'y'.repeat(100_000)],
      ['metrics', 'general', `ttft_p99 ${'z'.repeat(100_000)}`],
    ]) {
      await setAttr(page, name, value);
      const text = await alert(page, id).textContent();
      expect(text, name).toMatch(new RegExp(`^${name}: `));
      expect(text.length, `${name}: the message is short`).toBeLessThan(200);
      expect(text, name).toContain('…');
      const now = await width();
      expect(now.lab, name).toBeLessThanOrEqual(now.container);
      expect(now.lab, name).toBe(before.lab);
      expect(now.scroll, name).toBeLessThanOrEqual(now.viewport);
      expect(now.canvases, name).toEqual(before.canvases);
      await setAttr(page, name, null);
    }
    // A long value that is bad because it is long says so, and nothing was drawn differently.
    await setAttr(page, 'load', `0.${'5'.repeat(300)}`);
    await expect(alert(page, 'offered-load')).toHaveText(/^load: "0\.5{58}…" is too long \(302 characters\)/);
    await setAttr(page, 'load', null);
    await setAttr(page, 'panels', 'latency throughput queue timeline');
    expect(await canvasPixels(page)).toEqual(good);
  });

  test('a long message wraps inside a narrow lab', async ({ browser }) => {
    const context = await browser.newContext({ viewport: { width: 360, height: 800 } });
    const page = await context.newPage();
    await openLab(page);
    await setAttr(page, 'workload', `${'w'.repeat(59)}`);
    await setAttr(page, 'preset', `${'p'.repeat(59)}`);
    const sizes = await page.locator(LAB).evaluate((el) => ({
      alert: el.shadowRoot.getElementById('general-error').getBoundingClientRect().width,
      lab: el.getBoundingClientRect().width,
      inner: el.shadowRoot.querySelector('.lab').getBoundingClientRect().width,
      scroll: document.documentElement.scrollWidth,
    }));
    expect(sizes.alert).toBeLessThanOrEqual(sizes.lab);
    expect(sizes.inner).toBeLessThanOrEqual(sizes.lab);
    expect(sizes.scroll).toBeLessThanOrEqual(360);
    await expect(page.locator(`${LAB} #general-error`)).toHaveText(/^workload: "w{59}" is not one of chat, rag\spreset: "p{59}" is not/);
    await page.locator(`${LAB} #general-error`).screenshot({ path: new URL('./test-results/screenshots/lab-360-errors.png', import.meta.url).pathname });
    await context.close();
  });

  test('every setting of the schema\'s table, by its Config path: a bad value marks its control', async ({ page }) => {
    await openLab(page);
    const rows = await page.evaluate(async () => (await import('/js/knee-lab.js')).SETTINGS.filter((s) => s.path));
    expect(rows.length).toBeGreaterThanOrEqual(15);
    // The alert a row's errors show in: its control's own, or the general one if the control has none.
    const home = (row) =>
      page.locator(LAB).evaluate((el, control) => (el.shadowRoot.getElementById(`${control}-error`) ? control : 'general'), row.control);
    for (const row of rows) {
      const at = await home(row);
      // Text its kind cannot read: the page's own error, named by the path it was set by.
      const unreadable = row.kind === 'flag' ? 'maybe' : 'lots';
      await setAttr(page, row.path, unreadable);
      await expect(alert(page, at), `${row.path}="${unreadable}"`).toHaveText(new RegExp(`^${row.path.replaceAll('.', '\\.')}: "${unreadable}"`));
      await setAttr(page, row.path, null);
      await expect(alert(page, at)).toHaveText('');
      if (row.kind !== 'number') continue;
      // A number the engine (or the page's schema range) refuses: the error names the path.
      if (row.key === 'thinkTimeS') await setAttr(page, 'mode', 'closed'); // only a closed loop thinks
      await setAttr(page, row.path, '-5');
      await expect(alert(page, at), `${row.path}="-5"`).toHaveText(new RegExp(`^${row.path.replaceAll('.', '\\.')}: `));
      await setAttr(page, row.path, null);
      await expect(alert(page, at)).toHaveText('');
      await setAttr(page, 'mode', null);
    }
  });

  test('a setting set by both names: the last set wins, and removing one falls back to the other', async ({ page }) => {
    await openLab(page);
    const seqs = () => page.locator(LAB).evaluate((el) => el.state.maxNumSeqs);
    await setAttr(page, 'max-num-seqs', '128');
    await setAttr(page, 'engine.max_num_seqs', '32');
    expect(await seqs()).toBe(32);
    await expect(page.locator(`${LAB} #max-num-seqs`)).toHaveValue('32');
    await setAttr(page, 'engine.max_num_seqs', null);
    expect(await seqs()).toBe(128);
    await setAttr(page, 'max-num-seqs', null);
    expect(await seqs()).toBe(64);
  });

  test('removing an attribute restores the default for that setting', async ({ page }) => {
    await openLab(page);
    const state = () => page.locator(LAB).evaluate((el) => el.state);
    for (const [name, value, key, changed, initial] of [
      ['max-num-seqs', '128', 'maxNumSeqs', 128, 64],
      ['mode', 'closed', 'mode', 'closed', 'open'],
      ['kv-cache-tokens', '50000', 'kvCacheTokens', 50000, 440000],
      ['load', '0.5', 'load', 0.5, 0.85],
    ]) {
      await setAttr(page, name, value);
      expect((await state())[key], name).toBe(changed);
      await setAttr(page, name, null);
      expect((await state())[key], name).toBe(initial);
    }
    // An SLO goes back to the current workload's.
    await setAttr(page, 'workload', 'chat');
    await setAttr(page, 'slo-ttft-ms', '900');
    expect((await state()).sloTtftMs).toBe(900);
    await setAttr(page, 'slo-ttft-ms', null);
    expect((await state()).sloTtftMs).toBe(500);
  });

  test('removing panels, controls or metrics shows the defaults, not nothing', async ({ page }) => {
    await openLab(page);
    const shown = () =>
      page.locator(LAB).evaluate((el) => ({
        panels: [...el.shadowRoot.querySelectorAll('figure[data-panel]:not([hidden])')].map((f) => f.dataset.panel),
        controls: !el.shadowRoot.querySelector('.controls').hidden,
        metrics: el.shadowRoot.querySelectorAll('.readouts [data-metric]').length,
      }));
    await setAttr(page, 'panels', null);
    await setAttr(page, 'controls', '');
    await setAttr(page, 'metrics', 'ttft_p99');
    expect(await shown()).toEqual({ panels: ['latency', 'throughput', 'queue'], controls: false, metrics: 1 });
    await setAttr(page, 'controls', null);
    await setAttr(page, 'metrics', null);
    expect(await shown()).toEqual({ panels: ['latency', 'throughput', 'queue'], controls: true, metrics: 10 });
  });

  test('an error beside a hidden control shows in the general alert', async ({ page }) => {
    await openLab(page);
    await setAttr(page, 'controls', 'model');
    await setAttr(page, 'max-num-seqs', 'many');
    await expect(alert(page, 'general')).toHaveText(/^max-num-seqs: "many" is not a decimal number$/);
    await expect(page.locator(`${LAB} #general-error`)).toBeVisible();
    await setAttr(page, 'controls', null);
    await expect(alert(page, 'general')).toHaveText('');
    await expect(alert(page, 'max-num-seqs')).toHaveText(/^max-num-seqs: "many"/);
    await setAttr(page, 'max-num-seqs', '32');
    await expect(alert(page, 'max-num-seqs')).toHaveText('');
  });

  test('the state setter refuses what is not a setting', async ({ page }) => {
    await openLab(page);
    const thrown = await page.locator(LAB).evaluate((el) =>
      [null, 5, [], { lod: 0.5 }].map((v) => {
        try {
          el.state = v;
          return 'accepted';
        } catch (err) {
          return `${err.constructor.name}: ${err.message}`;
        }
      }),
    );
    expect(thrown[0]).toMatch(/^TypeError: state: expected an object/);
    expect(thrown[1]).toMatch(/^TypeError: state: expected an object/);
    expect(thrown[2]).toMatch(/^TypeError: state: expected an object/);
    expect(thrown[3]).toMatch(/^TypeError: state: unknown setting "lod"/);
    // A value of the wrong kind is refused before the engine sees it, naming the setting by its path.
    const kinds = await page.locator(LAB).evaluate((el) =>
      [{ maxNumSeqs: '64' }, { mode: 'bogus' }, { latencyScale: 'x' }, { load: 'abc' }, { chunkedPrefill: 1 }, { seed: NaN }].map((v) => {
        try {
          el.state = v;
          return 'accepted';
        } catch (err) {
          return [err.constructor.name, err.path, err.message];
        }
      }),
    );
    expect(kinds).toEqual([
      ['TypeError', 'engine.max_num_seqs', 'state.maxNumSeqs (engine.max_num_seqs): expected a finite number, got "64" (a string)'],
      ['TypeError', 'load.mode', 'state.mode (load.mode): expected one of "open", "closed", got "bogus" (a string)'],
      ['TypeError', 'latency-scale', 'state.latencyScale (latency-scale): expected one of "linear", "log", got "x" (a string)'],
      ['TypeError', 'load.offered_load', 'state.load (load.offered_load): expected a finite number, got "abc" (a string)'],
      ['TypeError', 'engine.chunked_prefill', 'state.chunkedPrefill (engine.chunked_prefill): expected true or false, got 1'],
      ['TypeError', 'seed', 'state.seed (seed): expected a finite number, got NaN'],
    ]);
    // None of them changed the state.
    expect(await page.locator(LAB).evaluate((el) => [el.state.maxNumSeqs, el.state.mode, el.state.load])).toEqual([64, 'open', 0.85]);
  });

  test('a value the engine refuses, set from script or as an attribute, fires kneelab-error naming it', async ({ page }) => {
    await openLab(page);
    const events = await page.locator(LAB).evaluate(async (el) => {
      const seen = [];
      el.addEventListener('kneelab-error', (e) => seen.push([e.detail.path, e.detail.message.slice(0, 40)]));
      el.state = { seed: -1 };
      el.state = { seed: 42, load: 5 };
      el.state = { load: 0.85 };
      el.setAttribute('max-num-seqs', 'many');
      el.setAttribute('max-num-seqs', '64');
      await el.idle();
      return seen;
    });
    expect(events.map(([p]) => p)).toEqual(['seed', 'load.offered_load', 'max-num-seqs']);
    for (const [p, message] of events) expect(message.startsWith(p)).toBe(true);
    await expect(alert(page, 'general')).toHaveText('');
    await expect(page.locator(LAB)).not.toHaveAttribute('data-stale');
  });
});

test('a removed lab gives its memory back, and a moved or re-added one carries on', async ({ page }) => {
  test.setTimeout(120_000);
  await openPage(page, '/lab.html');
  const r = await page.evaluate(async () => {
    const { kneelabMemoryBytes } = await import('/js/wasm.js');
    const host = document.createElement('div');
    document.body.append(host);
    // As a site with instant navigation does: each "page" replaces the last one's lab.
    const visit = async () => {
      const el = document.createElement('knee-lab');
      el.setAttribute('requests', '500');
      host.replaceChildren(el);
      await el.ready;
      await el.idle();
      return el;
    };
    await visit();
    await visit();
    const before = kneelabMemoryBytes();
    for (let i = 0; i < 20; i++) await visit();
    const after = kneelabMemoryBytes();
    const el = host.firstElementChild;
    const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
    // Moved: the same Lab goes on.
    const elsewhere = document.createElement('div');
    document.body.append(elsewhere);
    elsewhere.append(el);
    await pause();
    el.state = { load: 0.5 };
    await el.idle();
    const moved = el.readouts.load;
    // Removed, then put back: a new Lab with the same state, and numbers again.
    el.remove();
    await pause();
    elsewhere.append(el);
    await el.idle();
    return { before, after, moved, back: el.readouts.load, p99: el.readouts.ttft_p99 };
  });
  console.log(`MEMORY wasm ${(r.before / 2 ** 20).toFixed(1)} MB -> ${(r.after / 2 ** 20).toFixed(1)} MB over 20 replaced labs`);
  // Kept, each would hold about 3 MB: 20 of them 60 MB.
  expect(r.after - r.before).toBeLessThan(8 * 2 ** 20);
  expect(r.moved).toBe(0.5);
  expect(r.back).toBe(0.5);
  expect(r.p99).toBeGreaterThan(0);
});

test('state set on a knee-lab before it is defined is applied when it upgrades', async ({ page }) => {
  await openPage(page, '/lab.html');
  const r = await page.evaluate(async () => {
    // An element made where knee-lab is not defined, as a page whose script loads late has it.
    const elsewhere = document.implementation.createHTMLDocument('');
    const early = elsewhere.createElement('knee-lab');
    early.setAttribute('requests', '500');
    early.state = { load: 0.5, mode: 'closed' };
    const bad = elsewhere.createElement('knee-lab');
    bad.setAttribute('requests', '500');
    bad.state = { lode: 0.5 };
    document.body.append(early, bad); // adopted here: upgraded
    await early.ready;
    await early.idle();
    return {
      state: [early.state.load, early.state.mode],
      own: Object.hasOwn(early, 'state'),
      readout: early.readouts.load,
      badError: bad.shadowRoot.getElementById('general-error').textContent,
      cleared: await (async () => {
        bad.state = { load: 0.4 };
        await bad.idle();
        return bad.shadowRoot.getElementById('general-error').textContent;
      })(),
    };
  });
  expect(r.state).toEqual([0.5, 'closed']);
  expect(r.own, 'the setter is no longer shadowed').toBe(false);
  expect(r.readout).toBe(0.5);
  expect(r.badError).toContain('unknown setting "lode"');
  expect(r.cleared, 'a good state clears it').toBe('');
});
