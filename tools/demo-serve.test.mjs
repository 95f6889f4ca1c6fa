// The demo server answers its own page only: GET and HEAD, for Host 127.0.0.1:PORT or
// localhost:PORT (not a name rebound to 127.0.0.1 by another origin, DNS rebinding), and not to a
// page of another origin. Plain HTTP requests here; demo.test.mjs runs the page in Chromium.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal, startDemoServer } from './demo/serve.mjs';

let server;
let port;
beforeAll(async () => {
  server = await startDemoServer();
  port = Number(new URL(server.url).port);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

/** One request to the server with `headers` as given (Host included when named). */
function ask(method, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const options = {
      host: '127.0.0.1',
      port,
      path,
      method,
      headers,
      setHost: !('host' in headers),
    };
    const sent = request(options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode, headers: response.headers, body }),
      );
    });
    sent.on('error', reject);
    sent.end();
  });
}

describe('the demo server', () => {
  it('serves the page and models to GET and HEAD at 127.0.0.1 and localhost', async () => {
    const page = await ask('GET', '/');
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/^<!doctype html>/);
    const byName = await ask('GET', '/page.js', { host: `localhost:${port}` });
    expect(byName.status).toBe(200);
    const head = await ask('HEAD', '/models/tiny-llama-q.gguf');
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    expect(head.body).toBe('');
    // The page's own module script is requested with its own Origin.
    const own = await ask('GET', '/page.js', { origin: `http://127.0.0.1:${port}` });
    expect(own.status).toBe(200);
  });

  it('refuses other methods with 405 and the methods it allows', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const answer = await ask(method, '/');
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('GET, HEAD');
      expect(answer.body).toBe(`method ${method} not allowed: GET and HEAD only\n`);
    }
  });

  it('refuses a foreign Host (DNS rebinding) with 421, and a foreign Origin with 403', async () => {
    for (const host of [
      `evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      '127.0.0.1',
      'localhost',
    ]) {
      const answer = await ask('GET', '/', { host });
      expect(answer.status).toBe(421);
      expect(answer.body).toBe(
        `misdirected request: this server answers Host 127.0.0.1:${port} or localhost:${port} only\n`,
      );
    }
    const foreign = await ask('GET', '/models/tiny-llama-q.gguf', {
      origin: 'http://evil.example',
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toBe(
      'forbidden: a page of http://evil.example may not read this server\n',
    );
    // Refused before the method: a foreign page learns nothing else either.
    expect((await ask('POST', '/', { host: 'evil.example' })).status).toBe(421);
  });

  it('decides from method, Host and Origin alone', () => {
    expect(refusal('GET', { host: '127.0.0.1:8000' }, 8000)).toBeUndefined();
    expect(refusal('GET', {}, 8000)?.status).toBe(421);
    expect(
      refusal('HEAD', { host: 'localhost:8000', origin: 'http://localhost:8000' }, 8000),
    ).toBeUndefined();
    expect(refusal('GET', { host: 'localhost:8000', origin: 'null' }, 8000)?.status).toBe(403);
  });
});
