// The replica player (<knee-lab panels="replica">) in a real Chromium: it plays the engine's own
// step trace, pauses, steps one iteration at a time with the trace's numbers beside the picture,
// and shows what the lesson says it shows: at 85% load the queue empties, past 100% it climbs;
// chunked prefill off gives a stalled step; a small KV cache a preemption. It does not play on
// its own under reduced motion, and it is cheap to play.
import path from 'node:path';
import { test, expect, openPage, trapNext } from './helpers.mjs';

const LAB = 'knee-lab#lab';
const shots = path.join(path.dirname(new URL(import.meta.url).pathname), 'test-results', 'screenshots');

/** Opens the lab alone with only the replica panel, at `load`, shows it, and waits for its trace. */
async function openPlayer(page, { load = 0.85, attrs = {} } = {}) {
  await openPage(page, '/lab.html');
  await page.locator(LAB).evaluate(
    async (lab, { load, attrs }) => {
      const traced = new Promise((resolve) => lab.addEventListener('kneelab-player', resolve, { once: true }));
      lab.setAttribute('panels', 'replica');
      lab.setAttribute('load', String(load));
      for (const [k, v] of Object.entries(attrs)) lab.setAttribute(k, v);
      // The player's module is fetched, and its run traced, once the panel comes near the screen.
      lab.shadowRoot.querySelector('figure[data-panel="replica"]').scrollIntoView();
      await lab.idle();
      await traced;
    },
    { load, attrs },
  );
}

/** Waits for a new trace after a change made by `act` (which runs in the page with the lab). */
async function retrace(page, act, arg) {
  await page.locator(LAB).evaluate(
    async (lab, [act, arg]) => {
      const traced = new Promise((resolve) => lab.addEventListener('kneelab-player', resolve, { once: true }));
      new Function('lab', 'arg', act)(lab, arg);
      await lab.idle();
      await traced;
    },
    [act, arg],
  );
}

const player = (page, fn, arg) => page.locator(LAB).evaluate((lab, [fn, arg]) => new Function('p', 'arg', fn)(lab.player, arg), [fn, arg]);

/** A fingerprint of the replica canvas's pixels. */
const pixels = (page) =>
  page.locator(LAB).evaluate((lab) => {
    const c = lab.shadowRoot.getElementById('chart-replica');
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let hash = 0;
    for (let i = 0; i < data.length; i += 4) hash = (hash * 31 + data[i] * 7 + data[i + 1] * 3 + data[i + 2]) | 0;
    return hash;
  });

/** The text beside the picture, by fact name. */
const facts = (page) =>
  page.locator(LAB).evaluate((lab) =>
    Object.fromEntries([...lab.shadowRoot.querySelectorAll('[data-player]')].map((dd) => [dd.dataset.player, dd.textContent])),
  );

const count = (n) => n.toLocaleString('en-US');

test('playing changes the picture, pausing freezes it', async ({ page }) => {
  await openPlayer(page);
  const lab = page.locator(LAB);
  const play = lab.locator('#replica-play');
  await lab.locator('#chart-replica').scrollIntoViewIfNeeded();
  // On screen and motion allowed: it plays on its own.
  await expect.poll(() => player(page, 'return p.playing')).toBe(true);
  await expect(play).toHaveText('Pause');
  // At real time, so a step or two passes in the wait (at the default speed one step can last
  // seconds, and only its TTFT clocks move).
  await lab.locator('#replica-speed').selectOption('1');
  const a = await pixels(page);
  await page.waitForTimeout(600);
  const b = await pixels(page);
  expect(b, 'the canvas changes while playing').not.toBe(a);
  await play.click();
  await expect(play).toHaveText('Play');
  const index = await player(page, 'return p.index');
  const c = await pixels(page);
  await page.waitForTimeout(600);
  expect(await pixels(page), 'the canvas is frozen while paused').toBe(c);
  expect(await player(page, 'return p.index')).toBe(index);
  await play.click();
  await page.waitForTimeout(300);
  expect(await player(page, 'return p.index')).toBeGreaterThanOrEqual(index);
  expect(await pixels(page)).not.toBe(c);
});

