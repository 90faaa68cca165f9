// Embedding the lab as a course author does: the npm package, installed from its tarball
// (`cargo xtask dist` packs it), on sites of our own served by tests/static-server.mjs: at a
// subpath, under a strict CSP, from a second origin with CORS, in an iframe, in a real MkDocs
// build; 50 labs created and removed; every attribute given garbage; a theme against the OS.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, expect } from './helpers.mjs';
import { serveFolder } from './static-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const target = path.resolve(here, '..', 'target');
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";

/** The newest tarball `cargo xtask dist` packed. */
function tarball() {
  const found = fs.existsSync(target) ? fs.readdirSync(target).filter((f) => /^kneelab-\d+\.\d+\.\d+\.tgz$/.test(f)) : [];
  if (found.length === 0) throw new Error('no target/kneelab-*.tgz: run `cargo xtask dist` (`cargo xtask test` does)');
  const newest = found.map((f) => path.join(target, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  return newest;
}

/** Writes `dir/index.html`: a page with `head` (its scripts) and `body`. */
function writePage(dir, title, head, body) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.html'), page(title, head, body));
}

const page = (title, head, body) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  ${head}
</head>
<body>
${body}
</body>
</html>
`;

let work;
let site;
let cdn;
let wrongMime;
let pkgDir;

test.beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'kneelab-embed-'));
  // As an author would: npm install the tarball (no registry needed: the package has no dependencies).
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--prefix', work, tarball()], { stdio: 'pipe' });
  pkgDir = path.join(work, 'node_modules', 'kneelab');
  const root = path.join(work, 'site');
  const course = path.join(root, 'courses', 'x');
  fs.cpSync(pkgDir, path.join(course, 'kneelab'), { recursive: true });
  fs.cpSync(pkgDir, path.join(work, 'cdn', 'kneelab'), { recursive: true });
  // The README's tags for loading sooner, as an author would paste them.
  const readme = fs.readFileSync(path.join(pkgDir, 'README.md'), 'utf8');
  const sooner = readme.match(/\*\*Loading sooner\.\*\*[\s\S]*?```html\n([\s\S]*?)```/)[1].replaceAll('kneelab/', '../kneelab/');
  writePage(
    path.join(course, 'lesson-32'),
    'Lesson 32',
    `${sooner}<script type="module" src="../kneelab/js/knee-lab.js"></script>`,
    '<h1>Lesson 32: the knee</h1>\n<knee-lab load="0.9" workload="chat" requests="1000" panels="latency throughput"><p id="fallback">The lab needs JavaScript.</p></knee-lab>',
  );
  const frame = path.join(course, 'iframe');
  writePage(
    frame,
    'Lesson 33',
    '<script type="module" src="./size.js"></script>',
    '<h1>Lesson 33</h1>\n<iframe id="kneelab" src="../kneelab/lab.html?workload=chat&amp;load=0.9&amp;requests=1000&amp;panels=latency" title="The knee lab"></iframe>',
  );
  // The README's listener, as a module file (the page is under the strict CSP too).
  fs.writeFileSync(
    path.join(frame, 'size.js'),
    `const frame = document.getElementById('kneelab');
frame.style.width = '100%';
frame.style.border = '0';
addEventListener('message', (e) => {
  if (e.source === frame.contentWindow && e.data?.type === 'kneelab:height') frame.style.height = \`\${e.data.height}px\`;
});
`,
  );
  // Every page of the course site is under the strict CSP, except the one that loads the lab
  // from another origin (a CSP would have to name that origin).
  const strict = (p) => (p.endsWith('/') || p.endsWith('.html')) && !p.includes('/from-cdn/');
  site = await serveFolder(root, { headers: (p) => (strict(p) ? { 'content-security-policy': CSP } : {}) });
  cdn = await serveFolder(path.join(work, 'cdn'), { headers: () => ({ 'access-control-allow-origin': '*' }) });
  wrongMime = await serveFolder(root, { types: { '.wasm': 'application/octet-stream' } });
  writePage(
    path.join(course, 'from-cdn'),
    'Lesson 34',
    `<script type="module" src="${cdn.origin}/kneelab/js/knee-lab.js"></script>`,
    '<knee-lab load="0.9" workload="chat" requests="1000" panels="latency"></knee-lab>',
  );
});

