// The wasm boundary in a real Chromium: the page's modules accept and reject configs exactly as
// the CLI does (same schema, same messages, see crates/cli/tests/cli.rs), and a wrong argument
// from JS is an Error naming it, after which the module and its Lab still work. The lab's own
// module is `wasm`; the engine's functions (`simulate`, `sweep`, `size`) and a lab's readings
// below its charts are the third module's, `later`.
import fs from 'node:fs';
import { test, expect, openPage } from './helpers.mjs';

/**
 * Calls `fn(wasm, arg, later, lesson)` in the page with the lab's module, the third and the
 * lesson's (its `SweepJob` and `ReplicaView`, beside the lab's) loaded; returns what it returns.
 */
async function withWasm(page, fn, arg) {
  return page.evaluate(
    async ([source, arg]) => {
      const { loadKneelab } = await import('/js/wasm.js');
      const { loadLater } = await import('/js/later.js');
      const lesson = await import('/pkg/kneelab_lesson.js');
      const [wasm, later] = await Promise.all([loadKneelab(), loadLater(), lesson.default()]);
      // eslint-disable-next-line no-new-func
      return new Function('wasm', 'arg', 'later', 'lesson', `return (${source})(wasm, arg, later, lesson);`)(
        wasm,
        arg,
        later,
        lesson,
      );
    },
    [fn.toString(), arg],
  );
}

test.beforeEach(async ({ page }) => {
  await openPage(page, '/lab.html');
});

// The page runs the CLI's engine on the same random numbers: every example config through the
// wasm gives its stored summary (crates/cli/tests/golden, written by `kneelab run`) to the last
// bit. So a claim tested natively (crates/sim/tests/lesson.rs) is a claim about what the reader
// sees. (It once failed: `SmallRng` is another generator on wasm32, and p99 at 85% read 3.5 s on
// the page against 2.5 s in the tests.)
test('the page computes the CLI’s numbers to the bit: every example equals its golden summary', async ({ page }) => {
  const root = new URL('..', import.meta.url);
  const names = fs
    .readdirSync(new URL('examples/', root))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    // The fleet runs in its own module; a day's traffic (load.traffic) is the CLI's alone.
    .filter((n) => !['fleet', 'day'].includes(n));
  expect(names.length).toBeGreaterThanOrEqual(6);
  for (const name of names) {
    const config = JSON.parse(fs.readFileSync(new URL(`examples/${name}.json`, root), 'utf8'));
    const golden = JSON.parse(fs.readFileSync(new URL(`crates/cli/tests/golden/${name}.json`, root), 'utf8'));
    const got = await withWasm(page, (_, config, later) => JSON.parse(JSON.stringify(later.simulate(config))), config);
    expect(got, name).toEqual(golden);
  }
});

// A page's SweepJob runs a sweep a few thousand engine steps a call, however long each point's
// run (it once ran the capacity measurement, then each point, whole: a 50,000-request point was
// one call, and a long task on a slow machine), and ends in the third module's `sweep()` exactly.
test('a SweepJob runs in calls of bounded work and gives sweep()’s result to the bit', async ({ page }) => {
  const r = await withWasm(page, (wasm, _, later, lesson) => {
    const config = { workload: { preset: 'rag' }, load: { mode: 'open' }, run: { requests: 50000 } };
    const loads = [0.5, 0.9, 1.1];
    const job = new lesson.SweepJob(config, loads);
    let calls = 1;
    while (job.step()) calls++;
    return { calls, job: JSON.stringify(job.result()), whole: JSON.stringify(later.sweep(config, loads)) };
  });
  // 50,000 requests a point are tens of thousands of engine steps: many calls each.
  expect(r.calls).toBeGreaterThan(30);
  expect(JSON.parse(r.job).points).toHaveLength(3);
  expect(r.job).toBe(r.whole);
});

