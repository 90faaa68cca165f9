import { test, expect, openPage } from './helpers.mjs';

test('the page loads its wasm module and shows its version', async ({ page }) => {
  await openPage(page);
  // Ask the (already initialised) module itself, so the page can't just hard-code a string.
  const version = await page.evaluate(async () => (await import('/pkg/kneelab_lesson.js')).version());
  expect(version).toMatch(/^kneelab \d+\.\d+\.\d+/);
  await expect(page.locator('body')).toContainText(version);
});

// The lesson page loads the lesson's first module (the lab's, with the picture of one engine step
// that opens it), named in its head; the lab alone loads the lab's; neither page loads both.
test('each page loads one first module: the lesson its own, the lab alone the lab’s', async ({ page }) => {
  for (const [url, loads, skips] of [['/', 'kneelab_lesson', 'kneelab_web'], ['/lab.html', 'kneelab_web', 'kneelab_lesson']]) {
    const asked = [];
    const record = (req) => asked.push(new URL(req.url()).pathname);
    page.on('request', record);
    await openPage(page, url);
    await page.evaluate(() => Promise.all([...document.querySelectorAll('knee-lab')].map((l) => l.ready)));
    page.off('request', record);
    expect(asked, url).toContain(`/pkg/${loads}_bg.wasm`);
    expect(asked, url).toContain(`/pkg/${loads}.js`);
    expect(asked.filter((p) => p.startsWith(`/pkg/${skips}`)), url).toEqual([]);
    const lessons = await page.evaluate(async () => {
      const wasm = await (await import('/js/wasm.js')).loadKneelab();
      return [typeof wasm.ReplicaView, typeof wasm.SweepJob, typeof wasm.Lab];
    });
    const lesson = url === '/' ? 'function' : 'undefined';
    expect(lessons, url).toEqual([lesson, lesson, 'function']);
  }
});

test('the wasm is served as application/wasm', async ({ request }) => {
  const response = await request.get('/pkg/kneelab_web_bg.wasm');
  expect(response.status()).toBe(200);
  expect(response.headers()['content-type']).toBe('application/wasm');
  // The magic number: the server sent the module itself, not an error page.
  expect([...(await response.body()).subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);
});

test('each page names an icon the server has, so no browser asks for /favicon.ico', async ({ request }) => {
  // Without a named icon Chromium asks for /favicon.ico on its own, a request that is not the
  // page's: the checks every test makes do not see its 404, but a reader's console shows it.
  for (const url of ['/', '/lab.html']) {
    const html = await (await request.get(url)).text();
    const icon = html.match(/<link rel="icon" href="([^"]+)"/);
    expect(icon, `${url} names an icon`).not.toBeNull();
    const response = await request.get(new URL(icon[1], `http://host${url}`).pathname);
    expect(response.status(), `${url}'s icon ${icon[1]}`).toBe(200);
    expect(response.headers()['content-type']).toMatch(/^image\//);
  }
});
