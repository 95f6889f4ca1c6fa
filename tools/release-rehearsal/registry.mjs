// The throwaway registry: Verdaccio on 127.0.0.1 with its storage, users and log in the
// rehearsal's directory and no uplink, and the one user that publishes to it.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MINUTE, StepError, freePort, signalGroup } from './process.mjs';

export const SCOPE = '@forge';
const USER = 'forge-rehearsal';

/**
 * Verdaccio's config: storage and htpasswd in the rehearsal's directory, one user at most,
 * `@forge/*` readable by anyone and publishable by that user, no uplink (nothing is proxied to
 * npmjs, so the other organisation's @forge packages are never served), no web UI, no audit
 * middleware, pretty log lines on stdout (which the caller sends to a file).
 */
export function verdaccioConfig({ storage, htpasswd, scope = SCOPE }) {
  return [
    '# Written by tools/release-rehearsal/registry.mjs for one rehearsal, deleted with it.',
    `storage: ${JSON.stringify(storage)}`,
    'auth:',
    '  htpasswd:',
    `    file: ${JSON.stringify(htpasswd)}`,
    '    max_users: 1',
    '# No uplinks: a package that was not published here is a 404, never fetched from elsewhere.',
    'uplinks: {}',
    'packages:',
    `  '${scope}/*':`,
    '    access: $all',
    '    publish: $authenticated',
    '    unpublish: $authenticated',
    "  '**':",
    '    access: $all',
    'web:',
    '  enable: false',
    'middlewares:',
    '  audit:',
    '    enabled: false',
    'server:',
    '  keepAliveTimeout: 60',
    'log:',
    '  type: stdout',
    '  format: pretty',
    '  level: http',
    '',
  ].join('\n');
}

/**
 * Resolves once `GET <registry>/-/ping` answers 200. Rejects when `timeoutMs` passes, when
 * `alive()` turns false (the server process exited) or when `signal` aborts.
 */
export async function waitForRegistry(
  registry,
  { timeoutMs = MINUTE, intervalMs = 200, alive = () => true, signal } = {},
) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    signal?.throwIfAborted();
    if (!alive()) throw new Error(`the registry process exited before answering (${last})`);
    try {
      const response = await fetch(new URL('-/ping', registry), {
        signal: AbortSignal.timeout(Math.max(500, Math.min(2000, deadline - Date.now()))),
      });
      await response.arrayBuffer();
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error?.cause?.code ?? error?.name ?? String(error);
    }
    if (Date.now() >= deadline)
      throw new Error(`${registry} did not answer /-/ping within ${timeoutMs} ms (${last})`);
    try {
      await sleep(intervalMs, undefined, signal ? { signal } : undefined);
    } catch (error) {
      throw signal?.aborted ? signal.reason : error;
    }
  }
}

/** `fetch` that gives up after a minute or when the rehearsal is stopped. */
export function request(url, signal, init = {}) {
  return fetch(url, { ...init, signal: AbortSignal.any([signal, AbortSignal.timeout(MINUTE)]) });
}

/** The status and JSON body of a request (`{ raw }` when the body is not JSON). */
export async function fetchJson(url, signal, init) {
  const response = await request(url, signal, init);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: { raw: text } };
  }
}

/** Starts Verdaccio in its own process group, its output appended to `logPath`. */
function spawnVerdaccio({ bin, config, port, cwd, env, logPath }) {
  const log = openSync(logPath, 'a');
  const child = spawn(
    process.execPath,
    [bin, '--config', config, '--listen', `127.0.0.1:${port}`],
    {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', log, log],
    },
  );
  closeSync(log);
  const server = { pid: child.pid, exit: undefined };
  server.exited = new Promise((resolveExit) => {
    child.on('exit', (code, signal) => {
      server.exit = code ?? signal;
      resolveExit();
    });
    child.on('error', (error) => {
      server.exit = error.message;
      resolveExit();
    });
  });
  return server;
}

