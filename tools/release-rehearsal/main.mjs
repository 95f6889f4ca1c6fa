// `pnpm release:rehearse`: a release, start to finish, against a throwaway registry.
//
// 1. Copies the checkout's tracked and untracked-not-ignored files into a temporary directory,
//    commits them to a fresh git repository there and installs it offline from the pnpm store.
//    The real checkout is only read. (scratch.mjs)
// 2. Starts Verdaccio on 127.0.0.1 with its storage, htpasswd and log in the same temporary
//    directory and no uplink, so no @forge package can come from the public registry (where the
//    @forge scope belongs to another organisation). Creates a user through the registry API.
//    (registry.mjs)
// 3. In the copy: `changeset version`, `pnpm build`, `changeset publish`, with npm_config_registry
//    and the @forge scope both pointing at the local server and the user's own npm config left out
//    (scratch.mjs). Checks every published manifest and tarball: no `workspace:` ranges, entry
//    points, README.md, LICENSE, repository and engines present, webgpu only an optional peer
//    (published.mjs).
// 4. A consumer project outside the monorepo installs @forge/ir, @forge/ptx, @forge/wgsl and
//    @forge/cli with npm (only @forge mapped to the local server, webgpu left out), runs the
//    installed `forge` (--version, list, emit PTX + ptxas, emit WGSL, run WGSL refusing without
//    webgpu, golden update refusing), compares the emitted kernels with golden/, and imports the
//    packages from ESM and CommonJS (consumer.mjs, consumer-api.mjs).
//
// Every step prints one line as it goes. On failure: the failing command, its output tail and the
// Verdaccio log tail, exit 1. Always (success, failure, SIGINT/SIGTERM) the server's process group
// and every child's are stopped and the temporary directory is removed; `--keep` keeps the
// directory for debugging. Linux and macOS (process groups); Node >= 20.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  checkApi,
  checkEmitPtx,
  checkEmitWgsl,
  checkGoldenUpdate,
  checkList,
  checkRunWithoutWebgpu,
  checkVersion,
  createConsumer,
  installIntoConsumer,
} from './consumer.mjs';
import { seconds, tail } from './format.mjs';
import { StepError, cleanEnvironment, exec, processesMarked, signalGroup } from './process.mjs';
import { checkPublished } from './published.mjs';
import { createUser, startRegistry, stopVerdaccio } from './registry.mjs';
import {
  buildCopy,
  copyCheckout,
  installCopy,
  pointCopyAtRegistry,
  publishPackages,
  versionPackages,
} from './scratch.mjs';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Environment variable naming the run in every process it starts. */
const RUN_MARKER = 'FORGE_RELEASE_REHEARSAL';
const SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM'];

const USAGE = `usage: pnpm release:rehearse [--keep]

Publishes every public workspace package to a throwaway local Verdaccio registry (changeset
version + changeset publish in a scratch copy of the checkout) and installs them with npm in a
consumer project outside the monorepo, which runs the installed forge and imports the packages.

  --keep   keep the temporary directory (scratch copy, registry storage and log, consumer)`;

class UsageError extends Error {}

class InterruptedError extends Error {
  constructor(signal) {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}

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
    this.logPath = undefined;
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

  /** A line printed under the current step once it succeeds. */
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

  /** A command in its own process group, stopped with the rehearsal; see process.mjs. */
  exec(command, args, options) {
    return exec(command, args, { ...options, signal: this.abort.signal, children: this.children });
  }

  // Phases ------------------------------------------------------------------------------------

  /** Resolves to what was published, name -> { version, integrity, peerDependencies }. */
  async run() {
    const context = this.prepare();
    context.checkout = await this.checkoutState(context);
    await copyCheckout(this, context);
    await installCopy(this, context);
    context.registry = await startRegistry(this, context);
    context.token = await createUser(this, context);
    context.env.publish = await pointCopyAtRegistry(this, context);
    context.versions = await versionPackages(this, context);
    await buildCopy(this, context);
    await publishPackages(this, context);
    context.published = await checkPublished(this, context);
    await createConsumer(this, context);
    await installIntoConsumer(this, context);
    await checkVersion(this, context);
    await checkList(this, context);
    await checkEmitPtx(this, context);
    await checkEmitWgsl(this, context);
    await checkRunWithoutWebgpu(this, context);
    await checkApi(this, context);
    await checkGoldenUpdate(this, context);
    const after = await this.checkoutState(context);
    if (after.head !== context.checkout.head || after.status !== context.checkout.status)
      this.say(
        'rehearse: warning: the checkout changed while the rehearsal ran (not by it: it only reads it)',
      );
    return context.published;
  }