test('one iteration advances the shown step by exactly one, and the text is the trace', async ({ page }) => {
  await openPlayer(page);
  const lab = page.locator(LAB);
  await lab.locator('#replica-play').click(); // playing on its own (on screen) or not: pause
  if (await player(page, 'return p.playing')) await lab.locator('#replica-play').click();
  // Near a traced window's end, so one of the steps crosses into the next window.
  await player(page, 'p.pause(true); p.seekTime(0.3 * p.endS); p.seekTime(p.stepData(p.length - 3).t_s)');
  const stepNumber = () => player(page, 'return p.stepData().index');
  for (let i = 0; i < 6; i++) {
    const before = await stepNumber();
    const hash = await pixels(page);
    await lab.locator('#replica-step').click();
    const s = await player(page, 'return p.stepData()');
    expect(s.index, 'the engine step shown is the next one').toBe(before + 1);
    expect(await pixels(page), 'a new step is drawn').not.toBe(hash);
    const shown = await facts(page);
    expect(shown.index).toBe(`${count(s.index)} of ${count(await player(page, 'return p.totalSteps'))}`);
    expect(shown.tokens).toBe(`${count(s.decode_tokens)} + ${count(s.prefill_tokens)} of ${count(s.max_num_batched_tokens)}`);
    expect(shown.seats).toBe(`${count(s.seats.length)} of ${count(s.max_num_seqs)}`);
    expect(shown.waiting).toBe(count(s.waiting));
    expect(shown.time).toContain('into the run');
  }
  // Back across the window's start too: one step back is the engine's previous step.
  await player(page, 'p.seekTime(p.stepData(0).t_s)');
  const first = await stepNumber();
  // Each control's accessible name holds the words it shows (WCAG's label in name: a speech
  // user says what they see), the back button's "‹ Back" included.
  for (const button of await lab.locator('.player-controls button').all()) {
    const shown = (await button.textContent()).trim();
    await expect(lab.getByRole('button', { name: shown, exact: true })).toHaveCount(1);
  }
  await lab.getByRole('button', { name: '‹ Back', exact: true }).click();
  expect(await stepNumber()).toBe(first - 1);
  // Keyboard: on the picture, ← steps back, → forward, Space plays.
  await lab.locator('#chart-replica').focus();
  const k = await stepNumber();
  await page.keyboard.press('ArrowLeft');
  expect(await stepNumber()).toBe(k - 1);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  expect(await stepNumber()).toBe(k + 1);
  await page.keyboard.press('Space');
  expect(await player(page, 'return p.playing')).toBe(true);
  await page.keyboard.press('Space');
  expect(await player(page, 'return p.playing')).toBe(false);
});

test('at 85% load the queue empties again; past capacity it climbs and does not', async ({ page }) => {
  await openPlayer(page, { load: 0.85 });
  const lab = page.locator(LAB);
  const shownWaiting = async (i) => {
    await player(page, 'p.pause(true); p.seekTime(arg * p.endS)', i);
    return Number((await facts(page)).waiting.replace(/,/g, ''));
  };
  const walk = async () => {
    // The shown queue at 61 moments of the run (the last arrival comes near its end).
    const seen = [];
    for (let i = 0; i <= 60; i++) seen.push(await shownWaiting((i / 60) * 0.97));
    return seen;
  };
  const at85 = await walk();
  const peak85 = at85.indexOf(Math.max(...at85));
  console.log(`waiting at 85%, 61 points over the trace: ${at85.join(' ')}`);
  expect(Math.max(...at85), 'requests do queue at 85%').toBeGreaterThan(0);
  expect(at85.slice(peak85).includes(0), 'and the queue returns to zero after its peak').toBe(true);
  await expect(lab.locator('#replica-summary')).toContainText('and emptied again');

  // Past capacity (110%) the queue has a drift upward: it climbs and does not come back. (At
  // exactly 100% it has none: a run's queue may wander back to empty, as the page says.)
  await retrace(page, 'lab.setAttribute("load", arg)', '1.1');
  const at110 = await walk();
  const third = Math.floor(at110.length / 3);
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`waiting at 110%: ${at110.join(' ')}`);
  expect(mean(at110.slice(-third)), 'the last third queues more than the first').toBeGreaterThan(mean(at110.slice(0, third)) + 5);
  expect(at110.at(-1)).toBeGreaterThan(at110[0]);
  await expect(lab.locator('#replica-summary')).toContainText('never emptied after its peak');
});