/** SIGTERM to the server's group, SIGKILL when it has not exited within 5 s. */
export async function stopVerdaccio(server) {
  if (server.exit === undefined) signalGroup(server.pid, 'SIGTERM');
  const stopped = await Promise.race([
    server.exited.then(() => true),
    sleep(5000, false, { ref: false }),
  ]);
  if (!stopped) {
    signalGroup(server.pid, 'SIGKILL');
    await Promise.race([server.exited, sleep(2000, undefined, { ref: false })]);
  }
  signalGroup(server.pid, 'SIGKILL'); // anything Verdaccio started
}

/** Starts the registry (`rehearsal.verdaccio`, for cleanup); resolves to its URL. */
export async function startRegistry(rehearsal, { registryDirectory, env }) {
  let registry;
  await rehearsal.step('start Verdaccio', async () => {
    const config = join(registryDirectory, 'config.yaml');
    writeFileSync(
      config,
      verdaccioConfig({
        storage: join(registryDirectory, 'storage'),
        htpasswd: join(registryDirectory, 'htpasswd'),
      }),
    );
    const require = createRequire(new URL('../package.json', import.meta.url));
    const manifestPath = require.resolve('verdaccio/package.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const bin = join(
      dirname(manifestPath),
      typeof manifest.bin === 'string' ? manifest.bin : manifest.bin.verdaccio,
    );
    const { signal } = rehearsal.abort;
    // A port picked free can be taken before Verdaccio binds it: try a few.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      registry = `http://127.0.0.1:${port}/`;
      const server = spawnVerdaccio({
        bin,
        config,
        port,
        cwd: registryDirectory,
        env: env.base,
        logPath: rehearsal.logPath,
      });
      rehearsal.verdaccio = server;
      try {
        await waitForRegistry(registry, { alive: () => server.exit === undefined, signal });
        break;
      } catch (error) {
        if (signal.aborted || attempt === 3 || server.exit === undefined)
          throw new StepError(`Verdaccio did not start: ${error.message}`);
      }
    }
    return `${registry} (pid ${rehearsal.verdaccio.pid}, Verdaccio ${manifest.version})`;
  });
  return registry;
}

/** Checks that nothing is proxied, creates the publishing user; resolves to its token. */
export async function createUser(rehearsal, { registryDirectory, registry }) {
  let token;
  await rehearsal.step('registry user and no uplink', async () => {
    const { signal } = rehearsal.abort;
    // The other organisation's @forge/cli exists on npmjs: here it must be unknown.
    const before = await fetchJson(new URL(`${SCOPE}%2fcli`, registry), signal);
    if (before.status !== 404)
      throw new StepError(
        `GET ${SCOPE}/cli on the empty registry answered ${before.status}, expected 404 (an uplink?)`,
      );
    const password = `pw-${crypto.randomUUID()}`;
    rehearsal.secrets.push(password);
    const { status, body } = await fetchJson(
      new URL(`-/user/org.couchdb.user:${USER}`, registry),
      signal,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          _id: `org.couchdb.user:${USER}`,
          name: USER,
          password,
          email: 'rehearsal@localhost',
          type: 'user',
          roles: [],
          date: new Date().toISOString(),
        }),
      },
    );
    if (status !== 201 || typeof body.token !== 'string')
      throw new StepError(`creating the user answered ${status}: ${JSON.stringify(body)}`);
    token = body.token;
    rehearsal.secrets.push(token);
    // The user landed in this rehearsal's htpasswd: the server answering is ours.
    const htpasswd = readFileSync(join(registryDirectory, 'htpasswd'), 'utf8');
    if (!htpasswd.startsWith(`${USER}:`))
      throw new StepError(`the server on ${registry} is not the Verdaccio started here`);
    return `${USER} has a token; GET ${SCOPE}/cli is 404 before publishing`;
  });
  return token;
}