test('simulate rejects what the CLI rejects, with the CLI message', async ({ page }) => {
  // [config as JSON text, the start of the message] — the CLI prints the same after `<stdin>: `.
  const rows = [
    ['{"engine": {"max_num_seq": 1}}', 'engine.max_num_seq: unknown field `max_num_seq`'],
    ['{"engine": {"max_num_seqs": 0}}', 'engine.max_num_seqs: must be from 1 to 16384, got 0'],
    ['{"seed": "x"}', 'seed: invalid type'],
    ['{"cost": {"model": 5}}', 'cost.model: invalid type'],
    ['{"load": {"mode": "open", "rate_rps": 5e-324}}', 'load.rate_rps: must be from'],
    ['{"run": {"requests": 10, "warmup_requests": 10}}', 'run.warmup_requests:'],
  ];
  const got = await withWasm(
    page,
    (_, rows, later) =>
      rows.map(([json]) => {
        try {
          later.simulate(JSON.parse(json));
          return 'no error';
        } catch (err) {
          return `${err instanceof Error}|${err.message}`;
        }
      }),
    rows,
  );
  rows.forEach(([json, start], i) => {
    const [isError, message] = got[i].split(/\|(.*)/s);
    expect(isError, json).toBe('true');
    expect(message.startsWith(start), `${json}: ${message}`).toBe(true);
    expect(message).not.toMatch(/^Error: |JsValue\(|\n/);
  });
});

test('wrong arguments from JS are errors naming them, and the Lab stays usable', async ({ page }) => {
  const result = await withWasm(page, (wasm, _, later, lesson) => {
    const messages = [];
    const attempt = (fn) => {
      try {
        fn();
        messages.push('no error');
      } catch (err) {
        messages.push(err.message);
      }
    };
    const lab = new wasm.Lab();
    const config = { run: { requests: 500 }, load: { mode: 'open' } };
    attempt(() => lab.setConfig({ get engine() { throw new Error('a getter that throws'); } }));
    attempt(() => lab.setConfig(5));
    attempt(() => lab.setConfig({ engine: { max_num_seq: 1 } }));
    attempt(() => lab.setLoad('0.5'));
    attempt(() => lab.setLoad(NaN));
    attempt(() => later.metricsText(config, 'x', 0.5, 'm'));
    attempt(() => lab.draw('latency', {}, false));
    attempt(() => later.sweep({}, [0.5, 'x']));
    attempt(() => later.size({ max_num_seqs: 64, batch_s: Symbol('s'), peak_qps: 40 }));
    attempt(() => later.size(64));
    attempt(() => new lesson.SweepJob({}, 7));
    // After every failure above, the same Lab takes a config and runs.
    lab.setConfig(config);
    lab.setLoad(0.5);
    while (lab.sweepStep()) {}
    const readouts = lab.runPoint();
    attempt(() => later.metricsText(config, lab.capacity(), 0.5, 5));
    attempt(() => later.metricsReading(config, lab.capacity(), 'half', 'm'));
    attempt(() => later.compareLoops(config, lab.capacity(), 0.5, 'long'));
    const metrics = later.metricsText(config, lab.capacity(), 0.5, 'm').length;
    // The reading is of that very text: the same bytes, and a dashboard beside them.
    const reading = later.metricsReading(config, lab.capacity(), 0.5, 'm');
    if (reading.text !== later.metricsText(config, lab.capacity(), 0.5, 'm')) throw new Error('two texts');
    if (!(reading.dashboard.p99['vllm:time_to_first_token_seconds'].value > 0)) {
      throw new Error(`no TTFT p99 in ${JSON.stringify(reading.dashboard)}`);
    }
    // A capacity whose unloaded latency is unknown (NaN, which crosses as null) is still a capacity.
    const unknownBase = later.compareLoops(config, { ...lab.capacity(), base_latency_s: null }, 0.5, 5).users;
    return { messages, throughput: readouts.throughput_rps, metrics, unknownBase };
  });
  expect(result.messages).toEqual([
    expect.stringMatching(/^config: could not be read as JSON: a getter that throws$/),
    expect.stringMatching(/^config: expected an object .* got the number 5$/),
    expect.stringMatching(/^engine\.max_num_seq: unknown field/),
    expect.stringMatching(/^load\.offered_load: expected a number, got the string "0\.5"$/),
    expect.stringMatching(/^load\.offered_load: expected a finite number/),
    expect.stringMatching(/^capacity: expected a capacity \(.*\), got the string "x"$/),
    expect.stringMatching(/^canvas: expected a <canvas> element, got an object$/),
    expect.stringMatching(/^loads\[1\]: expected a number, got the string "x"$/),
    expect.stringMatching(/^batch_s: expected a number, got a symbol$/),
    expect.stringMatching(/^size: expected an object \{max_num_seqs, batch_s, peak_qps\}, got the number 64$/),
    expect.stringMatching(/^loads: expected an array of numbers, got the number 7$/),
    expect.stringMatching(/^model_name: expected a string, got the number 5$/),
    expect.stringMatching(/^load\.offered_load: expected a number, got the string "half"$/),
    expect.stringMatching(/^load\.think_time_s: expected a number, got the string "long"$/),
  ]);
  expect(result.throughput).toBeGreaterThan(0);
  expect(result.metrics).toBeGreaterThan(100);
  expect(result.unknownBase, 'users sized without the unloaded latency: the fewest').toBe(1);
});

test('every error carries the path at fault and its kind, not only a message', async ({ page }) => {
  const seen = await withWasm(page, (wasm, _, later) => {
    const grab = (f) => {
      try {
        f();
        return null;
      } catch (e) {
        return { path: e.path, kind: e.kind, message: e.message, isError: e instanceof Error };
      }
    };
    const lab = new wasm.Lab();
    const rows = {
      range: grab(() => later.simulate({ engine: { max_num_seqs: 0 } })),
      unknown: grab(() => later.simulate({ engine: { max_num_seq: 1 } })),
      type: grab(() => later.simulate({ seed: 'x' })),
      notObject: grab(() => later.simulate(5)),
      load: grab(() => lab.setLoad(1e-9)),
      order: grab(() => lab.runPoint()),
      canvas: grab(() => lab.draw('latency', 'not a canvas', false)),
      dark: grab(() => lab.draw('latency', document.createElement('canvas'), 'yes')),
      size: grab(() => later.size('x')),
      loads: grab(() => later.sweep({}, [0.5, null])),
      steadyConfig: grab(() => new later.SteadyRun({ engine: { max_num_seqs: 0 } }, 0.85)),
      steadyLoad: grab(() => new later.SteadyRun({}, 'x')),
      steadyClosed: grab(() => new later.SteadyRun({ load: { mode: 'closed', think_time_s: 1 } }, 0.85)),
    };
    lab.free();
    return rows;
  });
  const want = {
    range: ['engine.max_num_seqs', 'invalid'],
    unknown: ['engine.max_num_seq', 'type'],
    type: ['seed', 'type'],
    notObject: ['config', 'type'],
    load: ['load.offered_load', 'invalid'],
    order: ['', 'state'],
    canvas: ['canvas', 'type'],
    dark: ['dark', 'type'],
    size: ['size', 'type'],
    loads: ['loads[1]', 'type'],
    steadyConfig: ['engine.max_num_seqs', 'invalid'],
    steadyLoad: ['load.offered_load', 'type'],
    steadyClosed: ['load.offered_load', 'invalid'],
  };
  for (const [name, [path, kind]] of Object.entries(want)) {
    const e = seen[name];
    expect(e, name).not.toBeNull();
    expect(e.isError, name).toBe(true);
    expect([e.path, e.kind], name).toEqual([path, kind]);
    // The message still reads on its own, starting with the path.
    if (path) expect(e.message.startsWith(`${path}: `), `${name}: ${e.message}`).toBe(true);
  }
});

test('the lab marks the control an engine error names, by its path', async ({ page }) => {
  const lab = page.locator('knee-lab').first();
  await lab.evaluate((el) => el.ready);
  // [a state the engine rejects, the control whose alert must say so]
  const rows = [
    [{ maxNumSeqs: 0 }, 'max-num-seqs', 'engine.max_num_seqs'],
    [{ maxNumBatchedTokens: 0 }, 'max-num-batched-tokens', 'engine.max_num_batched_tokens'],
    [{ kvCacheTokens: 0 }, 'kv-cache-tokens', 'engine.kv_cache_tokens'],
    [{ sloTtftMs: -5 }, 'slo-ttft-ms', 'slo.ttft_ms'],
    [{ sloTpotMs: 0 }, 'slo-tpot-ms', 'slo.tpot_ms'],
  ];
  for (const [bad, control, path] of rows) {
    const good = await lab.evaluate((el, keys) => Object.fromEntries(keys.map((k) => [k, el.state[k]])), Object.keys(bad));
    await lab.evaluate((el, s) => {
      el.state = s;
    }, bad);
    await expect(lab.locator(`#${control}-error`), JSON.stringify(bad)).toContainText(`${path}: `);
    await expect(lab.locator('#general-error')).toHaveText('');
    await lab.evaluate(async (el, s) => {
      el.state = s;
      await el.idle();
    }, good);
    await expect(lab.locator(`#${control}-error`)).toHaveText('');
  }
});

test.describe(() => {
  test.use({ allowedIssues: ['crashForTest: the module was asked to trap'] });
  test('a trap in the third module discards it once, and the next call runs on a fresh instance', async ({ page }) => {
    const fetched = [];
    page.on('request', (req) => fetched.push(req.url()));
    const got = await page.evaluate(async () => {
      const { callLater } = await import('/js/later.js');
      const size = { max_num_seqs: 64, batch_s: 8, peak_qps: 100 };
      const before = (await callLater('size', size)).replicas;
      const trapped = await callLater('crashForTest').then(() => 'no error', (err) => err.constructor.name);
      const after = (await callLater('size', size)).replicas;
      const { kneelabGeneration } = await import('/js/wasm.js');
      return { before, trapped, after, labModule: kneelabGeneration() };
    });
    expect(got).toEqual({ before: 13, trapped: 'RuntimeError', after: 13, labModule: 0 });
    expect(fetched.filter((url) => /kneelab_later\.js\?instance=\d/.test(url)).map((url) => url.split('?')[1])).toEqual(['instance=1']);
  });
});
