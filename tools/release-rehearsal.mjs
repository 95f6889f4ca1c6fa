// `pnpm release:rehearse`: a release, start to finish, against a throwaway registry.
//
// 1. Copies the checkout's tracked and untracked-not-ignored files into a temporary directory,
//    commits them to a fresh git repository there and installs it offline from the pnpm store.
//    The real checkout is only read.
// 2. Starts Verdaccio on 127.0.0.1 with its storage, htpasswd and log in the same temporary
//    directory and no uplink, so no @forge package can come from the public registry (where the
//    @forge scope belongs to another organisation). Creates a user through the registry API.
// 3. In the copy: `changeset version`, `pnpm build`, `changeset publish`, with npm_config_registry
//    and the @forge scope both pointing at the local server and the user's own npm config left out.
//    Checks every published manifest and tarball (no `workspace:` ranges, entry points present).
// 4. A consumer project outside the monorepo installs @forge/ir, @forge/ptx, @forge/wgsl and
//    @forge/cli with npm (only @forge mapped to the local server), runs the installed `forge`
//    (--version, list, emit PTX + ptxas, emit WGSL, golden update refusing), compares the emitted
//    kernels with golden/, and imports the packages from ESM and CommonJS.
//
// Every step prints one line as it goes. On failure: the failing command, its output tail and the
// Verdaccio log tail, exit 1. Always (success, failure, SIGINT/SIGTERM) the server's process group
// and every child's are stopped and the temporary directory is removed; `--keep` keeps the
// directory for debugging. Linux and macOS (process groups); Node >= 20.
import { spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCOPE = '@forge';
/** What a user installs; @forge/ptx-sim comes along as a dependency of @forge/cli. */
export const CONSUMER_PACKAGES = ['@forge/ir', '@forge/ptx', '@forge/wgsl', '@forge/cli'];
const GOLDEN_PTX = join('golden', 'ptx', 'rmsnorm.sm_80.ptx');
const GOLDEN_WGSL = join('golden', 'wgsl', 'rmsnorm.wgsl');
const USER = 'forge-rehearsal';
/** Environment variable naming the run in every process it starts. */
const RUN_MARKER = 'FORGE_RELEASE_REHEARSAL';
const MINUTE = 60_000;

const USAGE = `usage: pnpm release:rehearse [--keep]

Publishes every public workspace package to a throwaway local Verdaccio registry (changeset
version + changeset publish in a scratch copy of the checkout) and installs them with npm in a
consumer project outside the monorepo, which runs the installed forge and imports the packages.

  --keep   keep the temporary directory (scratch copy, registry storage and log, consumer)`;

// ---------------------------------------------------------------------------------------------
// Pure helpers (unit-tested in release-rehearsal.test.mjs)

/** Options from the command line; throws a usage message for anything else. */
export function parseOptions(argv) {
  const options = { keep: false, help: false };
  for (const argument of argv) {
    if (argument === '--keep') options.keep = true;
    else if (argument === '--help' || argument === '-h') options.help = true;
    else throw new UsageError(`unknown argument '${argument}'\n${USAGE}`);
  }
  return options;
}

/**
 * Verdaccio's config: storage and htpasswd in the rehearsal's directory, one user at most,
 * `@forge/*` readable by anyone and publishable by that user, no uplink (nothing is proxied to
 * npmjs, so the other organisation's @forge packages are never served), no web UI, no audit
 * middleware, pretty log lines on stdout (which the caller sends to a file).
 */
export function verdaccioConfig({ storage, htpasswd, scope = SCOPE }) {
  return [
    '# Written by tools/release-rehearsal.mjs for one rehearsal, deleted with it.',
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

/** The files of a .tgz as a Map from path (with npm's `package/` prefix) to bytes. */
export function readTarball(gzipped) {
  const data = gunzipSync(gzipped);
  const files = new Map();
  let offset = 0;
  let longName;
  const text = (start, length) => {
    const field = data.subarray(start, start + length);
    const end = field.indexOf(0);
    return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
  };
  while (offset + 512 <= data.length) {
    const header = data.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(text(offset + 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = text(offset + 345, 155);
    let name = prefix === '' ? text(offset, 100) : `${prefix}/${text(offset, 100)}`;
    const body = data.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      // pax extended header: "<length> path=<name>\n" records apply to the next entry.
      const path = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (path !== null) longName = path[1];
      continue;
    }
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0+$/, '');
      continue;
    }
    if (type === 'g') continue;
    if (longName !== undefined) {
      name = longName;
      longName = undefined;
    }
    if (type === '0' || type === '\0' || type === '7') files.set(name, Buffer.from(body));
  }
  return files;
}

/** Every file a manifest points at: main, module, types, bin and exports (wildcards left out). */
export function entryPoints(manifest) {
  const found = new Set();
  const add = (value) => {
    if (typeof value === 'string') {
      if (!value.includes('*')) found.add(value.replace(/^\.\//, ''));
    } else if (Array.isArray(value)) value.forEach(add);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(add);
  };
  for (const field of ['main', 'module', 'types', 'typings', 'bin', 'exports'])
    add(manifest[field]);
  return [...found].sort();
}

const DEPENDENCY_FIELDS = [
  'dependencies',
  'peerDependencies',
  'optionalDependencies',
  'devDependencies',
];

/** `field name@range` for every dependency range that still says `workspace:`. */
export function workspaceRanges(manifest) {
  const found = [];
  for (const field of DEPENDENCY_FIELDS)
    for (const [name, range] of Object.entries(manifest[field] ?? {}))
      if (String(range).startsWith('workspace:')) found.push(`${field} ${name}@${range}`);
  return found;
}

/**
 * The environment the rehearsal's commands start from: the caller's, less what `pnpm run` adds
 * for its script (npm_package_*, npm_lifecycle_*, PNPM_*, INIT_CWD, and its whole resolved config
 * as lowercase npm_config_* variables, registry and the checkout's .npmrc settings included, which
 * npm would take as the user's), less any scoped registry override (npm_config_@scope:registry,
 * which would beat the .npmrc files written here), and with PATH entries inside the checkout
 * removed, so `npx forge` and `pnpm` never reach the checkout's own node_modules/.bin. Started as
 * `node tools/release-rehearsal.mjs`, the rehearsal behaves exactly as through `pnpm`.
 */
export function cleanEnvironment(environment, repoRoot = REPO_ROOT) {
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

/**
 * The checkout's .npmrc for the scratch copy, less every line that names a registry or holds a
 * credential (the rehearsal adds its own); `dropped` names the keys left out.
 */
export function rehearsalNpmrc(text) {
  const dropped = [];
  const kept = text
    .split('\n')
    .filter((line) => {
      const key = /^\s*([^=#;\s][^=]*?)\s*=/.exec(line)?.[1];
      if (key === undefined) return true;
      const risky =
        /(^|:)registry$/.test(key) ||
        /(^|:)(_authToken|_auth|_password|username|email|certfile|keyfile|always-auth)$/.test(key);
      if (risky) dropped.push(key.replace(/^(\/\/[^:]*):.*$/, '$1:<auth>'));
      return !risky;
    })
    .join('\n');
  return { kept: kept === '' || kept.endsWith('\n') ? kept : `${kept}\n`, dropped };
}

/** `environment` less the usual token variables, so nothing can authenticate to a real registry. */
export function withoutCredentials(environment) {
  return Object.fromEntries(
    Object.entries(environment).filter(
      ([key]) =>
        !/^(NPM_TOKEN|NODE_AUTH_TOKEN|NPM_AUTH_TOKEN|YARN_NPM_AUTH_TOKEN)$/i.test(key) &&
        !/^npm_config_\/\//i.test(key) &&
        !/^npm_config_(_auth|_authtoken|_password)$/i.test(key),
    ),
  );
}

/**
 * The API check the consumer runs, once loaded by `import` and once by `require()`. It is sent
 * there as source text (Function#toString), so it uses nothing but its arguments.
 */
export async function consumerCheck({ ir, ptx, ptxas, wgsl, readFileSync }, expected) {
  const problems = [];
  const check = (ok, message) => {
    if (!ok) problems.push(message);
  };
  check(typeof ir.ready === 'function', '@forge/ir exports no ready()');
  check(
    ptx.ready === ir.ready && wgsl.ready === ir.ready,
    'ready() of @forge/ptx or @forge/wgsl is not the one of @forge/ir (two copies of @forge/ir?)',
  );
  await ir.ready();
  const spec = ir.getKernel('rmsnorm').spec;
  const shaders = {
    ptx: ptx.emitPtx(spec, {}, ptx.ptxTarget('sm_80')),
    wgsl: wgsl.emitWgsl(spec, {}, wgsl.wgslTarget()),
  };
  const backends = { ptx: ptx.PTX_BACKEND, wgsl: wgsl.WGSL_BACKEND };
  for (const kind of ['ptx', 'wgsl']) {
    const shader = shaders[kind];
    const backend = `@forge/${kind}@${expected.versions[`@forge/${kind}`]}`;
    check(backends[kind] === backend, `${kind} backend is ${backends[kind]}, published ${backend}`);
    // What the cache key covers (generatedShader in @forge/ir), with the published version.
    const cacheKey = ir.blake3Hex(
      ir.canonicalJson({
        backend,
        semanticHash: shader.semanticHash,
        target: shader.target,
        schedule: shader.schedule,
      }),
    );
    check(shader.cacheKey === cacheKey, `${kind} cacheKey is not the one for ${backend}`);
    check(
      shader.source === readFileSync(expected.golden[kind], 'utf8'),
      `${kind} source differs from ${expected.golden[kind]}`,
    );
  }
  const assembled = ptxas.assemblePtx(shaders.ptx.source, 'sm_80');
  check(assembled.ok, `ptxas (through @forge/ptx/ptxas) rejected it: ${assembled.diagnostics}`);
  for (const [name, info] of [
    ['@forge/ir', ir.IR_PACKAGE],
    ['@forge/ptx', ptx.PTX_PACKAGE],
    ['@forge/wgsl', wgsl.WGSL_PACKAGE],
  ])
    check(
      info?.version === expected.versions[name],
      `${name} says it is ${info?.version}, published ${expected.versions[name]}`,
    );
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return {
    ptxCacheKey: shaders.ptx.cacheKey,
    wgslCacheKey: shaders.wgsl.cacheKey,
    registers: assembled.registers,
  };
}

/** The consumer's script: loads the packages as an ES module (`esm`) or CommonJS (`cjs`). */
export function consumerScript(kind) {
  const load =
    kind === 'esm'
      ? [
          "import { readFileSync } from 'node:fs';",
          "import * as ir from '@forge/ir';",
          "import * as ptx from '@forge/ptx';",
          "import * as ptxas from '@forge/ptx/ptxas';",
          "import * as wgsl from '@forge/wgsl';",
        ]
      : [
          "const { readFileSync } = require('node:fs');",
          "const ir = require('@forge/ir');",
          "const ptx = require('@forge/ptx');",
          "const ptxas = require('@forge/ptx/ptxas');",
          "const wgsl = require('@forge/wgsl');",
        ];
  return [
    `// Written by tools/release-rehearsal.mjs: the installed packages through their API (${kind}).`,
    ...load,
    '',
    consumerCheck.toString(),
    '',
    'consumerCheck({ ir, ptx, ptxas, wgsl, readFileSync }, JSON.parse(process.env.FORGE_REHEARSAL_EXPECT)).then(',
    '  (result) => console.log(JSON.stringify(result)),',
    '  (error) => {',
    '    console.error(error && error.stack ? error.stack : error);',
    '    process.exitCode = 1;',
    '  },',
    ');',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Errors and small utilities

class UsageError extends Error {}

/** A step failed; `command`, `cwd` and `output` say what ran and what it printed. */
class StepError extends Error {
  constructor(message, details = {}) {
    super(message);
    this.details = details;
  }
}

class InterruptedError extends Error {
  constructor(signal) {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

function isInside(path, root) {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== path);
}

const seconds = (since) => ((Date.now() - since) / 1000).toFixed(1);

function quote(argument) {
  return /^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replaceAll("'", "'\\''")}'`;
}

function tail(text, lines = 40) {
  const all = text.replace(/\s+$/, '').split('\n');
  const kept = all.slice(-lines);
  const skipped = all.length - kept.length;
  return [...(skipped > 0 ? [`(${skipped} earlier lines left out)`] : []), ...kept]
    .map((line) => `  | ${line}`)
    .join('\n');
}

function kilobytes(bytes) {
  return bytes >= 10 * 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(0)} MB`
    : bytes >= 1024 * 1024
      ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
      : `${(bytes / 1024).toFixed(1)} kB`;
}

/** Sends `signal` to the process group led by `pid`; false when no such group is left. */
function signalGroup(pid, signal) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if (error.code === 'ESRCH') return false;
    if (error.code === 'EPERM') return false;
    throw error;
  }
}

function freePort() {
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

/** Relative paths of everything under `root` (directories end in '/'); links are not followed. */
function treeListing(root) {
  const found = [];
  const walk = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      const rel = relative(root, path);
      if (entry.isDirectory()) {
        found.push(`${rel}/`);
        walk(path);
      } else found.push(rel);
    }
  };
  walk(root);
  return found;
}

function directorySize(root) {
  let total = 0;
  const walk = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) total += lstatSync(path).size;
    }
  };
  if (existsSync(root)) walk(root);
  return total;
}

/** Installed top-level packages of a node_modules folder by size, biggest first. */
function packageSizes(nodeModules) {
  const sizes = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@')
      ? readdirSync(join(nodeModules, entry.name)).map((name) => `${entry.name}/${name}`)
      : [entry.name];
    for (const name of names) sizes.push({ name, bytes: directorySize(join(nodeModules, name)) });
  }
  return sizes.sort((a, b) => b.bytes - a.bytes);
}

/**
 * Processes (other than this one) whose environment holds `name=value`: every process the
 * rehearsal started and everything those started in turn, daemons included, and nothing else.
 */
function processesMarked(name, value) {
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

// ---------------------------------------------------------------------------------------------
// The rehearsal

class Rehearsal {
  constructor(options) {
    this.options = options;
    this.started = Date.now();
    this.abort = new AbortController();
    this.children = new Set();
    this.secrets = [];
    this.notes = [];
    this.lineOpen = false;
    this.cleanedUp = false;
    this.verdaccio = undefined;
    this.root = undefined;
  }

  // Output ------------------------------------------------------------------------------------

  redact(text) {
    let result = String(text);
    for (const secret of this.secrets) result = result.replaceAll(secret, '<token>');
    return result;
  }

  say(line) {
    if (this.lineOpen) process.stdout.write('\n');
    this.lineOpen = false;
    process.stdout.write(`${this.redact(line)}\n`);
  }

  note(text) {
    this.notes.push(text);
  }

  /** Runs one step, printing `rehearse: <label> ...` then `ok: <detail> (N s)` or `FAILED`. */
  async step(label, action) {
    this.abort.signal.throwIfAborted();
    const since = Date.now();
    if (this.lineOpen) process.stdout.write('\n');
    process.stdout.write(`rehearse: ${label} ... `);
    this.lineOpen = true;
    try {
      const detail = await action();
      this.finish(`ok${detail ? `: ${detail}` : ''} (${seconds(since)} s)`);
      for (const note of this.notes.splice(0)) this.say(`rehearse:   ${note}`);
      return detail;
    } catch (error) {
      this.finish(`FAILED (${seconds(since)} s)`);
      this.notes.splice(0);
      throw error;
    }
  }

  /** Ends the open step line (or, when something was printed meanwhile, a continuation line). */
  finish(result) {
    if (!this.lineOpen) process.stdout.write('rehearse:   ... ');
    process.stdout.write(this.redact(`${result}\n`));
    this.lineOpen = false;
  }

  // Child processes ---------------------------------------------------------------------------

  /**
   * Runs a command in its own process group, capturing its output. Throws a StepError when it
   * cannot start, times out, is interrupted or exits with anything but `expectCode`.
   */
  exec(command, args, { cwd, env, timeoutMs = 10 * MINUTE, expectCode = 0 } = {}) {
    const display = [command, ...args].map(quote).join(' ');
    const signal = this.abort.signal;
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
      if (child.pid !== undefined) this.children.add(entry);
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
      const onAbort = () => stop();
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, timeoutMs);
      const done = (error, result) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolveRun(result);
      };
      child.on('error', (error) => {
        entry.exited = true;
        this.children.delete(entry);
        done(
          new StepError(
            error.code === 'ENOENT'
              ? `${command} was not found on the PATH`
              : `${command} could not start: ${error.message}`,
            { command: display, cwd },
          ),
        );
      });
      child.on('close', (code, killedBy) => {
        entry.exited = true;
        this.children.delete(entry);
        // Whatever the command left running in its group goes with it.
        if (child.pid !== undefined) signalGroup(child.pid, 'SIGTERM');
        if (signal.aborted) return done(signal.reason);
        const status = code ?? killedBy;
        const result = { code, stdout, stderr, output };
        if (timedOut)
          return done(
            new StepError(`timed out after ${timeoutMs / 1000} s`, {
              command: display,
              cwd,
              output,
            }),
          );
        if (expectCode !== 'any' && code !== expectCode)
          return done(
            new StepError(`exited with ${status}, expected ${expectCode}`, {
              command: display,
              cwd,
              output,
            }),
          );
        done(undefined, result);
      });
    });
  }

  async fetchJson(url, init = {}) {
    const response = await fetch(url, {
      ...init,
      signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(MINUTE)]),
    });
    const text = await response.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = { raw: text };
    }
    return { status: response.status, body };
  }

  // Steps -------------------------------------------------------------------------------------

  async run() {
    const root = mkdtempSync(join(tmpdir(), 'forge-rehearsal-'));
    this.root = root;
    const scratch = join(root, 'scratch');
    const registryDirectory = join(root, 'registry');
    const consumer = join(root, 'consumer');
    // Empty stand-ins for the user's and the machine's npm config and the global git config.
    const emptyConfig = (name) => {
      const path = join(root, name);
      writeFileSync(path, '');
      return path;
    };
    const emptyGitConfig = emptyConfig('empty-gitconfig');
    const emptyUserConfig = emptyConfig('empty-npmrc-user');
    const emptyGlobalConfig = emptyConfig('empty-npmrc-global');
    mkdirSync(registryDirectory);
    this.logPath = join(registryDirectory, 'verdaccio.log');
    this.say(`rehearse: temporary directory ${root}${this.options.keep ? ' (kept: --keep)' : ''}`);

    // Every process started from here carries the marker, so cleanup can find stragglers.
    const base = { ...cleanEnvironment(process.env), [RUN_MARKER]: basename(root) };
    const gitEnv = {
      ...base,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: emptyGitConfig,
      GIT_AUTHOR_NAME: 'Forge release rehearsal',
      GIT_AUTHOR_EMAIL: 'rehearsal@localhost',
      GIT_COMMITTER_NAME: 'Forge release rehearsal',
      GIT_COMMITTER_EMAIL: 'rehearsal@localhost',
      TURBO_TELEMETRY_DISABLED: '1',
      TURBO_NO_UPDATE_NOTIFIER: '1',
      COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
    };
    const checkoutState = await this.checkoutState();

    // 1. Scratch copy --------------------------------------------------------------------------
    await this.step('scratch copy of the checkout', async () => {
      const listing = await this.exec(
        'git',
        ['ls-files', '--cached', '--others', '--exclude-standard', '-z'],
        { cwd: REPO_ROOT, env: base },
      );
      const files = [...new Set(listing.stdout.split('\0').filter((file) => file !== ''))];
      let copied = 0;
      for (const file of files) {
        const from = join(REPO_ROOT, file);
        let stat;
        try {
          stat = lstatSync(from);
        } catch {
          continue; // tracked but deleted in the working tree
        }
        const to = join(scratch, file);
        mkdirSync(dirname(to), { recursive: true });
        if (stat.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
        else if (stat.isFile()) copyFileSync(from, to);
        else continue;
        copied += 1;
      }
      const git = (...args) => this.exec('git', args, { cwd: scratch, env: gitEnv });
      await git('init', '--quiet', '--initial-branch=main');
      await git('add', '--all');
      await git(
        'commit',
        '--quiet',
        '--no-verify',
        '--message',
        `release rehearsal: snapshot of ${checkoutState.head.slice(0, 12)}`,
      );
      const changed = checkoutState.status.split('\n').filter(Boolean).length;
      if (changed > 0)
        this.note(`note: the checkout has ${changed} uncommitted change(s); the copy has them too`);
      return `${copied} files, one commit`;
    });

    await this.step('pnpm install --offline in the copy', async () => {
      const store = (
        await this.exec('pnpm', ['store', 'path'], { cwd: REPO_ROOT, env: base })
      ).stdout
        .trim()
        .split('\n')
        .pop();
      await this.exec(
        'pnpm',
        [
          'install',
          '--frozen-lockfile',
          '--offline',
          `--store-dir=${store}`,
          '--reporter=append-only',
        ],
        { cwd: scratch, env: gitEnv, timeoutMs: 15 * MINUTE },
      );
      return `from the store ${store}`;
    });

    // 2. Verdaccio -----------------------------------------------------------------------------
    let registry;
    await this.step('start Verdaccio', async () => {
      const config = join(registryDirectory, 'config.yaml');
      writeFileSync(
        config,
        verdaccioConfig({
          storage: join(registryDirectory, 'storage'),
          htpasswd: join(registryDirectory, 'htpasswd'),
        }),
      );
      const require = createRequire(new URL('package.json', import.meta.url));
      const manifestPath = require.resolve('verdaccio/package.json');
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
      const bin = join(
        dirname(manifestPath),
        typeof manifest.bin === 'string' ? manifest.bin : manifest.bin.verdaccio,
      );
      // A port picked free can be taken before Verdaccio binds it: try a few.
      for (let attempt = 1; ; attempt += 1) {
        const port = await freePort();
        registry = `http://127.0.0.1:${port}/`;
        this.startVerdaccio(bin, config, port, registryDirectory, base);
        try {
          await waitForRegistry(registry, {
            alive: () => this.verdaccio.exit === undefined,
            signal: this.abort.signal,
          });
          break;
        } catch (error) {
          if (this.abort.signal.aborted || attempt === 3 || this.verdaccio.exit === undefined)
            throw new StepError(`Verdaccio did not start: ${error.message}`);
        }
      }
      return `${registry} (pid ${this.verdaccio.pid}, Verdaccio ${manifest.version})`;
    });

    let token;
    await this.step('registry user and no uplink', async () => {
      // The other organisation's @forge/cli exists on npmjs: here it must be unknown.
      const before = await this.fetchJson(new URL('@forge%2fcli', registry));
      if (before.status !== 404)
        throw new StepError(
          `GET @forge/cli on the empty registry answered ${before.status}, expected 404 (an uplink?)`,
        );
      const password = `pw-${crypto.randomUUID()}`;
      this.secrets.push(password);
      const { status, body } = await this.fetchJson(
        new URL(`-/user/org.couchdb.user:${USER}`, registry),
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
      this.secrets.push(token);
      // The user landed in this rehearsal's htpasswd: the server answering is ours.
      const htpasswd = readFileSync(join(registryDirectory, 'htpasswd'), 'utf8');
      if (!htpasswd.startsWith(`${USER}:`))
        throw new StepError(`the server on ${registry} is not the Verdaccio started here`);
      return `${USER} has a token; GET @forge/cli is 404 before publishing`;
    });

    // 3. version, build, publish ---------------------------------------------------------------
    const host = registry.replace(/^http:/, '');
    const npmrc = join(scratch, '.npmrc');
    const { kept, dropped } = rehearsalNpmrc(existsSync(npmrc) ? readFileSync(npmrc, 'utf8') : '');
    writeFileSync(
      npmrc,
      `${kept}# release rehearsal\n${SCOPE}:registry=${registry}\n${host}:_authToken=${token}\n`,
    );
    const publishEnv = {
      ...withoutCredentials(gitEnv),
      npm_config_registry: registry,
      [`npm_config_${SCOPE}:registry`]: registry,
      // The user's and the machine's npm config (tokens for real registries) stay out of it.
      npm_config_userconfig: emptyUserConfig,
      npm_config_globalconfig: emptyGlobalConfig,
    };

    await this.step('registry settings of the copy', async () => {
      const settings = [];
      for (const [tool, key] of [
        ['npm', 'registry'],
        ['npm', `${SCOPE}:registry`],
        ['pnpm', 'registry'],
        ['pnpm', `${SCOPE}:registry`],
      ]) {
        const { stdout } = await this.exec(tool, ['config', 'get', key], {
          cwd: scratch,
          env: publishEnv,
        });
        const value = stdout.trim().replace(/\/?$/, '/');
        if (value !== registry)
          throw new StepError(
            `\`${tool} config get ${key}\` in the copy is ${value}, not ${registry}`,
          );
        settings.push(`${tool} ${key}`);
      }
      // publishConfig.registry would beat all of the above in pnpm publish.
      for (const [name, manifest] of this.workspaceManifests(scratch)) {
        const elsewhere = Object.entries(manifest.publishConfig ?? {}).filter(([key]) =>
          /(^|:)registry$/.test(key),
        );
        if (elsewhere.length > 0)
          throw new StepError(
            `${name} has publishConfig ${elsewhere.map(([k, v]) => `${k}=${v}`).join(', ')}; ` +
              'the rehearsal will not publish a package that names its own registry',
          );
      }
      if (dropped.length > 0)
        this.note(`note: left out of the copy's .npmrc: ${dropped.join(', ')}`);
      return `${settings.join(', ')} all point at ${registry}; no publishConfig registry`;
    });

    const before = this.workspaceVersions(scratch);
    let versions;
    await this.step('changeset version', async () => {
      await this.exec('pnpm', ['changeset', 'version'], { cwd: scratch, env: publishEnv });
      versions = this.workspaceVersions(scratch);
      return [...versions]
        .map(([name, version]) => `${name} ${before.get(name)} -> ${version}`)
        .join(', ');
    });

    await this.step('pnpm build in the copy', async () => {
      await this.exec('pnpm', ['build'], { cwd: scratch, env: publishEnv, timeoutMs: 20 * MINUTE });
      return `${versions.size} packages built`;
    });

    await this.step('changeset publish', async () => {
      const { output } = await this.exec('pnpm', ['changeset', 'publish'], {
        cwd: scratch,
        env: publishEnv,
        timeoutMs: 15 * MINUTE,
      });
      if (/packages failed to publish|an error occurred while publishing/.test(output))
        throw new StepError('changeset publish reported a failure', {
          command: 'pnpm changeset publish',
          cwd: scratch,
          output,
        });
      const tags = await this.exec('git', ['tag', '--list'], { cwd: scratch, env: gitEnv });
      return `git tags in the copy: ${tags.stdout.trim().split('\n').filter(Boolean).join(' ')}`;
    });

    const published = new Map();
    await this.step('published manifests and tarballs', async () => {
      const problems = [];
      const lines = [];
      const shortfalls = new Map();
      for (const [name, version] of versions) {
        const { status, body } = await this.fetchJson(new URL(name.replace('/', '%2f'), registry));
        if (status !== 200) {
          problems.push(`${name}: GET answered ${status}`);
          continue;
        }
        const manifest = body.versions?.[version];
        if (manifest === undefined) {
          problems.push(`${name}@${version} is not on the registry`);
          continue;
        }
        if (body['dist-tags']?.latest !== version)
          problems.push(`${name}: latest is ${body['dist-tags']?.latest}, expected ${version}`);
        published.set(name, { version, integrity: manifest.dist?.integrity });
        const response = await fetch(manifest.dist.tarball, { signal: this.abort.signal });
        if (!response.ok) {
          problems.push(`${name}: tarball ${manifest.dist.tarball} answered ${response.status}`);
          continue;
        }
        const tarball = Buffer.from(await response.arrayBuffer());
        const files = readTarball(tarball);
        const packed = JSON.parse(files.get('package/package.json')?.toString('utf8') ?? '{}');
        for (const [label, m] of [
          ['registry manifest', manifest],
          ['package.json in the tarball', packed],
        ])
          for (const range of workspaceRanges(m))
            problems.push(`${name}@${version}: ${label} keeps ${range}`);
        for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
          for (const [dependency, range] of Object.entries(packed[field] ?? {})) {
            const target = versions.get(dependency);
            if (target === undefined || range.startsWith('workspace:')) continue;
            if (![target, `^${target}`, `~${target}`].includes(range))
              problems.push(`${name}: ${field} ${dependency}@${range} misses ${target}`);
          }
        for (const path of entryPoints(packed))
          if (!files.has(`package/${path}`))
            problems.push(`${name}: ${path} (from package.json) is not in the tarball`);
        const names = [...files.keys()].map((file) => file.replace(/^package\//, ''));
        const lacking = (what, missing) => {
          if (missing) shortfalls.set(what, [...(shortfalls.get(what) ?? []), name]);
        };
        lacking('no README in the tarball', !names.some((file) => /^readme(\.|$)/i.test(file)));
        lacking(
          'no LICENSE file in the tarball',
          !names.some((file) => /^(licen[cs]e|copying)(\.|$)/i.test(file)),
        );
        lacking('no "repository" in package.json', packed.repository === undefined);
        lacking(
          'test files in the tarball',
          names.some((file) => /\.test\.|(^|\/)__tests__\//.test(file)),
        );
        lacking(
          'src/ in the tarball',
          names.some((file) => file.startsWith('src/')),
        );
        const unpacked = [...files.values()].reduce((sum, bytes) => sum + bytes.length, 0);
        const dependencies = Object.entries(packed.dependencies ?? {})
          .map(([dependency, range]) => `${dependency}@${range}`)
          .join(' ');
        lines.push(
          `${name}@${version}: ${files.size} files, ${kilobytes(tarball.length)} packed, ` +
            `${kilobytes(unpacked)} unpacked; dependencies: ${dependencies || 'none'}`,
        );
      }
      if (problems.length > 0)
        throw new StepError(`the published packages have problems:\n${problems.join('\n')}`);
      for (const line of lines) this.note(line);
      for (const [what, names] of shortfalls) this.note(`note: ${what}: ${names.join(', ')}`);
      return `${published.size} packages, no workspace: ranges, every entry point packed`;
    });

    // 4. Consumer ------------------------------------------------------------------------------
    mkdirSync(consumer);
    const consumerEnv = { ...base };
    const expected = Object.fromEntries(
      [...published].map(([name, { version }]) => [name, version]),
    );
    const forge = (...args) =>
      this.exec('npx', ['--no', '--', 'forge', ...args], { cwd: consumer, env: consumerEnv });

    await this.step('consumer project', async () => {
      await this.exec('npm', ['init', '-y'], { cwd: consumer, env: consumerEnv });
      writeFileSync(join(consumer, '.npmrc'), `${SCOPE}:registry=${registry}\n`);
      const scoped = (
        await this.exec('npm', ['config', 'get', `${SCOPE}:registry`], {
          cwd: consumer,
          env: consumerEnv,
        })
      ).stdout.trim();
      const general = (
        await this.exec('npm', ['config', 'get', 'registry'], { cwd: consumer, env: consumerEnv })
      ).stdout.trim();
      if (scoped.replace(/\/?$/, '/') !== registry)
        throw new StepError(
          `npm's ${SCOPE}:registry in the consumer is ${scoped}, not ${registry}`,
        );
      if (general.replace(/\/?$/, '/') === registry)
        throw new StepError('the consumer sends every package to the local registry');
      return `${consumer}; ${SCOPE} from ${registry}, everything else from ${general}`;
    });

    await this.step(`npm install ${CONSUMER_PACKAGES.join(' ')}`, async () => {
      const { output } = await this.exec(
        'npm',
        [
          'install',
          '--no-audit',
          '--no-fund',
          '--prefer-online',
          '--omit-lockfile-registry-resolved=false',
          ...CONSUMER_PACKAGES,
        ],
        { cwd: consumer, env: consumerEnv, timeoutMs: 20 * MINUTE },
      );
      const lock = JSON.parse(readFileSync(join(consumer, 'package-lock.json'), 'utf8'));
      const problems = [];
      const installed = [];
      for (const [path, entry] of Object.entries(lock.packages ?? {})) {
        const match = /(?:^|\/)node_modules\/(@forge\/[^/]+)$/.exec(path);
        if (match === null) continue;
        const name = match[1];
        installed.push(`${name}@${entry.version}`);
        const want = published.get(name);
        if (want === undefined) problems.push(`${path}: ${name} was not published here`);
        else {
          if (entry.version !== want.version)
            problems.push(`${path}: version ${entry.version}, published ${want.version}`);
          if (entry.integrity !== want.integrity)
            problems.push(`${path}: integrity differs from the local registry's tarball`);
        }
        if (entry.resolved !== undefined && !entry.resolved.startsWith(registry))
          problems.push(`${path}: resolved from ${entry.resolved}`);
      }
      for (const name of CONSUMER_PACKAGES)
        if (!installed.some((item) => item.startsWith(`${name}@`)))
          problems.push(`${name} is not in package-lock.json`);
      if (problems.length > 0)
        throw new StepError(`the consumer's @forge packages are wrong:\n${problems.join('\n')}`);
      const packages = Object.keys(lock.packages ?? {}).filter((path) => path !== '').length;
      const sizes = packageSizes(join(consumer, 'node_modules'));
      const total = sizes.reduce((sum, item) => sum + item.bytes, 0);
      const biggest = sizes
        .slice(0, 3)
        .map((item) => `${item.name} ${kilobytes(item.bytes)}`)
        .join(', ');
      // What a user sees from npm while installing Forge (deprecations, install scripts...).
      const warnings = [
        ...new Set(
          output
            .split('\n')
            .filter((line) => /^npm warn /i.test(line))
            .map((line) => line.replace(/^npm warn\s+/i, '').trim())
            .filter((line) => /\s/.test(line)),
        ),
      ].join(' | ');
      if (warnings !== '') this.note(`npm warned the consumer: ${warnings.slice(0, 400)}`);
      this.note(
        `consumer node_modules: ${packages} packages, ${kilobytes(total)}; biggest: ${biggest}`,
      );
      return `${installed.sort().join(' ')} from ${registry}`;
    });

    await this.step('forge --version', async () => {
      const bin = join(consumer, 'node_modules', '.bin', 'forge');
      if (!existsSync(bin))
        throw new StepError('node_modules/.bin/forge is missing in the consumer');
      const target = realpathSync(bin);
      if (!isInside(target, join(consumer, 'node_modules', '@forge', 'cli')))
        throw new StepError(`node_modules/.bin/forge points at ${target}, not @forge/cli`);
      const { stdout } = await forge('--version');
      const said = new Map(
        stdout
          .trim()
          .split('\n')
          .map((line) => line.trim().split(/\s+/)),
      );
      const wrong = Object.entries(expected).filter(
        ([name, version]) => said.get(name) !== version,
      );
      if (wrong.length > 0)
        throw new StepError(
          `forge --version says\n${stdout.trim()}\nbut the registry has ${wrong
            .map(([name, version]) => `${name}@${version}`)
            .join(', ')}`,
        );
      return stdout.trim().split('\n').join(', ');
    });

    await this.step('forge list', async () => {
      const { stdout } = await forge('list');
      const kernels = stdout.split('\n').filter((line) => /^\S/.test(line));
      if (!kernels.some((line) => line.startsWith('rmsnorm ')))
        throw new StepError(`forge list does not list rmsnorm:\n${stdout}`);
      return `${kernels.length} kernels: ${kernels.map((line) => line.split(/\s+/)[0]).join(', ')}`;
    });

    const sameAsGolden = (file, golden) => {
      const made = readFileSync(join(consumer, file));
      const want = readFileSync(join(REPO_ROOT, golden));
      if (made.equals(want)) return;
      const madeLines = made.toString('utf8').split('\n');
      const wantLines = want.toString('utf8').split('\n');
      const line = madeLines.findIndex((text, index) => text !== wantLines[index]);
      throw new StepError(
        `${file} differs from ${golden} at line ${line + 1}:\n` +
          `  emitted: ${JSON.stringify(madeLines[line])}\n  golden:  ${JSON.stringify(wantLines[line])}`,
      );
    };

    await this.step('forge emit rmsnorm --target ptx --arch sm_80 + ptxas', async () => {
      await forge('emit', 'rmsnorm', '--target', 'ptx', '--arch', 'sm_80', '--out', 'rmsnorm.ptx');
      sameAsGolden('rmsnorm.ptx', GOLDEN_PTX);
      await this.exec('ptxas', ['-arch=sm_80', 'rmsnorm.ptx', '-o', 'rmsnorm.cubin'], {
        cwd: consumer,
        env: consumerEnv,
      });
      const cubin = lstatSync(join(consumer, 'rmsnorm.cubin')).size;
      if (cubin === 0) throw new StepError('ptxas wrote an empty rmsnorm.cubin');
      return `same bytes as ${GOLDEN_PTX}; ptxas -arch=sm_80 exit 0, cubin ${cubin} bytes`;
    });

    await this.step('forge emit rmsnorm --target wgsl', async () => {
      await forge('emit', 'rmsnorm', '--target', 'wgsl', '--out', 'rmsnorm.wgsl');
      sameAsGolden('rmsnorm.wgsl', GOLDEN_WGSL);
      return `same bytes as ${GOLDEN_WGSL}`;
    });

    const apiEnv = {
      ...consumerEnv,
      FORGE_REHEARSAL_EXPECT: JSON.stringify({
        versions: expected,
        golden: { ptx: join(REPO_ROOT, GOLDEN_PTX), wgsl: join(REPO_ROOT, GOLDEN_WGSL) },
      }),
    };
    for (const [kind, file, how] of [
      ['esm', 'api-check.mjs', 'import (ES module)'],
      ['cjs', 'api-check.cjs', 'require() (CommonJS)'],
    ])
      await this.step(`API through ${how}`, async () => {
        writeFileSync(join(consumer, file), consumerScript(kind));
        const { stdout } = await this.exec(process.execPath, [file], {
          cwd: consumer,
          env: apiEnv,
        });
        const result = JSON.parse(stdout.trim().split('\n').pop());
        return (
          `ready(), emitPtx + emitWgsl match golden, backends and cache keys carry ` +
          `${expected['@forge/ptx']}/${expected['@forge/wgsl']}, ptxas via @forge/ptx/ptxas ` +
          `(${result.registers} registers)`
        );
      });

    await this.step('forge golden update outside a checkout', async () => {
      const listing = new Set(treeListing(consumer));
      const { code, stdout, stderr } = await this.exec(
        'npx',
        ['--no', '--', 'forge', 'golden', 'update'],
        {
          cwd: consumer,
          env: consumerEnv,
          expectCode: 'any',
        },
      );
      const problems = [];
      // npx's own warnings (npm config it does not know, say) are npm's, not forge's.
      const lines = stderr
        .split('\n')
        .filter((line) => line.trim() !== '' && !/^npm (warn|notice) /.test(line));
      if (code !== 2) problems.push(`exit status ${code}, expected 2`);
      if (lines.length !== 1) problems.push(`stderr has ${lines.length} lines, expected 1`);
      if (stdout.trim() !== '') problems.push('it printed on stdout');
      const added = treeListing(consumer).filter((path) => !listing.has(path));
      if (added.length > 0) problems.push(`it created ${added.slice(0, 5).join(', ')}`);
      if (problems.length > 0)
        throw new StepError(`forge golden update in the consumer: ${problems.join('; ')}`, {
          command: 'npx --no -- forge golden update',
          cwd: consumer,
          output: `${stdout}${stderr}`,
        });
      return `exit 2, nothing written: ${lines[0]}`;
    });

    const after = await this.checkoutState();
    if (after.head !== checkoutState.head || after.status !== checkoutState.status)
      this.say(
        'rehearse: warning: the checkout changed while the rehearsal ran (not by it: it only reads it)',
      );
    return published;
  }

  async checkoutState() {
    const env = cleanEnvironment(process.env);
    const head = (
      await this.exec('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, env })
    ).stdout.trim();
    const status = (await this.exec('git', ['status', '--porcelain'], { cwd: REPO_ROOT, env }))
      .stdout;
    return { head, status };
  }

  /** Name -> package.json of every public package of the workspace at `root`. */
  workspaceManifests(root) {
    const manifests = new Map();
    const packages = join(root, 'packages');
    for (const name of readdirSync(packages).sort()) {
      const path = join(packages, name, 'package.json');
      if (!existsSync(path)) continue;
      const manifest = JSON.parse(readFileSync(path, 'utf8'));
      if (manifest.private !== true) manifests.set(manifest.name, manifest);
    }
    return manifests;
  }

  /** Name -> version of every public package of the workspace at `root`. */
  workspaceVersions(root) {
    return new Map(
      [...this.workspaceManifests(root)].map(([name, manifest]) => [name, manifest.version]),
    );
  }

  startVerdaccio(bin, config, port, cwd, env) {
    const log = openSync(this.logPath, 'a');
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
    this.verdaccio = server;
  }

  // Failure and cleanup -----------------------------------------------------------------------

  reportFailure(error) {
    if (error instanceof InterruptedError || this.abort.signal.aborted) {
      error = this.abort.signal.reason ?? error;
      this.say(`rehearse: ${error.message}; cleaning up`);
      return;
    }
    this.say(`rehearse: FAILED: ${error.message ?? error}`);
    const details = error instanceof StepError ? error.details : {};
    if (details.command)
      this.say(`rehearse: command: ${details.command}${details.cwd ? ` (in ${details.cwd})` : ''}`);
    if (details.output !== undefined && details.output.trim() !== '')
      this.say(`rehearse: its output, last lines:\n${tail(details.output)}`);
    if (!(error instanceof StepError) && error?.stack) this.say(error.stack);
    if (this.verdaccio?.exit !== undefined)
      this.say(`rehearse: Verdaccio exited early (${this.verdaccio.exit})`);
    if (this.logPath && existsSync(this.logPath))
      this.say(
        `rehearse: Verdaccio log ${this.logPath}, last lines:\n${tail(readFileSync(this.logPath, 'utf8'), 25)}`,
      );
  }

  /** Stops every child and the server, then removes the temporary directory (unless --keep). */
  async cleanup() {
    if (this.cleanedUp) return;
    const since = Date.now();
    const done = [];
    for (const child of this.children) signalGroup(child.pid, 'SIGTERM');
    if (this.verdaccio !== undefined) {
      const { pid } = this.verdaccio;
      if (this.verdaccio.exit === undefined) signalGroup(pid, 'SIGTERM');
      const stopped = await Promise.race([
        this.verdaccio.exited.then(() => true),
        sleep(5000, false, { ref: false }),
      ]);
      if (!stopped) {
        signalGroup(pid, 'SIGKILL');
        await Promise.race([this.verdaccio.exited, sleep(2000, undefined, { ref: false })]);
      }
      signalGroup(pid, 'SIGKILL'); // anything Verdaccio started
      done.push(`Verdaccio (pid ${pid}) stopped`);
    }
    for (const child of this.children) signalGroup(child.pid, 'SIGKILL');
    if (this.root !== undefined) {
      const leftovers = processesMarked(RUN_MARKER, basename(this.root));
      for (const leftover of leftovers) {
        try {
          process.kill(leftover.pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      if (leftovers.length > 0)
        done.push(
          `killed ${leftovers.length} leftover process(es): ${leftovers.map((p) => `${p.pid} ${p.cmdline}`).join('; ')}`,
        );
      if (this.options.keep) done.push(`kept ${this.root}`);
      else {
        rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
        done.push(existsSync(this.root) ? `could not remove ${this.root}` : `removed ${this.root}`);
      }
    }
    this.cleanedUp = true;
    this.say(`rehearse: cleanup: ${done.join(', ') || 'nothing to do'} (${seconds(since)} s)`);
  }

  /** Last resort when the process is leaving without `cleanup()`: no waiting, SIGKILL all. */
  cleanupNow() {
    if (this.cleanedUp) return;
    this.cleanedUp = true;
    for (const child of this.children) signalGroup(child.pid, 'SIGKILL');
    if (this.verdaccio !== undefined) signalGroup(this.verdaccio.pid, 'SIGKILL');
    if (this.root !== undefined && !this.options.keep)
      rmSync(this.root, { recursive: true, force: true });
  }
}

export async function main(argv = process.argv.slice(2)) {
  let options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const rehearsal = new Rehearsal(options);
  let interrupted;
  const onSignal = (signal) => {
    if (interrupted !== undefined) {
      // A second signal: no more waiting.
      rehearsal.cleanupNow();
      process.exit(128 + SIGNAL_NUMBERS[signal]);
    }
    interrupted = signal;
    rehearsal.say(`rehearse: ${signal} received, stopping`);
    rehearsal.abort.abort(new InterruptedError(signal));
    // Should cleanup hang, leave anyway.
    setTimeout(() => {
      rehearsal.cleanupNow();
      process.exit(128 + SIGNAL_NUMBERS[signal]);
    }, 30_000).unref();
  };
  const signals = Object.keys(SIGNAL_NUMBERS);
  for (const signal of signals) process.on(signal, onSignal);
  const onExit = () => rehearsal.cleanupNow();
  process.on('exit', onExit);

  let code = 1;
  let published;
  try {
    published = await rehearsal.run();
    code = 0;
  } catch (error) {
    rehearsal.reportFailure(error);
    code = error instanceof InterruptedError ? 128 + SIGNAL_NUMBERS[error.signal] : 1;
  } finally {
    try {
      await rehearsal.cleanup();
    } catch (error) {
      rehearsal.say(`rehearse: cleanup failed: ${error.stack ?? error}`);
      rehearsal.cleanupNow();
      code = code === 0 ? 1 : code;
    }
    for (const signal of signals) process.off(signal, onSignal);
    process.off('exit', onExit);
  }
  if (interrupted !== undefined) code = 128 + SIGNAL_NUMBERS[interrupted];
  if (code === 0) {
    for (const [name, { version }] of published) rehearsal.say(`published ${name}@${version}`);
    rehearsal.say(
      `release rehearsal: ok in ${Math.round((Date.now() - rehearsal.started) / 1000)} s`,
    );
  } else {
    const how = interrupted === undefined ? 'FAILED' : `interrupted by ${interrupted}`;
    const after = Math.round((Date.now() - rehearsal.started) / 1000);
    rehearsal.say(`release rehearsal: ${how} after ${after} s`);
  }
  return code;
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(resolve(process.argv[1])).href
)
  void main().then((code) => {
    process.exitCode = code;
  });
