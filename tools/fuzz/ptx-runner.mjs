// Runs one PTX fuzz case through `forge sim` (the real binary as a child process, bounded in time
// and memory, or runCli in this process) and says what happened.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '@forge/cli';
import { RUN_FAILURES, capture, classifyRun, runForge } from './cli-child.mjs';

/**
 * What a case may take: wall time, peak RSS (checked after the run; a child twice over either is
 * killed), and the V8 heap a child gets (`--max-old-space-size`, MiB).
 */
export const BOUNDS = { ms: 15_000, rssBytes: 768 * 2 ** 20, heapMiB: 1024 };

/** Normal outcomes, then the failing ones (findings of the fuzzer). */
export const PTX_OUTCOMES = ['ran', 'findings', 'step-limit', 'rejected'];
export const PTX_FAILURES = RUN_FAILURES;

/**
 * The outcome of a `forge sim` run (classifyRun): exit 1 is a kernel's findings, or the step
 * limit when stderr says the run was stopped.
 */
export function classify(run, bounds = BOUNDS) {
  return classifyRun(run, bounds, (stderr) =>
    /^forge sim: stopped after/.test(stderr) ? 'step-limit' : 'findings',
  );
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

/** `node bin.js sim FILE ARGS` as a bounded child (runForge). */
export async function runChild(fuzzCase, dir, bounds = BOUNDS) {
  const file = join(dir, `case-${fuzzCase.index}.ptx`);
  writeFileSync(file, fuzzCase.text);
  try {
    return await runForge(['sim', file, ...fuzzCase.args], { cwd: dir, bounds });
  } finally {
    rmSync(file, { force: true });
  }
}