test('chunked prefill off: a stalled step; a small KV cache: a preemption', async ({ page }) => {
  await openPlayer(page, { attrs: { controls: 'load engine' } });
  const lab = page.locator(LAB);
  await lab.locator('#replica-longest').click();
  const chunked = await player(page, 'return p.stepData()');
  // With chunking a step's prefill stops at the budget.
  expect(chunked.prefill_tokens + chunked.decode_tokens).toBeLessThanOrEqual(chunked.max_num_batched_tokens);

  await retrace(page, 'lab.shadowRoot.getElementById("chunked-prefill").click()');
  await lab.locator('#replica-longest').click();
  const stalled = await player(page, 'return p.stepData()');
  const running = stalled.seats.length - 1;
  console.log(
    `longest step: chunked ${chunked.prefill_tokens} prefill + ${chunked.decode_tokens} decode tokens in ${(chunked.duration_s * 1e3).toFixed(0)} ms; ` +
      `unchunked ${stalled.prefill_tokens} + ${stalled.decode_tokens} in ${(stalled.duration_s * 1e3).toFixed(0)} ms`,
  );
  // A whole prompt past the chunked budget in one step: the step's tokens are all prefill but
  // for one decode token per running request, and every decode waits for it.
  expect(stalled.prefill_tokens).toBeGreaterThan(chunked.max_num_batched_tokens);
  expect(stalled.prefill_tokens / (stalled.prefill_tokens + stalled.decode_tokens)).toBeGreaterThan(0.95);
  expect(stalled.decode_tokens).toBeGreaterThan(0);
  expect(running).toBeGreaterThan(0);
  expect(stalled.duration_s).toBeGreaterThan(3 * chunked.duration_s);
  expect((await facts(page)).tokens).toBe(`${count(stalled.decode_tokens)} + ${count(stalled.prefill_tokens)} of ${count(stalled.max_num_batched_tokens)}`);

  await retrace(page, 'lab.shadowRoot.getElementById("chunked-prefill").click()');
  await expect(lab.locator('#replica-preemption')).toBeDisabled();
  await retrace(page, 'const s = lab.shadowRoot.getElementById("kv-cache-tokens"); s.value = "50000"; s.dispatchEvent(new Event("change", { bubbles: true }))');
  await expect(lab.locator('#replica-preemption')).toBeEnabled();
  await lab.locator('#replica-preemption').click();
  const pre = await player(page, 'return p.stepData()');
  expect(pre.preempted.length).toBeGreaterThan(0);
  await expect(lab.locator('[data-player="events"]')).toContainText(`${pre.preempted.length} preempted`);
  console.log(`50k-token KV cache: first preemption at engine step ${pre.index}, ${pre.preempted.length} preempted, KV ${pre.kv_blocks_used}/${pre.kv_blocks} blocks`);
});

