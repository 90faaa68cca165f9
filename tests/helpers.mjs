// Shared by every spec: `import { test, expect, openPage } from './helpers.mjs'`.
//
// The `test` exported here records, for every test, console errors, uncaught page errors,
// failed requests (network failures and HTTP errors) and any request to a non-loopback origin,
// and fails the test after it ran if there was any: each test also checks "zero console errors"
// and "nothing fetched from another origin" (the page must work offline). Requests to other
// origins are aborted before they leave the machine.
// A spec that provokes an error on purpose lists it: `test.use({ allowedIssues: [/field `seed`/] })`.
import AxeBuilder from '@axe-core/playwright';
import { test as base, expect } from '@playwright/test';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True for URLs the page may fetch: loopback HTTP(S)/WS, or local schemes (data:, blob:, about:). */
export function isLocalUrl(url) {
  const { protocol, hostname } = new URL(url);
  if (['http:', 'https:', 'ws:', 'wss:'].includes(protocol)) return LOOPBACK.has(hostname);
  return ['data:', 'blob:', 'about:'].includes(protocol);
}

export const test = base.extend({
  /** Patterns (RegExp or substring) of issues a test expects; every other issue fails it. */
  allowedIssues: [[], { option: true }],

  /** The issues seen so far in this test (auto: every test gets the check). */
  pageIssues: [
    async ({ context, page, allowedIssues }, use) => {
      const issues = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error') {
          const { url, lineNumber } = msg.location();
          issues.push(`console error: ${msg.text()}${url ? ` (${url}:${lineNumber})` : ''}`);
        }
      });
      page.on('pageerror', (err) => issues.push(`page error: ${err.stack ?? err.message}`));
      // Never let a test send traffic off this machine: abort such requests (they are still
      // recorded below, as a cross-origin request and a failed one).
      await context.route(
        (url) => !isLocalUrl(url.href),
        (route) => route.abort('blockedbyclient'),
      );
      // On the context, so requests from workers are seen too.
      context.on('request', (req) => {
        if (!isLocalUrl(req.url())) issues.push(`request to another origin: ${req.method()} ${req.url()}`);
      });
      context.on('requestfailed', (req) =>
        issues.push(`request failed: ${req.method()} ${req.url()}: ${req.failure()?.errorText}`),
      );
      context.on('response', (res) => {
        if (res.status() >= 400) issues.push(`HTTP ${res.status()}: ${res.request().method()} ${res.url()}`);
      });

      await use(issues);

      const unexpected = issues.filter(
        (issue) =>
          !allowedIssues.some((p) => (p instanceof RegExp ? p.test(issue) : issue.includes(p))),
      );
      expect(unexpected, 'console errors, page errors, failed or cross-origin requests').toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

/**
 * Makes the next call of `className.prototype[method]` in the page's wasm module `module` (a
 * path under /pkg/) trap, as a panic in the module would; later calls work again.
 */
export async function trapNext(page, module, className, method) {
  await page.evaluate(
    async ([module, className, method]) => {
      const proto = (await import(module))[className].prototype;
      const real = proto[method];
      proto[method] = function () {
        proto[method] = real;
        throw new WebAssembly.RuntimeError('unreachable');
      };
    },
    [module, className, method],
  );
}

/**
 * Brings the lesson's section `id` near the screen and waits until its beat is set up: the
 * beats below the knee load their modules only as they come near (main.js).
 */
export async function reach(page, id) {
  const section = page.locator(`#${id}`);
  await section.scrollIntoViewIfNeeded();
  await expect(section).toHaveAttribute('data-ready', 'true');
}

/**
 * Opens `path` and waits until the page says its wasm module is initialised
 * (`<html data-ready="true">`); fails with the page's own message if it reports an error.
 */
export async function openPage(page, path = '/') {
  await page.goto(path);
  const html = page.locator('html');
  await expect(html).toHaveAttribute('data-ready', /^(true|error)$/);
  const state = await html.getAttribute('data-ready');
  if (state !== 'true') {
    const message = await page.locator('[role=alert]').first().textContent().catch(() => null);
    throw new Error(`the page failed to initialise: ${message ?? '(no message in the page)'}`);
  }
}

/**
 * Records, in `window.localeCalls`, every call that loads the browser's locale data (a
 * `toLocaleString` on a number, an `Intl` formatter): a page's first costs it 10-20 ms.
 */
export async function recordLocaleCalls(page) {
  await page.addInitScript(() => {
    window.localeCalls = [];
    const toLocale = Number.prototype.toLocaleString;
    Number.prototype.toLocaleString = function (...args) {
      window.localeCalls.push(String(this));
      return toLocale.apply(this, args);
    };
    for (const name of ['NumberFormat', 'ListFormat', 'PluralRules']) {
      const Original = Intl[name];
      Intl[name] = function (...args) {
        window.localeCalls.push(name);
        return new Original(...args);
      };
    }
  });
}

/**
 * What axe-core finds against WCAG 2.2 A and AA in the page as it is now (open shadow roots, the
 * labs', included): one line per rule broken, with the first few elements that break it.
 */
export async function accessibilityViolations(page) {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  return result.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}, at ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join(', ')}`,
  );
}

/** Sets the main lab's (`#lab`) state as a script would, and waits for it to settle. */
export async function setLab(page, partial) {
  await page.locator('#lab').evaluate(async (el, p) => {
    await el.ready;
    el.state = p;
    await el.idle();
  }, partial);
}

/** How many pixels of a canvas differ from its top-left pixel (0 for a blank canvas). */
export function inkedPixels(canvas) {
  const ctx = canvas.getContext('2d');
  if (!canvas.width || !canvas.height) return 0;
  const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
  let n = 0;
  for (let i = 4; i < data.length; i += 4) {
    if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2] || data[i + 3] !== data[3]) n++;
  }
  return n;
}