  /** The temporary directory, its layout and the environments the commands start from. */
  prepare() {
    const root = mkdtempSync(join(tmpdir(), 'forge-rehearsal-'));
    this.root = root;
    const registryDirectory = join(root, 'registry');
    mkdirSync(registryDirectory);
    this.logPath = join(registryDirectory, 'verdaccio.log');
    // Empty stand-ins for the user's and the machine's npm config and the global git config.
    const emptyFile = (name) => {
      const path = join(root, name);
      writeFileSync(path, '');
      return path;
    };
    const empty = {
      gitConfig: emptyFile('empty-gitconfig'),
      userNpmrc: emptyFile('empty-npmrc-user'),
      globalNpmrc: emptyFile('empty-npmrc-global'),
    };
    this.say(`rehearse: temporary directory ${root}${this.options.keep ? ' (kept: --keep)' : ''}`);
    // Every process started from here carries the marker, so cleanup can find stragglers.
    const base = { ...cleanEnvironment(process.env, REPO_ROOT), [RUN_MARKER]: basename(root) };
    const git = {
      ...base,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: empty.gitConfig,
      GIT_AUTHOR_NAME: 'Forge release rehearsal',
      GIT_AUTHOR_EMAIL: 'rehearsal@localhost',
      GIT_COMMITTER_NAME: 'Forge release rehearsal',
      GIT_COMMITTER_EMAIL: 'rehearsal@localhost',
      TURBO_TELEMETRY_DISABLED: '1',
      TURBO_NO_UPDATE_NOTIFIER: '1',
      COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
    };
    return {
      repoRoot: REPO_ROOT,
      scratch: join(root, 'scratch'),
      registryDirectory,
      consumer: join(root, 'consumer'),
      empty,
      env: { base, git },
    };
  }

  /** HEAD and `git status` of the checkout, to tell whether it changed meanwhile. */
  async checkoutState({ repoRoot, env }) {
    const git = async (...args) =>
      (await this.exec('git', args, { cwd: repoRoot, env: env.base })).stdout;
    return {
      head: (await git('rev-parse', 'HEAD')).trim(),
      status: await git('status', '--porcelain'),
    };
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
      await stopVerdaccio(this.verdaccio);
      done.push(`Verdaccio (pid ${this.verdaccio.pid}) stopped`);
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
  const exitBySignal = (signal) => {
    rehearsal.cleanupNow();
    process.exit(128 + constants.signals[signal]);
  };
  const onSignal = (signal) => {
    // A second signal: no more waiting.
    if (interrupted !== undefined) exitBySignal(signal);
    interrupted = signal;
    rehearsal.say(`rehearse: ${signal} received, stopping`);
    rehearsal.abort.abort(new InterruptedError(signal));
    // Should cleanup hang, leave anyway.
    setTimeout(() => exitBySignal(signal), 30_000).unref();
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  const onExit = () => rehearsal.cleanupNow();
  process.on('exit', onExit);

  let code = 1;
  let published;
  try {
    published = await rehearsal.run();
    code = 0;
  } catch (error) {
    rehearsal.reportFailure(error);
  } finally {
    try {
      await rehearsal.cleanup();
    } catch (error) {
      rehearsal.say(`rehearse: cleanup failed: ${error.stack ?? error}`);
      rehearsal.cleanupNow();
      code = 1;
    }
    for (const signal of SIGNALS) process.off(signal, onSignal);
    process.off('exit', onExit);
  }
  const after = Math.round((Date.now() - rehearsal.started) / 1000);
  if (interrupted !== undefined) {
    rehearsal.say(`release rehearsal: interrupted by ${interrupted} after ${after} s`);
    return 128 + constants.signals[interrupted];
  }
  if (code !== 0) {
    rehearsal.say(`release rehearsal: FAILED after ${after} s`);
    return code;
  }
  for (const [name, { version }] of published) rehearsal.say(`published ${name}@${version}`);
  rehearsal.say(`release rehearsal: ok in ${after} s`);
  return 0;
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(resolve(process.argv[1])).href
)
  void main().then((code) => {
    process.exitCode = code;
  });
