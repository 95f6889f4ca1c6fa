// Runs the built `forge` CLI in a child process bounded in time and memory, and judges the run as a
// fuzzer must: exit 0, 1 or 2, a refusal in one line with no stack trace, within its bounds.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));
const PROBE = fileURLToPath(new URL('./rss-probe.mjs', import.meta.url));

/** Outcomes that are a defect, whatever the target. */
export const RUN_FAILURES = ['crash', 'trace', 'timeout', 'slow', 'memory'];

const MAX_CAPTURE = 64 * 1024;

/** `sink` with `text` appended, kept to 64 KiB: output judged, bounded whatever a run prints. */
export const capture = (sink, text) =>
  sink.length < MAX_CAPTURE ? sink + String(text).slice(0, MAX_CAPTURE - sink.length) : sink;

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
 * `node bin.js ...args` in `cwd` as a child with a V8 heap cap (`bounds.heapMiB`), killed past
 * twice the time (`bounds.ms`) or memory (`bounds.rssBytes`) bound. Resolves to { code, signal,
 * stdout, stderr (each kept up to 64 KiB), ms, rssBytes, killed }: the peak RSS from the preloaded
 * probe, or when the child died first, the largest sample of /proc.
 */
export function runForge(args, { cwd, bounds }) {
  const node = [`--max-old-space-size=${bounds.heapMiB}`, '--import', PROBE];
  const child = spawn(process.execPath, [...node, BIN, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const started = performance.now();
  let stdout = '';
  let stderr = '';
  let probe = '';
  let sampled = 0;
  let killed;
  const kill = (why) => {
    killed ??= why;
    child.kill('SIGKILL');
  };
  child.stdout.on('data', (text) => (stdout = capture(stdout, text)));
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
      const rssBytes = probe === '' ? sampled : Number(probe) * 1024;
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started, rssBytes, killed });
    });
  });
}

// `forge decode` prints a progress line every 2 s; it is not part of a refusal.
const PROGRESS = /^forge \w+: \d+\/\d+ steps, .*\n?/gm;

/**
 * The outcome of a run: failing ('crash', 'trace', 'timeout', 'slow', 'memory') when the exit code
 * is not 0, 1 or 2, when stderr is more than one line or holds a stack trace, or when a bound was
 * passed; otherwise 'ran' (0), 'rejected' (2), or for exit 1 what `exitOne(stderr)` calls it (a
 * failed check or a kernel's findings, reported on stdout with stderr empty, or in one line).
 */
export function classifyRun(run, bounds, exitOne) {
  const { code, ms, rssBytes, thrown, killed } = run;
  const stderr = (run.stderr ?? '').replace(PROGRESS, '');
  const firstLine = stderr.split('\n')[0].slice(0, 300);
  if (killed === 'time')
    return { outcome: 'timeout', message: `killed after ${Math.round(ms)} ms` };
  if (killed === 'memory')
    return { outcome: 'memory', message: `killed at ${Math.round(rssBytes / 2 ** 20)} MiB resident` }; // prettier-ignore
  if (thrown !== undefined)
    return { outcome: 'crash', message: `threw ${thrown?.name}: ${String(thrown?.message).slice(0, 200)}` }; // prettier-ignore
  if (![0, 1, 2].includes(code))
    return { outcome: 'crash', message: `exit ${code}${run.signal ? ` (${run.signal})` : ''}: ${firstLine}` }; // prettier-ignore
  const lines = stderr.endsWith('\n') ? stderr.slice(0, -1).split('\n') : stderr.split('\n');
  const quiet = code === 0 || (code === 1 && stderr === '');
  if (/^\s+at /m.test(stderr) || (quiet ? stderr !== '' : lines.length !== 1 || !stderr.endsWith('\n'))) // prettier-ignore
    return { outcome: 'trace', message: `exit ${code}, ${lines.length} stderr line(s): ${firstLine}` }; // prettier-ignore
  if (ms > bounds.ms) return { outcome: 'slow', message: `${Math.round(ms)} ms: ${firstLine}` };
  if (rssBytes !== undefined && rssBytes > bounds.rssBytes)
    return { outcome: 'memory', message: `${Math.round(rssBytes / 2 ** 20)} MiB resident: ${firstLine}` }; // prettier-ignore
  if (code === 0) return { outcome: 'ran', message: '' };
  if (code === 1) return { outcome: exitOne(stderr), message: firstLine };
  return { outcome: 'rejected', message: firstLine };
}
