// Browser tests of the kneelab page, in Debian's Chromium (Playwright cannot download its own
// browser on these machines). Run them with `cargo xtask test`, which builds the page first;
// `npm test` here works too once `cargo xtask build-web` has run.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..');

// Not 8000, the default of `cargo xtask serve`, so a developer's own server doesn't clash.
const port = Number(process.env.KNEELAB_TEST_PORT ?? 8123);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  throw new Error(`KNEELAB_TEST_PORT must be a port number, got ${process.env.KNEELAB_TEST_PORT}`);
}
const baseURL = `http://127.0.0.1:${port}`;

export default defineConfig({
  testDir: here,
  testMatch: '**/*.spec.mjs',
  // Screenshots and traces of failed tests land here (git-ignored).
  outputDir: path.join(here, 'test-results'),
  timeout: 30_000,
  expect: { timeout: 10_000 },
  retries: 0,
  // Two cores: one browser at a time keeps wasm-heavy pages from starving each other.
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  reporter: 'list',
  use: {
    baseURL,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      use: {
        browserName: 'chromium',
        headless: true,
        viewport: { width: 1280, height: 800 },
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        },
      },
    },
  ],
  webServer: {
    // --no-build: `cargo xtask test` has just built the page into target/site/ (bundled, wasm-opt'd).
    command: `cargo xtask serve --no-build --port ${port}`,
    url: `${baseURL}/`,
    cwd: repoRoot,
    reuseExistingServer: false,
    // Generous: a cold machine may compile the xtask first.
    timeout: 180_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
