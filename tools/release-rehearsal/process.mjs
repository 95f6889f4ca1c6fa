// The rehearsal's child processes: each runs in its own process group, so stopping it stops what it
// started too; the environment they start from; leftovers found by the run's marker.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, relative, resolve, sep } from 'node:path';
import { quote } from './format.mjs';

export const MINUTE = 60_000;

/** A step failed; `command`, `cwd` and `output` say what ran and what it printed. */
export class StepError extends Error {
  constructor(message, details = {}) {
    super(message);
    this.details = details;
  }
}

export function isInside(path, root) {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== path);
}

/** Sends `signal` to the process group led by `pid`; false when no such group is left. */
export function signalGroup(pid, signal) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if (error.code === 'ESRCH' || error.code === 'EPERM') return false;
    throw error;
  }
}

/**
 * Runs a command in its own process group, capturing its output; `children` holds it while it
 * runs, for cleanup. Throws a StepError when it cannot start, times out or exits with anything
 * but `expectCode` ('any' takes every status), and `signal`'s reason when `signal` aborts.
 */
export function exec(
  command,
  args,
  { cwd, env, timeoutMs = 10 * MINUTE, expectCode = 0, signal, children },
) {
  const display = [command, ...args].map(quote).join(' ');
  signal.throwIfAborted();
  return new Promise((resolveRun, reject) => {
    let stdout = '';
    let stderr = '';
    let output = '';
    let settled = false;
    let timedOut = false;
    const keep = (text) => (text.length > 4_000_000 ? text.slice(-4_000_000) : text);
    const child = spawn(command, args, {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const entry = { pid: child.pid, exited: false };
    if (child.pid !== undefined) children.add(entry);
    const ended = () => {
      entry.exited = true;
      children.delete(entry);
    };
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      stdout = keep(stdout + chunk);
      output = keep(output + chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr = keep(stderr + chunk);
      output = keep(output + chunk);
    });
    const stop = () => {
      if (entry.exited || child.pid === undefined) return;
      signalGroup(child.pid, 'SIGTERM');
      setTimeout(() => entry.exited || signalGroup(child.pid, 'SIGKILL'), 3000).unref();
    };
    signal.addEventListener('abort', stop, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    const done = (error, result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      if (error) reject(error);
      else resolveRun(result);
    };
    child.on('error', (error) => {
      ended();
      const message =
        error.code === 'ENOENT'
          ? `${command} was not found on the PATH`
          : `${command} could not start: ${error.message}`;
      done(new StepError(message, { command: display, cwd }));
    });
    child.on('close', (code, killedBy) => {
      ended();
      // Whatever the command left running in its group goes with it.
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGTERM');
      if (signal.aborted) return done(signal.reason);
      const details = { command: display, cwd, output };
      if (timedOut) return done(new StepError(`timed out after ${timeoutMs / 1000} s`, details));
      if (expectCode !== 'any' && code !== expectCode)
        return done(
          new StepError(`exited with ${code ?? killedBy}, expected ${expectCode}`, details),
        );
      done(undefined, { code, stdout, stderr, output });
    });
  });
}

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Processes (other than this one) whose environment holds `name=value`: every process the
 * rehearsal started and everything those started in turn, daemons included, and nothing else.
 */
export function processesMarked(name, value) {
  if (process.platform !== 'linux') return [];
  const marker = `\0${name}=${value}\0`;
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}\0`.includes(marker)) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      found.push({ pid: Number(entry), cmdline: cmdline.slice(0, 160) });
    } catch {
      // Ended while being looked at, or not ours to read.
    }
  }
  return found;
}

/**
 * The environment the rehearsal's commands start from: the caller's, less what `pnpm run` adds
 * for its script (npm_package_*, npm_lifecycle_*, PNPM_*, INIT_CWD, and its whole resolved config
 * as lowercase npm_config_* variables, registry and the checkout's .npmrc settings included, which
 * npm would take as the user's), less any scoped registry override (npm_config_@scope:registry,
 * which would beat the .npmrc files written here), and with PATH entries inside the checkout
 * removed, so `npx forge` and `pnpm` never reach the checkout's own node_modules/.bin. Started as
 * `node tools/release-rehearsal/main.mjs`, the rehearsal behaves exactly as through `pnpm`.
 */
export function cleanEnvironment(environment, repoRoot) {
  const clean = {};
  const root = resolve(repoRoot);
  const fromScript = Object.hasOwn(environment, 'npm_lifecycle_event');
  for (const [key, value] of Object.entries(environment)) {
    const lower = key.toLowerCase();
    if (value === undefined) continue;
    if (/^npm_(package_|lifecycle_|command$|execpath$|node_execpath$)/.test(lower)) continue;
    if (lower === 'npm_config_user_agent' || lower === 'init_cwd') continue;
    if (lower.startsWith('pnpm_') || lower.startsWith('npm_config_@')) continue;
    if (fromScript && key.startsWith('npm_config_')) continue;
    clean[key] = value;
  }
  const pathKey = Object.keys(clean).find((key) => key.toUpperCase() === 'PATH') ?? 'PATH';
  clean[pathKey] = (clean[pathKey] ?? '')
    .split(delimiter)
    .filter((entry) => entry !== '' && !isInside(resolve(entry), root))
    .join(delimiter);
  return clean;
}
