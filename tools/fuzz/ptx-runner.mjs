// Runs one PTX fuzz case through `forge sim` (the real binary as a child process, bounded in time
// and memory, or runCli in this process) and says what happened.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '@forge/cli';

const BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));
const PROBE = fileURLToPath(new URL('./ptx-rss-probe.mjs', import.meta.url));

/**
 * What a case may take: wall time, peak RSS (checked after the run; a child twice over either is
 * killed), and the V8 heap a child gets (`--max-old-space-size`, MiB).
 */
export const BOUNDS = { ms: 15_000, rssBytes: 768 * 2 ** 20, heapMiB: 1024 };

/** Normal outcomes, then the failing ones (findings of the fuzzer). */
export const PTX_OUTCOMES = ['ran', 'findings', 'step-limit', 'rejected'];
export const PTX_FAILURES = ['crash', 'trace', 'timeout', 'slow', 'memory'];

const MAX_CAPTURE = 64 * 1024;
const capture = (sink, text) =>
  sink.length < MAX_CAPTURE ? sink + String(text).slice(0, MAX_CAPTURE - sink.length) : sink;

/**
 * The outcome of a run: failing when the exit code is not 0, 1 or 2, when stderr is more than one
 * line or holds a stack trace, or when a bound was passed; otherwise what the CLI said.
 */
export function classify(run, bounds = BOUNDS) {
  const { code, stderr = '', ms, rssBytes, thrown, killed } = run;
  const firstLine = stderr.split('\n')[0].slice(0, 300);
  if (killed === 'time')
    return { outcome: 'timeout', message: `killed after ${Math.round(ms)} ms` };
  if (killed === 'memory')
    return {
      outcome: 'memory',
      message: `killed at ${Math.round(rssBytes / 2 ** 20)} MiB resident`,
    };
  if (thrown !== undefined)
    return { outcome: 'crash', message: `threw ${thrown?.name}: ${String(thrown?.message).slice(0, 200)}` }; // prettier-ignore
  if (![0, 1, 2].includes(code))
    return { outcome: 'crash', message: `exit ${code}${run.signal ? ` (${run.signal})` : ''}: ${firstLine}` }; // prettier-ignore
  const lines = stderr.endsWith('\n') ? stderr.slice(0, -1).split('\n') : stderr.split('\n');
  // Exit 1 with nothing on stderr is a run with findings (they go to stdout).
  const quiet = code === 0 || (code === 1 && stderr === '');
  if (
    /^\s+at /m.test(stderr) ||
    (quiet ? stderr !== '' : lines.length !== 1 || !stderr.endsWith('\n'))
  )
    // prettier-ignore
    return { outcome: 'trace', message: `exit ${code}, ${lines.length} stderr line(s): ${firstLine}` };
  if (ms > bounds.ms) return { outcome: 'slow', message: `${Math.round(ms)} ms: ${firstLine}` };
  if (rssBytes !== undefined && rssBytes > bounds.rssBytes)
    return { outcome: 'memory', message: `${Math.round(rssBytes / 2 ** 20)} MiB resident: ${firstLine}` }; // prettier-ignore
  if (code === 0) return { outcome: 'ran', message: '' };
  if (code === 1)
    return /^forge sim: stopped after/.test(stderr)
      ? { outcome: 'step-limit', message: firstLine }
      : { outcome: 'findings', message: firstLine };
  return { outcome: 'rejected', message: firstLine };
}

/** `forge sim FILE ARGS` through runCli in this process: fast, but bounded by nothing. */
export async function runInProcess(fuzzCase, dir) {
  const file = join(dir, `case-${fuzzCase.index}.ptx`);
  writeFileSync(file, fuzzCase.text);
  let stderr = '';
  const started = performance.now();
  try {
    const code = await runCli(['sim', file, ...fuzzCase.args], {
      stdout: () => undefined,
      stderr: (text) => (stderr = capture(stderr, text)),
      cwd: dir,
    });
    return { code, stderr, ms: performance.now() - started };
  } catch (thrown) {
    return { thrown, stderr, ms: performance.now() - started };
  } finally {
    rmSync(file, { force: true });
  }
}

/** Resident bytes of a live process (Linux), or undefined. */
function residentBytes(pid) {
  try {
    const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * `node bin.js sim FILE ARGS` as a child with a heap cap, killed past twice the time or memory
 * bound; its peak RSS comes from the preloaded probe (or, when killed, the last sample).
 */
export function runChild(fuzzCase, dir, bounds = BOUNDS) {
  const file = join(dir, `case-${fuzzCase.index}.ptx`);
  writeFileSync(file, fuzzCase.text);
  const node = [`--max-old-space-size=${bounds.heapMiB}`, '--import', PROBE];
  const child = spawn(process.execPath, [...node, BIN, 'sim', file, ...fuzzCase.args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const started = performance.now();
  let stderr = '';
  let probe = '';
  let sampled = 0;
  let killed;
  const kill = (why) => {
    killed ??= why;
    child.kill('SIGKILL');
  };
  child.stdout.resume();
  child.stderr.on('data', (text) => (stderr = capture(stderr, text)));
  child.stdio[3].on('data', (text) => (probe += text));
  const timer = setTimeout(() => kill('time'), bounds.ms * 2);
  const watch = setInterval(() => {
    sampled = Math.max(sampled, residentBytes(child.pid) ?? 0);
    if (sampled > bounds.rssBytes * 2) kill('memory');
  }, 100);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(watch);
      rmSync(file, { force: true });
      const peak = probe === '' ? sampled : Number(probe) * 1024;
      resolve({ code, signal, stderr, ms: performance.now() - started, rssBytes: peak, killed });
    });
  });
}
