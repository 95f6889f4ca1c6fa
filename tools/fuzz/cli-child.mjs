// Runs the built `forge` CLI in a child process under a time bound, and measures what it used: its
// exit, its output (kept up to a cap), its wall time and its peak resident memory, which the child
// reports itself as it exits (a preload hook writes process.resourceUsage().maxRSS to fd 3).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));
const PRELOAD = fileURLToPath(new URL('max-rss.cjs', import.meta.url));

/** Output kept per stream: enough to judge a one-line error, bounded whatever the child prints. */
const OUTPUT_CAP = 64 * 1024;

/** Collects a stream's text up to OUTPUT_CAP characters. */
function collect(stream) {
  const state = { text: '' };
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk) => {
    if (state.text.length < OUTPUT_CAP)
      state.text += chunk.slice(0, OUTPUT_CAP - state.text.length);
  });
  return state;
}

/**
 * Runs `forge ...args` in `cwd`. Resolves (never rejects) to { code, signal, stdout, stderr, ms,
 * maxRssBytes (undefined when the child died before reporting), timedOut }. A child past
 * `timeoutMs` is killed.
 */
export function runForge(args, { cwd, timeoutMs = 30_000 } = {}) {
  return new Promise((resolvePromise) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--require', PRELOAD, BIN, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    const stdout = collect(child.stdout);
    const stderr = collect(child.stderr);
    const rss = collect(child.stdio[3]);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const kilobytes = Number.parseInt(rss.text, 10);
      resolvePromise({
        code,
        signal,
        stdout: stdout.text,
        stderr: stderr.text,
        ms: performance.now() - started,
        maxRssBytes: Number.isFinite(kilobytes) ? kilobytes * 1024 : undefined,
        timedOut,
      });
    });
  });
}

/**
 * What a run of the CLI on untrusted input must be: exit 0, 1 or 2 within its time bound, at most
 * `maxRssBytes` of memory, on 2 exactly one line on stderr, on 1 that line or none (a check that
 * ran and failed, reported on stdout), and no stack trace. Returns the
 * outcome ('ran', 'check-failed', 'rejected', or a failing one: 'timeout', 'memory', 'crash',
 * 'bad-exit', 'not-one-line') and the message that goes with it.
 */
export function judgeRun(run, maxRssBytes) {
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  const first = lines[0] ?? '';
  if (run.timedOut) return { outcome: 'timeout', message: `killed after ${Math.round(run.ms)} ms` };
  if (run.maxRssBytes === undefined)
    return { outcome: 'crash', message: `${run.signal ?? `exit ${run.code}`}: ${first}` };
  if (run.maxRssBytes > maxRssBytes)
    return {
      outcome: 'memory',
      message: `peak RSS ${run.maxRssBytes} bytes, over ${maxRssBytes}: ${first}`,
    };
  if (run.code !== 0 && run.code !== 1 && run.code !== 2)
    return { outcome: 'bad-exit', message: `exit ${run.code}: ${first}` };
  if (run.code === 0) return { outcome: 'ran', message: '' };
  // The CLI's progress lines start with the command's name and "N/M steps"; a refusal is the rest.
  const refusal = lines.filter((line) => !/^forge \w+: \d+\/\d+ steps, /.test(line));
  // A check that ran and failed (`forge run`'s FAIL) reports on stdout, its stderr empty.
  if (run.code === 1 && refusal.length === 0 && !/^\s+at /m.test(run.stdout))
    return { outcome: 'check-failed', message: run.stdout.split('\n').find((line) => line.includes('FAIL')) ?? '' }; // prettier-ignore
  if (refusal.length !== 1 || /^\s+at /m.test(run.stderr))
    return { outcome: 'not-one-line', message: refusal.slice(0, 3).join(' ⏎ ') };
  return { outcome: run.code === 1 ? 'check-failed' : 'rejected', message: refusal[0] ?? '' };
}

/** Outcomes of judgeRun that are a defect. */
export const FAILING_RUNS = new Set(['timeout', 'memory', 'crash', 'bad-exit', 'not-one-line']);