test.afterAll(async () => {
  await Promise.all([site?.close(), cdn?.close(), wrongMime?.close()]);
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** Records CSP violations from the first script on (events, not console text). */
async function watchCsp(pg) {
  await pg.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
}

/** Waits for every lab on the page to be ready and idle; returns how many there are. */
const labsSettled = (pg) =>
  pg.evaluate(async () => {
    const labs = [...document.querySelectorAll('knee-lab')];
    await Promise.all(labs.map(async (l) => {
      await customElements.whenDefined('knee-lab');
      await l.ready;
      await l.idle();
    }));
    return labs.length;
  });

/** Pixels of a lab's canvas that differ from its first pixel. */
const inked = (pg, id) =>
  pg.locator('knee-lab').first().evaluate((el, chart) => {
    const c = el.shadowRoot.getElementById(`chart-${chart}`);
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 4; i < data.length; i += 4) if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2]) n++;
    return n;
  }, id);

test('the package has what an author needs, and its manifest and types agree with the element', async ({ page: pg }) => {
  const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  expect(manifest).toMatchObject({ name: 'kneelab', type: 'module', types: './js/knee-lab.d.ts', customElements: 'custom-elements.json' });
  expect(manifest.exports['.']).toEqual({ types: './js/knee-lab.d.ts', default: './js/knee-lab.js' });
  for (const file of ['README.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'lab.html', 'favicon.svg', 'pkg/kneelab_web_bg.wasm', 'js/knee-lab.d.ts']) {
    expect(fs.existsSync(path.join(pkgDir, file)), file).toBe(true);
  }
  expect(fs.readFileSync(path.join(pkgDir, 'README.md'), 'utf8')).toMatch(/^# kneelab[^\n]*\n[\s\S]*## Embed it: one tag/);
  // The tested wasm is the shipped one: the package's is byte for byte www/pkg's.
  const shipped = fs.readFileSync(path.join(pkgDir, 'pkg', 'kneelab_web_bg.wasm'));
  expect(shipped.equals(fs.readFileSync(path.resolve(here, '..', 'www', 'pkg', 'kneelab_web_bg.wasm')))).toBe(true);

  await pg.goto(`${site.origin}/courses/x/lesson-32/`);
  await labsSettled(pg);
  const element = await pg.evaluate(() => {
    const lab = document.querySelector('knee-lab');
    const sheet = lab.shadowRoot.adoptedStyleSheets.map((s) => [...s.cssRules].map((r) => r.cssText).join('\n')).join('\n');
    return {
      attributes: lab.constructor.observedAttributes,
      state: Object.keys(lab.state),
      properties: [...sheet.matchAll(/(--kl-[a-z]+):/g)].map((m) => m[1]),
      parts: [...lab.shadowRoot.querySelectorAll('[part]')].map((e) => e.getAttribute('part')),
    };
  });
  const cem = JSON.parse(fs.readFileSync(path.join(pkgDir, 'custom-elements.json'), 'utf8'));
  const decl = cem.modules[0].declarations[0];
  expect(decl.tagName).toBe('knee-lab');
  expect(decl.attributes.map((a) => a.name).sort()).toEqual([...element.attributes].sort());
  expect([...new Set(decl.cssProperties.map((p) => p.name))].sort()).toEqual([...new Set(element.properties)].sort());
  expect(decl.cssParts.map((p) => p.name).sort()).toEqual([...new Set(element.parts)].sort());
  // Every state key is typed, and every attribute the manifest maps to a field is a state key.
  const dts = fs.readFileSync(path.join(pkgDir, 'js', 'knee-lab.d.ts'), 'utf8');
  const typed = dts.slice(dts.indexOf('interface KneeLabState'), dts.indexOf('}', dts.indexOf('interface KneeLabState')));
  expect([...typed.matchAll(/^\s+(\w+):/gm)].map((m) => m[1]).sort()).toEqual([...element.state].sort());
  for (const a of decl.attributes.filter((x) => x.fieldName)) expect(element.state, a.name).toContain(a.fieldName);

  // TypeScript accepts an author's use of the declared API and rejects a misuse.
  const consumer = path.join(work, 'consumer');
  fs.mkdirSync(consumer, { recursive: true });
  fs.cpSync(pkgDir, path.join(consumer, 'node_modules', 'kneelab'), { recursive: true });
  const tsc = path.resolve(here, 'node_modules', 'typescript', 'bin', 'tsc');
  const check = (source) => {
    fs.writeFileSync(path.join(consumer, 'use.ts'), source);
    try {
      execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--lib', 'es2022,dom', '--module', 'nodenext', '--moduleResolution', 'nodenext', 'use.ts'], { cwd: consumer, stdio: 'pipe' });
      return '';
    } catch (err) {
      return String(err.stdout);
    }
  };
  expect(check(`import { KneeLab, DEFAULT_STATE, type KneeLabState } from 'kneelab';
const lab = document.querySelector('knee-lab');
if (lab) {
  lab.state = { load: 0.9, mode: 'closed' };
  const s: KneeLabState = lab.state;
  lab.addEventListener('kneelab-update', (e) => console.log(e.detail.readouts.ttft_p99, e.detail.sweepDone, s.load));
  lab.ready.then(async () => {
    const text: string = await lab.metricsText();
    console.log(text.length, await lab.compareLoops());
  });
}
const made: KneeLab = document.createElement('knee-lab');
console.log(made.timings.input.length, DEFAULT_STATE.maxNumSeqs);
`)).toBe('');
  expect(check(`import 'kneelab';\nconst lab = document.createElement('knee-lab');\nlab.state = { mode: 'sideways' };\n`)).toMatch(/sideways/);

  // <fleet-lab> too: in the manifest with members the element has, and typed for TypeScript.
  const fleetDecl = cem.modules.find((m) => m.path === 'js/fleet-lab.js').declarations[0];
  expect(fleetDecl.tagName).toBe('fleet-lab');
  const fleetMembers = await pg.evaluate(async (url) => {
    const { FleetLabElement } = await import(url);
    return Object.getOwnPropertyNames(FleetLabElement.prototype);
  }, `${site.origin}/courses/x/kneelab/js/fleet-lab.js`);
  for (const m of fleetDecl.members.filter((x) => x.name !== 'ready')) expect(fleetMembers, m.name).toContain(m.name);
  expect(manifest.exports['./fleet-lab']).toEqual({ types: './js/fleet-lab.d.ts', default: './js/fleet-lab.js' });
  expect(check(`import { FleetLabElement, type FleetTotals } from 'kneelab/fleet-lab';
const fleet = document.querySelector('fleet-lab');
if (fleet) {
  fleet.settings = { 'autoscaler.signal': 'gpu_util', 'traffic.peak_rps': 40, 'autoscaler.signl': undefined };
  fleet.addEventListener('fleet-run', (e) => console.log(e.detail.totals.attainment));
  fleet.play().then((t: FleetTotals | null) => console.log(t?.gpu_hours), (err: Error) => console.log(err.message));
}
const made: FleetLabElement = document.createElement('fleet-lab');
made.pin();
`)).toBe('');
  expect(check(`import 'kneelab/fleet-lab';\ndocument.createElement('fleet-lab').play(5);\n`)).toMatch(/Expected 0 arguments/);
  // kneelab/later, as the README shows it: typed, and a misuse caught.
  expect(manifest.exports['./later']).toEqual({ types: './pkg/kneelab_later.d.ts', default: './pkg/kneelab_later.js' });
  expect(check(`import init, { simulate, sweep, size, type KneelabError } from 'kneelab/later';
void init().then(() => {
  const run = simulate({ workload: { preset: 'chat' }, load: { mode: 'open', rate_rps: 2 } });
  console.log(run.throughput_rps, sweep({}, [0.5, 0.9]).knee, size({ max_num_seqs: 64, batch_s: 8, peak_qps: 100 }));
  try { simulate({}); } catch (err) { console.log((err as KneelabError).path); }
});
`)).toBe('');
  expect(check(`import { sweep } from 'kneelab/later';\nsweep({}, 0.5);\n`)).toMatch(/not assignable to parameter of type 'number\[\]'/);
  // Each export's types condition comes before its default (conditions match in order).
  for (const [name, conditions] of Object.entries(manifest.exports)) {
    if (typeof conditions === 'object') expect(Object.keys(conditions), name).toEqual(['types', 'default']);
  }
});

test('at a subpath, under a strict CSP (default-src, script-src, style-src): it runs with no violation', async ({ page: pg }) => {
  await watchCsp(pg);
  const wasm = [];
  pg.on('request', (req) => req.url().endsWith('.wasm') && wasm.push(new URL(req.url()).pathname));
  await pg.goto(`${site.origin}/courses/x/lesson-32/`);
  expect(await labsSettled(pg)).toBe(1);
  // The README's preload is the very request the lab uses: one download, not two.
  expect(wasm).toEqual(['/courses/x/kneelab/pkg/kneelab_web_bg.wasm']);
  const lab = pg.locator('knee-lab');
  await expect(lab.locator('[data-metric=ttft_p99] dd')).toHaveText(/^\d[\d.,]* (ms|s)$/);
  expect(await inked(pg, 'latency')).toBeGreaterThan(1000);
  expect(await lab.evaluate((el) => el.state)).toMatchObject({ load: 0.9, workload: 'chat' });
  // The readings below the charts come from the package's third module, found beside the first.
  expect(await lab.evaluate((el) => el.metricsText())).toContain('vllm:num_requests_running{');
  // The fallback content is light DOM: hidden behind the shadow root once the element is defined.
  expect(await pg.locator('#fallback').isVisible()).toBe(false);
  expect(await pg.evaluate(() => window.__csp)).toEqual([]);
});

test('bundled into a site\'s own script, the wasm found where a meta tag says pkg/ is served', async ({ page: pg }) => {
  // As the README says: `import 'kneelab'` in the site's entry, bundled (esbuild here), and the
  // package's pkg/ folder served where the page's <meta name="kneelab-pkg"> says.
  const app = path.join(work, 'bundled');
  fs.mkdirSync(path.join(app, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(work, 'entry.js'), "import 'kneelab';\n");
  const esbuild = path.join(here, 'node_modules', '.bin', 'esbuild');
  execFileSync(esbuild, [path.join(work, 'entry.js'), '--bundle', '--format=esm', `--outfile=${path.join(app, 'assets', 'app.js')}`], { stdio: 'pipe' });
  fs.cpSync(path.join(pkgDir, 'pkg'), path.join(app, 'static', 'kneelab-pkg'), { recursive: true });
  writePage(
    path.join(app, 'lesson'),
    'Bundled',
    '<meta name="kneelab-pkg" content="../static/kneelab-pkg"><script type="module" src="../assets/app.js"></script>',
    '<knee-lab load="0.9" requests="1000" panels="latency"></knee-lab>',
  );
  const served = await serveFolder(app);
  try {
    await pg.goto(`${served.origin}/lesson/`);
    expect(await labsSettled(pg)).toBe(1);
    expect(await inked(pg, 'latency')).toBeGreaterThan(1000);
    // The third module comes from there too.
    expect(await pg.locator('knee-lab').evaluate((el) => el.metricsText())).toContain('vllm:num_requests_running{');
    const wasm = await pg.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((n) => n.endsWith('.wasm')));
    expect(wasm).toEqual(['/static/kneelab-pkg/kneelab_web_bg.wasm', '/static/kneelab-pkg/kneelab_later_bg.wasm']);
  } finally {
    await served.close();
  }
});

test('the module served from a second origin with CORS', async ({ page: pg }) => {
  await pg.goto(`${site.origin}/courses/x/from-cdn/`);
  expect(await labsSettled(pg)).toBe(1);
  expect(await inked(pg, 'latency')).toBeGreaterThan(1000);
  const wasm = await pg.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).find((n) => n.endsWith('.wasm')));
  expect(new URL(wasm).origin).toBe(cdn.origin);
  // The third module too comes from the CDN, beside the first.
  const c = await pg.locator('knee-lab').evaluate((el) => el.compareLoops());
  expect(c.closed.throughput_rps).toBeLessThan(c.open.throughput_rps);
  const later = await pg.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).find((n) => n.endsWith('kneelab_later_bg.wasm')));
  expect(new URL(later).origin).toBe(cdn.origin);
});

