import { spawn } from 'node:child_process';

/**
 * Dawn (the `webgpu` package) prints its own log lines from native code straight to file
 * descriptor 2 when it opens an adapter, e.g. on lavapipe `Warning: maxDynamicUniformBuffers…
 * artificially reduced from 1000000 to 16…`. Nothing in Node can redirect that descriptor, so a
 * command that opens Dawn runs in a child process whose stderr passes through this filter: forge's
 * own lines reach the user, Dawn's log lines do not. `FORGE_DAWN_LOG=show` turns the filter off.
 */
export const DAWN_LOG_ENV = 'FORGE_DAWN_LOG';

/** Dawn's log line format, `<Severity>: <message>`, for the severities that are not errors. */
export const DAWN_LOG_LINE = /^(Debug|Info|Warning): /;
/** Lines that continue a Dawn log record: its `    at Check…(file.cpp:106)` trailer and blank lines. */
const CONTINUATION = /^(\s|$)/;

/** A filter over stderr lines that drops Dawn's log records (a record may span several lines). */
export function dawnLogFilter(): (line: string) => boolean {
  let inRecord = false;
  return (line) => {
    inRecord = DAWN_LOG_LINE.test(line) || (inRecord && CONTINUATION.test(line));
    return !inRecord;
  };
}

/** Whether this command line opens Dawn: `run`, `decode` or `validate` with `--target wgsl`. */
export function opensDawn(argv: readonly string[]): boolean {
  const [command, ...args] = argv;
  if (command !== 'run' && command !== 'decode' && command !== 'validate') return false;
  const targets = args.filter((arg) => arg === '--target' || arg.startsWith('--target='));
  // `forge validate a.wgsl b.wgsl` validates WGSL without --target (see validateTargetKind).
  if (command === 'validate' && targets.length === 0)
    return args.length > 0 && args.every((arg) => arg.endsWith('.wgsl'));
  return args.some(
    (arg, index) => arg === '--target=wgsl' || (arg === '--target' && args[index + 1] === 'wgsl'),
  );
}

/** Splits a text stream into lines, passing each complete line (with its newline) to `line`. */
export function lineSplitter(line: (text: string) => void): {
  push: (chunk: string) => void;
  end: () => void;
} {
  let pending = '';
  return {
    push: (chunk) => {
      pending += chunk;
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        line(pending.slice(0, newline + 1));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
    },
    end: () => {
      if (pending !== '') line(pending);
      pending = '';
    },
  };
}

/**
 * Runs `node <script> <argv>` with stdin and stdout inherited and stderr filtered of Dawn's log
 * lines; resolves to the child's exit code (a signal is passed on to this process).
 */
export function runWithoutDawnLog(script: string, argv: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, script, ...argv], {
    stdio: ['inherit', 'inherit', 'pipe'],
    env: { ...process.env, [DAWN_LOG_ENV]: 'filtered' },
  });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  process.on('SIGTERM', forward);
  process.on('SIGINT', forward);
  const keep = dawnLogFilter();
  const lines = lineSplitter((text) => {
    if (keep(text)) process.stderr.write(text);
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', lines.push);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      lines.end();
      process.off('SIGTERM', forward);
      process.off('SIGINT', forward);
      if (signal !== null) process.kill(process.pid, signal);
      resolve(code ?? 1);
    });
  });
}