// The animation's cost: script time per played frame (median at most 4 ms), and no growth of the
// JS heap or the wasm's memory over the play (at most 2 MB each). 20 s of play here; set
// KNEELAB_PLAY_S=120 for the two minutes the figures in the notes come from. Half at the
// default speed, half at the fastest (which crosses a traced window every few seconds).
test('playing costs at most 4 ms of script a frame (median) and does not grow memory', async ({ page }) => {
  const seconds = Number(process.env.KNEELAB_PLAY_S ?? 20);
  test.setTimeout((seconds + 60) * 1000);
  await openPlayer(page, { load: 1 });
  const lab = page.locator(LAB);
  await lab.locator('#chart-replica').scrollIntoViewIfNeeded();
  const cdp = await page.context().newCDPSession(page);
  const memory = async () => {
    for (let i = 0; i < 3; i++) await cdp.send('HeapProfiler.collectGarbage');
    const { usedSize } = await cdp.send('Runtime.getHeapUsage');
    const wasm = await page.evaluate(async () => (await import('/js/wasm.js')).kneelabMemoryBytes());
    return { heap: usedSize, wasm };
  };
  await expect.poll(() => player(page, 'return p.playing')).toBe(true);
  await page.waitForTimeout(3000); // first-use allocations
  const before = await memory();
  await player(page, 'p.timings.frame.length = 0');
  const frames = [];
  const collect = async (ms) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      await page.waitForTimeout(2000);
      frames.push(...(await player(page, 'const f = p.timings.frame.splice(0); if (!p.playing) p.play(); return f')));
    }
  };
  await collect((seconds * 1000) / 2);
  const fastest = await lab.locator('#replica-speed option').last().getAttribute('value');
  await lab.locator('#replica-speed').selectOption(fastest);
  await collect((seconds * 1000) / 2);
  const after = await memory();
  frames.sort((a, b) => a - b);
  const median = frames[frames.length >> 1];
  const p95 = frames[Math.floor(frames.length * 0.95)];
  const MB = 1024 * 1024;
  const f = (b) => `${(b / MB).toFixed(2)} MB`;
  console.log(
    `PLAY ${seconds} s: ${frames.length} frames, script per frame median ${median.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, ` +
      `max ${frames.at(-1).toFixed(1)} ms; JS heap ${f(before.heap)} -> ${f(after.heap)}, wasm memory ${f(before.wasm)} -> ${f(after.wasm)}`,
  );
  expect(frames.length).toBeGreaterThan(seconds * 20);
  expect(median).toBeLessThanOrEqual(4);
  expect(after.heap - before.heap).toBeLessThanOrEqual(2 * MB);
  expect(after.wasm - before.wasm).toBeLessThanOrEqual(2 * MB);
});

test.describe('reduced motion', () => {
  test.use({ reducedMotion: 'reduce' });
  test('does not play on its own, and stepping still works', async ({ page }) => {
    await openPlayer(page);
    const lab = page.locator(LAB);
    await lab.locator('#chart-replica').scrollIntoViewIfNeeded();
    await page.waitForTimeout(800);
    expect(await player(page, 'return p.playing')).toBe(false);
    const first = await player(page, 'return p.stepData().index');
    await lab.locator('#replica-step').click();
    expect(await player(page, 'return p.stepData().index')).toBe(first + 1);
    await lab.locator('#replica-play').click();
    expect(await player(page, 'return p.playing'), 'Play still plays when asked').toBe(true);
  });
});