test.describe('a wrong .wasm MIME type', () => {
  test.use({ allowedIssues: [/instantiateStreaming|application\/wasm/] });
  test('still loads, and the lab says so in words', async ({ page: pg }) => {
    await pg.goto(`${wrongMime.origin}/courses/x/lesson-32/`);
    await labsSettled(pg);
    await expect(pg.locator('knee-lab').locator('#status')).toHaveText(/kneelab_web_bg\.wasm as application\/octet-stream, not application\/wasm; the lab works, but loads more slowly/);
  });
});

test('the iframe takes URL parameters and is sized by its height message', async ({ page: pg }) => {
  await watchCsp(pg);
  await pg.goto(`${site.origin}/courses/x/iframe/`);
  const frame = pg.frameLocator('#kneelab');
  await expect(frame.locator('html')).toHaveAttribute('data-ready', 'true');
  const inner = pg.frames().find((f) => f.url().includes('lab.html'));
  await inner.evaluate(async () => {
    const lab = document.querySelector('knee-lab');
    await lab.ready;
    await lab.idle();
  });
  expect(await inner.evaluate(() => document.querySelector('knee-lab').state)).toMatchObject({ workload: 'chat', load: 0.9, requests: 1000 });
  await expect.poll(async () => {
    const [outer, content] = await Promise.all([
      pg.locator('#kneelab').evaluate((f) => f.getBoundingClientRect().height),
      inner.evaluate(() => document.documentElement.scrollHeight),
    ]);
    return Math.abs(outer - content) <= 1 && outer > 500;
  }).toBe(true);
  // Sized to its content: the frame scrolls nothing.
  expect(await inner.evaluate(() => document.documentElement.scrollHeight <= innerHeight + 1)).toBe(true);
  expect(await pg.evaluate(() => window.__csp)).toEqual([]);

  // A bad parameter is shown on the lab, naming it.
  await pg.goto(`${site.origin}/courses/x/kneelab/lab.html?load=lots&panels=latency`);
  await expect(pg.locator('knee-lab').locator('#offered-load-error')).toHaveText(/^load: "lots" is not a decimal number/);
  await expect(pg.locator('#url-error')).toBeHidden();

  // A parameter the lab has no attribute for is named on the page, not dropped silently; the rest apply.
  await pg.goto(`${site.origin}/courses/x/kneelab/lab.html?loda=0.7&load=0.6&requests=1000`);
  await expect(pg.locator('#url-error')).toBeVisible();
  await expect(pg.locator('#url-error')).toHaveText(/^Ignored URL parameter "loda": the lab's are .*\bload\b.*, or a Config path\.$/);
  expect(await pg.evaluate(async () => {
    const lab = document.querySelector('knee-lab');
    await lab.ready;
    return lab.state.load;
  })).toBe(0.6);
});

test('every attribute given garbage shows an error naming it', async ({ page: pg }) => {
  await pg.goto(`${site.origin}/courses/x/lesson-32/`);
  await labsSettled(pg);
  const results = await pg.evaluate(async () => {
    const lab = document.querySelector('knee-lab');
    const out = {};
    for (const name of lab.constructor.observedAttributes) {
      lab.setAttribute(name, 'zz%garbage');
      await lab.idle();
      out[name] = [...lab.shadowRoot.querySelectorAll('.error')].map((e) => e.textContent).join(' | ');
      lab.removeAttribute(name);
      await lab.idle();
    }
    return out;
  });
  for (const [name, text] of Object.entries(results)) {
    expect(text, name).toContain(`${name}: `);
    expect(text, name).toContain('zz%garbage');
  }
  expect(Object.keys(results).length).toBeGreaterThanOrEqual(20);
});

test('50 labs created and removed leave at most one alive after GC', async ({ page: pg }) => {
  test.setTimeout(120_000);
  await pg.goto(`${site.origin}/courses/x/lesson-32/`);
  await labsSettled(pg);
  await pg.evaluate(async () => {
    window.__freed = 0;
    // Kept on window: a registry that is itself collected calls nothing back.
    const registry = (window.__registry = new FinalizationRegistry(() => {
      window.__freed += 1;
    }));
    for (let i = 0; i < 50; i++) {
      const lab = document.createElement('knee-lab');
      lab.setAttribute('requests', '500');
      lab.setAttribute('panels', 'latency');
      document.body.append(lab);
      await lab.ready;
      await lab.idle();
      lab.remove();
      registry.register(lab, i);
    }
  });
  const cdp = await pg.context().newCDPSession(pg);
  await expect.poll(async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    await pg.waitForTimeout(200);
    return pg.evaluate(() => window.__freed);
  }, { timeout: 30_000 }).toBeGreaterThanOrEqual(49);
});

