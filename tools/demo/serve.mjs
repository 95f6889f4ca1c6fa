// `pnpm demo`: serves the decode demo page on 127.0.0.1 — index.html, the bundled page script and
// the tiny test models — until interrupted. `--port N` picks the port (default: any free one). It
// answers GET and HEAD for Host 127.0.0.1:PORT or localhost:PORT only (see `refusal`).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { bundleDemo } from './bundle.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const MODELS = ['tiny-llama-f32.gguf', 'tiny-llama-q.gguf'];

/**
 * Why a request is refused, or undefined when it is served. Only GET and HEAD are answered (405).
 * Only Host `127.0.0.1:PORT` or `localhost:PORT` (421): a page on another origin whose name was
 * rebound to 127.0.0.1 (DNS rebinding) sends its own name, so it cannot read this server as its
 * own origin. A request an Origin header marks as another site's is refused too (403).
 */
export function refusal(method, headers, port) {
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (!allowed.includes(headers.host ?? ''))
    return {
      status: 421,
      text: `misdirected request: this server answers Host ${allowed.join(' or ')} only`,
    };
  const origin = headers.origin;
  if (origin !== undefined && !allowed.some((host) => origin === `http://${host}`))
    return { status: 403, text: `forbidden: a page of ${origin} may not read this server` };
  if (method !== 'GET' && method !== 'HEAD')
    return {
      status: 405,
      text: `method ${method} not allowed: GET and HEAD only`,
      headers: { allow: 'GET, HEAD' },
    };
  return undefined;
}

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
    const refused = refusal(request.method, request.headers, server.address().port);
    if (refused !== undefined) {
      const body = `${refused.text}\n`;
      response.writeHead(refused.status, {
        'content-type': 'text/plain; charset=utf-8',
        'x-content-type-options': 'nosniff',
        'content-length': Buffer.byteLength(body),
        ...refused.headers,
      });
      response.end(request.method === 'HEAD' ? undefined : body);
      return;
    }
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    // Browsers ask for an icon; none is fine, but not as a 404 in the page's console.
    if (path === '/favicon.ico') return void response.writeHead(204).end();
    const file = files.get(path);
    if (file === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    response.writeHead(200, {
      'content-type': file.type,
      'content-length': file.body.length,
      'cache-control': 'no-store',
    });
    response.end(request.method === 'HEAD' ? undefined : file.body);
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