test('the player runs the lab’s point on the lab’s capacity, from modules fetched only once the panel is near', async ({ page }) => {
  const fetched = [];
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  await openPage(page, '/lab.html');
  await page.locator(LAB).evaluate((lab) => lab.ready);
  // Neither the player's wasm nor its script: a lab without the panel carries only its markup.
  expect(fetched.filter((p) => p.includes('kneelab_later') || p.includes('replica-player')), 'no panel, no module').toEqual([]);
  expect(await page.locator(LAB).evaluate((lab) => lab.player)).toBeNull();
  await openPlayer(page, { load: 0.9 });
  expect(fetched.some((p) => p.endsWith('kneelab_later_bg.wasm'))).toBe(true);
  expect(fetched.some((p) => /\/js\/replica-player/.test(p)), 'the player’s script, once near').toBe(true);
  expect(await page.locator(LAB).evaluate((lab) => lab.player.loaded)).toBe(true);
  const m = await page.locator(LAB).evaluate(async (lab) => {
    const later = await import('/pkg/kneelab_later.js');
    const config = { ...lab.config(), load: { ...lab.config().load, offered_load: lab.state.load } };
    const own = new later.ReplicaPlayer(config, undefined); // measured here
    const queue = (p) => JSON.stringify(p.queue());
    const out = { shown: queue(lab.player), own: queue(own), steps: [lab.player.totalSteps, own.totalSteps] };
    own.free();
    const errors = [];
    for (const bad of [{ rps: 'x', base_latency_s: 1, completions_counted: 1, window_s: 1 }, [], 7]) {
      try {
        new later.ReplicaPlayer(config, bad).free();
      } catch (err) {
        errors.push([err.path, err.message]);
      }
    }
    return { ...out, errors };
  });
  // Measured afresh or taken from the lab, the capacity is the same: so is the run.
  expect(m.own).toBe(m.shown);
  expect(m.steps[0]).toBe(m.steps[1]);
  expect(m.errors.map(([path]) => path)).toEqual(['capacity.rps', 'capacity', 'capacity']);
  expect(m.errors[0][1]).toContain('expected f64');
});

test('a trap in the player’s module restarts that module, not the lab’s, and the next change plays again', async ({ page }) => {
  await openPlayer(page, { load: 0.85 });
  const lab = page.locator(LAB);
  await trapNext(page, '/pkg/kneelab_later.js', 'ReplicaPlayer', 'draw');
  await player(page, 'p.pause(true); p.step(1)');
  await expect(lab.locator('#replica-note')).toContainText('simulator stopped (unreachable)');
  expect(await player(page, 'return p.loaded')).toBe(false);
  // The lab's own module and charts stand.
  expect(await page.evaluate(async () => (await import('/js/wasm.js')).kneelabGeneration())).toBe(0);
  await expect(lab).not.toHaveAttribute('data-stale', '');
  await retrace(page, 'lab.state = { load: arg }', 0.9);
  await expect(lab.locator('#replica-note')).toBeEmpty();
  expect(await player(page, 'return p.length')).toBeGreaterThan(0);
  const fresh = await page.evaluate(() => performance.getEntriesByType('resource').some((r) => r.name.includes('kneelab_later.js?instance=1')));
  expect(fresh, 'a fresh instance of the player’s module').toBe(true);
});

test('screenshots at 85% and 100%, light and dark, 1280 and 360 px', async ({ browser }) => {
  test.setTimeout(120_000);
  for (const [width, height] of [[1280, 900], [360, 800]]) {
    for (const colorScheme of ['light', 'dark']) {
      const context = await browser.newContext({ viewport: { width, height }, colorScheme, reducedMotion: 'reduce' });
      const page = await context.newPage();
      for (const load of [0.85, 1]) {
        await openPlayer(page, { load });
        await player(page, 'p.seekTime(0.8 * p.endS)');
        const figure = page.locator(`${LAB} figure[data-panel="replica"]`);
        await figure.screenshot({ path: path.join(shots, `replica-${load * 100}-${colorScheme}-${width}.png`) });
        const scroll = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(scroll, 'no horizontal scroll').toBeLessThanOrEqual(0);
      }
      await context.close();
    }
  }
});