test('theme="dark" on a light OS and theme="light" on a dark one reach the charts', async ({ browser }) => {
  for (const [os, theme] of [['light', 'dark'], ['dark', 'light']]) {
    const context = await browser.newContext({ colorScheme: os });
    const pg = await context.newPage();
    await pg.goto(`${site.origin}/courses/x/kneelab/lab.html?theme=${theme}&panels=latency&requests=1000`);
    await labsSettled(pg);
    const seen = await pg.locator('knee-lab').evaluate((el) => {
      const c = el.shadowRoot.getElementById('chart-latency');
      const [r, g, b] = c.getContext('2d').getImageData(2, 2, 1, 1).data;
      return { scheme: getComputedStyle(el).colorScheme, corner: (r * 299 + g * 587 + b * 114) / 1000 };
    });
    expect(seen.scheme, `${theme} on a ${os} OS`).toBe(theme);
    if (theme === 'dark') expect(seen.corner).toBeLessThan(60);
    else expect(seen.corner).toBeGreaterThan(200);
    // The page around the lab takes its theme too: no light margins around a dark lab in a frame.
    const page = await pg.evaluate(() => {
      const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number);
      return { scheme: getComputedStyle(document.documentElement).colorScheme, body: (r * 299 + g * 587 + b * 114) / 1000 };
    });
    expect(page.scheme).toBe(theme);
    if (theme === 'dark') expect(page.body).toBeLessThan(60);
    else expect(page.body).toBeGreaterThan(200);
    // A site's own colours restyle the charts as well as the chrome.
    await pg.locator('knee-lab').evaluate((el) => el.style.setProperty('--kl-bg', 'rgb(250, 220, 180)'));
    await expect.poll(() => pg.locator('knee-lab').evaluate((el) => {
      const c = el.shadowRoot.getElementById('chart-latency');
      return [...c.getContext('2d').getImageData(2, 2, 1, 1).data.slice(0, 3)].join(',');
    })).toBe('250,220,180');
    await context.close();
  }
});

