// A small static file server for the embedding tests: a course site (or a CDN) of our own,
// serving a folder on an ephemeral port, with the headers a test asks for.

import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
};

/**
 * Serves `root` on 127.0.0.1. `headers(pathname)` adds headers to a response; `types` overrides
 * the content type by extension (a site that serves .wasm wrongly). Resolves to
 * `{ origin, close() }`. A folder serves its index.html.
 */
export async function serveFolder(root, { headers = () => ({}), types = {} } = {}) {
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if ((await fs.stat(file)).isDirectory()) file = path.join(file, 'index.html');
      const body = await fs.readFile(file);
      const ext = path.extname(file);
      res.writeHead(200, {
        'content-type': types[ext] ?? TYPES[ext] ?? 'application/octet-stream',
        'cache-control': 'no-store',
        ...headers(url.pathname),
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8', ...headers(url.pathname) });
      res.end('<!doctype html><title>Not found</title><h1>Not found</h1>');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