test.describe('in the lesson', () => {
  /** Waits for `lab`'s next trace after `act` (run in the page on the element). */
  const traced = (lab, act = '', arg) =>
    lab.evaluate(
      async (el, [act, arg]) => {
        const done = new Promise((resolve) => el.addEventListener('kneelab-player', resolve, { once: true }));
        await el.ready;
        await el.idle();
        // The first trace may have come before this call: then there is nothing to wait for.
        if (!act && el.player?.loaded) return;
        new Function('lab', 'arg', act)(el, arg);
        await el.idle();
        await done;
      },
      [act, arg],
    );

  test('the knee lab: the queue empties again at 85%, peaks far higher at 100%, and past it never empties after its peak, as the page says', async ({ page }) => {
    await openPage(page, '/');
    const lab = page.locator('knee-lab#lab');
    await lab.scrollIntoViewIfNeeded();
    await traced(lab);
    await expect(page.locator('#watch-replica')).toContainText('At 85% the queue builds in bursts and empties again');
    expect(await lab.evaluate((el) => el.state.load)).toBe(0.85);
    const summary = lab.locator('#replica-summary');
    await expect(summary).toContainText('and emptied again');
    const q85 = await lab.evaluate((el) => el.player.queue());
    await traced(lab, 'lab.state = { load: arg }', 1);
    const q100 = await lab.evaluate((el) => el.player.queue());
    await traced(lab, 'lab.state = { load: arg }', 1.1);
    await expect(summary).toContainText('never emptied after its peak');
    const q110 = await lab.evaluate((el) => el.player.queue());
    console.log(
      `knee lab queue: 85% peak ${q85.peak}, empty after ${(100 * q85.empty_steps / q85.steps).toFixed(0)}% of steps; ` +
        `100% peak ${q100.peak} at ${q100.peak_s.toFixed(0)} s; 110% peak ${q110.peak}, ${q110.last} waiting at the last arrival`,
    );
    expect(q85.emptied_after_peak).toBe(true);
    expect(q100.peak, 'at 100% the queue wanders to peaks many times higher').toBeGreaterThan(3 * q85.peak);
    expect(q110.emptied_after_peak).toBe(false);
    // Tracing a run for the player (the whole run once, then a window) is one task: keep it short.
    const built = await lab.evaluate((el) => el.timings.player);
    console.log(`player traces: ${built.map((ms) => ms.toFixed(1)).join(', ')} ms`);
    expect(Math.max(...built)).toBeLessThan(50);
  });

  test('Step 2: no step runs long with chunked prefill, one does without; the smallest KV cache preempts at a higher load', async ({ page }) => {
    await openPage(page, '/');
    await page.evaluate(() => {
      document.querySelector('[data-step="2"] input[value="decode"]').click();
      document.querySelector('[data-step="2"] button.reveal').click();
    });
    const lab = page.locator('[data-step="2"] knee-lab');
    await lab.scrollIntoViewIfNeeded();
    await traced(lab);
    const longest = async () => {
      await lab.locator('#replica-longest').click();
      return lab.evaluate((el) => el.player.stepData());
    };
    const on = await longest();
    await traced(lab, 'lab.shadowRoot.getElementById("chunked-prefill").click()');
    const off = await longest();
    console.log(
      `Step 2 at 60%: longest step ${(on.duration_s * 1e3).toFixed(0)} ms chunked (${on.prefill_tokens} prefill tokens), ` +
        `${(off.duration_s * 1e3).toFixed(0)} ms unchunked (${off.prefill_tokens}) with ${off.decode_tokens} decodes waiting`,
    );
    expect(on.prefill_tokens + on.decode_tokens).toBeLessThanOrEqual(on.max_num_batched_tokens);
    expect(off.prefill_tokens).toBeGreaterThan(on.max_num_batched_tokens);
    expect(off.decode_tokens).toBeGreaterThan(0);
    expect(off.duration_s).toBeGreaterThan(2 * on.duration_s);
    await traced(lab, 'lab.shadowRoot.getElementById("chunked-prefill").click()');
    await traced(lab, 'lab.state = { kvCacheTokens: arg[0], load: arg[1] }', [50000, 0.95]);
    await expect(lab.locator('#replica-preemption')).toBeEnabled();
    await lab.locator('#replica-preemption').click();
    await expect(lab.locator('[data-player="events"]')).toContainText('preempted');
  });
});