test('no sideways scroll at 320, 360 and 700 px; the lab stays inside its box', async ({ browser }) => {
  for (const width of [320, 360, 700]) {
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    const pg = await context.newPage();
    await pg.goto(`${site.origin}/courses/x/kneelab/lab.html?requests=1000`);
    await labsSettled(pg);
    const fit = await pg.evaluate(() => {
      const lab = document.querySelector('knee-lab');
      const inner = lab.shadowRoot.querySelector('.lab');
      return { page: document.documentElement.scrollWidth - innerWidth, lab: inner.scrollWidth - lab.clientWidth };
    });
    expect(fit, `${width} px`).toEqual({ page: 0, lab: 0 });
    await context.close();
  }
});

test('in a real MkDocs build, the lab in a Markdown page', async ({ page: pg }) => {
  test.setTimeout(90_000);
  const project = path.join(work, 'mkdocs');
  fs.mkdirSync(path.join(project, 'docs'), { recursive: true });
  fs.cpSync(pkgDir, path.join(project, 'docs', 'kneelab'), { recursive: true });
  fs.writeFileSync(
    path.join(project, 'mkdocs.yml'),
    'site_name: A course\ntheme:\n  name: mkdocs\n  highlightjs: false\nnav:\n  - index.md\n  - lesson-32.md\nextra_javascript:\n  - path: kneelab/js/knee-lab.js\n    type: module\n',
  );
  fs.writeFileSync(path.join(project, 'docs', 'index.md'), '# A course\n\nSee [lesson 32](lesson-32.md).\n');
  fs.writeFileSync(
    path.join(project, 'docs', 'lesson-32.md'),
    '# Lesson 32: the knee\n\nDrag the load past 90% and watch p99.\n\n<knee-lab load="0.9" workload="chat" requests="1000" panels="latency throughput"></knee-lab>\n\nWhat did p99 do?\n',
  );
  try {
    execFileSync('python3', ['-m', 'mkdocs', 'build', '--quiet', '--site-dir', path.join(project, 'site')], { cwd: project, stdio: 'pipe' });
  } catch (err) {
    throw new Error(`mkdocs build failed (is mkdocs installed? \`pip install mkdocs\`): ${err.stderr ?? err.message}`);
  }
  const built = await serveFolder(path.join(project, 'site'));
  try {
    await pg.goto(`${built.origin}/lesson-32/`);
    expect(await labsSettled(pg)).toBe(1);
    expect(await inked(pg, 'throughput')).toBeGreaterThan(1000);
    await expect(pg.locator('h1').first()).toHaveText('Lesson 32: the knee');
  } finally {
    await built.close();
  }
});
