import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { verdaccioConfig, waitForRegistry } from './registry.mjs';

/** An HTTP server on 127.0.0.1 answering /-/ping with the statuses given, then the last forever. */
async function pingServer(statuses) {
  let calls = 0;
  const server = createServer((request, response) => {
    const status =
      request.url === '/-/ping' ? statuses[Math.min(calls++, statuses.length - 1)] : 404;
    response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${server.address().port}/`, calls: () => calls };
}

describe('verdaccioConfig', () => {
  const text = verdaccioConfig({ storage: '/tmp/x y/storage', htpasswd: '/tmp/x y/htpasswd' });

  it('keeps storage and users in the given paths, one user at most', () => {
    expect(text).toContain('storage: "/tmp/x y/storage"');
    expect(text).toContain('    file: "/tmp/x y/htpasswd"');
    expect(text).toContain('    max_users: 1');
  });

  it('has no uplink, so no @forge package is ever proxied from npmjs', () => {
    expect(text).toMatch(/^uplinks: \{\}$/m);
    expect(text).not.toMatch(/proxy:|registry\.npmjs\.org|url:/);
  });

  it('lets anyone read @forge/* and only a logged-in user publish it; no web UI, no audit', () => {
    expect(text).toContain(
      "  '@forge/*':\n    access: $all\n    publish: $authenticated\n    unpublish: $authenticated\n",
    );
    expect(text).toContain("  '**':\n    access: $all\nweb:");
    expect(text).toContain('web:\n  enable: false');
    expect(text).toContain('middlewares:\n  audit:\n    enabled: false');
  });
});

describe('waitForRegistry', () => {
  it('returns once /-/ping answers 200', async () => {
    const server = await pingServer([503, 503, 200]);
    await waitForRegistry(server.url, { timeoutMs: 5000, intervalMs: 10 });
    expect(server.calls()).toBe(3);
  });

  it('gives up after its timeout, saying what it last saw', async () => {
    const server = await pingServer([503]);
    await expect(waitForRegistry(server.url, { timeoutMs: 300, intervalMs: 20 })).rejects.toThrow(
      /did not answer \/-\/ping within 300 ms \(HTTP 503\)/,
    );
  });

  it('stops at once when the server process is gone', async () => {
    const server = await pingServer([503]);
    await expect(
      waitForRegistry(server.url, { timeoutMs: 5000, intervalMs: 10, alive: () => false }),
    ).rejects.toThrow(/exited before answering/);
  });

  it('stops when aborted', async () => {
    const server = await pingServer([503]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await expect(
      waitForRegistry(server.url, { timeoutMs: 5000, intervalMs: 10, signal: controller.signal }),
    ).rejects.toThrow('stop');
  });
});
