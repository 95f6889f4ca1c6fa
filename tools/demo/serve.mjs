// `pnpm demo`: serves the decode demo page on 127.0.0.1 — index.html, the bundled page script and
// the tiny test models — until interrupted. `--port N` picks the port (default: any free one).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { bundleDemo } from './bundle.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const MODELS = ['tiny-llama-f32.gguf', 'tiny-llama-q.gguf'];

/** Starts the server; resolves to its address and a `close` function. */
export async function startDemoServer({ port = 0 } = {}) {
  const { text } = await bundleDemo();
  const files = new Map([
    ['/', { type: 'text/html; charset=utf-8', body: readFileSync(here('index.html')) }],
    ['/page.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(text) }],
    ...MODELS.map((name) => [
      `/models/${name}`,
      {
        type: 'application/octet-stream',
        body: readFileSync(here(`../../fixtures/tiny-llama/${name}`)),
      },
    ]),
  ]);
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    // Browsers ask for an icon; none is fine, but not as a 404 in the page's console.
    if (path === '/favicon.ico') return void response.writeHead(204).end();
    const file = files.get(path);
    if (file === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    response.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' });
    response.end(file.body);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const index = process.argv.indexOf('--port');
  const port = index < 0 ? 0 : Number(process.argv[index + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`demo: --port: '${process.argv[index + 1]}' is not a port number`);
    process.exit(2);
  }
  const { url } = await startDemoServer({ port });
  console.log(`Forge decode demo at ${url} (Ctrl-C to stop); open it in a browser with WebGPU`);
}
