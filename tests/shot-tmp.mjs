import path from 'node:path';
import { chromium } from 'playwright-core';
import { serveFolder } from './static-server.mjs';
const srv = await serveFolder(path.resolve('../target/site'));
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
for (const w of [1280, 700, 380]) {
  const p = await b.newPage({ viewport: { width: w, height: 900 } });
  await p.goto(`${srv.origin}/lab.html?panels=tail&load=0.95`);
  await p.evaluate(async () => { const l = document.querySelector('knee-lab'); await l.ready; await l.idle(); });
  await p.locator('knee-lab figure[data-panel=tail]').screenshot({ path: `/tmp/tail-${w}.png` });
}
await b.close(); await srv.close();
