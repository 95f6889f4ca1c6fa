import { ForgeError, ValidationError, formatIssue } from '@forge/ir';
import { PtxSyntaxError, SimulationInputError, StepLimitError } from '@forge/ptx-sim';
import { PtxasMissingError } from '@forge/ptx/ptxas';
import { EXIT_BAD_INPUT, EXIT_CHECK_FAILED } from './errors.js';

/** Longest message a failure prints; longer ones are cut so the error stays one readable line. */
export const MAX_MESSAGE_CHARS = 400;

// C0/C1 controls, DEL, line/paragraph separators and bidi overrides: a terminal would act on them.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** User text as it may be echoed: control characters JSON-escaped (`\u001b`, `\n`), never raw. */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    return named[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** One printable line: escaped, and cut to MAX_MESSAGE_CHARS with a count of what was cut. */
export function oneLine(message: string): string {
  const line = escapeControl(message);
  if (line.length <= MAX_MESSAGE_CHARS) return line;
  return `${line.slice(0, MAX_MESSAGE_CHARS)}… (${line.length - MAX_MESSAGE_CHARS} more characters)`;
}

/** How a failure is reported: its exit code and its message (one line once passed to oneLine). */
export interface Failure {
  readonly code: number;
  readonly message: string;
}

/**
 * The exit code and message for an error a command threw, or undefined for an error that is not
 * the user's or the machine's doing (a bug: it keeps its stack trace).
 */
export function describeFailure(error: unknown): Failure | undefined {
  // A missing tool or GPU adapter is the machine's problem, not the input's: exit 1 with the fix.
  if (
    error instanceof PtxasMissingError ||
    (error instanceof Error && error.name === 'WebGpuUnavailableError')
  )
    return { code: EXIT_CHECK_FAILED, message: error.message };
  // The run was cut short, not refused: the input was fine, the kernel did not finish.
  if (error instanceof StepLimitError)
    return {
      code: EXIT_CHECK_FAILED,
      message: `stopped after ${error.limit} steps (--max-steps ${error.limit}); the kernel did not finish, an endless loop? (last instruction at line ${error.line})`,
    };
  if (error instanceof ValidationError) {
    const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problem(s))` : '';
    const first = error.issues[0] ?? { path: '', message: 'invalid' };
    return { code: EXIT_BAD_INPUT, message: `invalid input: ${formatIssue(first)}${more}` };
  }
  // The simulator depends on no other Forge package, so its input errors are not ForgeErrors.
  if (
    error instanceof ForgeError ||
    error instanceof PtxSyntaxError ||
    error instanceof SimulationInputError
  )
    return { code: EXIT_BAD_INPUT, message: withoutExcerpt(error) };
  // A file operation the commands did not wrap (a full disk, say): the path and errno, no trace.
  const errno = error as NodeJS.ErrnoException | null;
  if (
    error instanceof Error &&
    typeof errno?.code === 'string' &&
    typeof errno.syscall === 'string'
  ) {
    const path = typeof errno.path === 'string' ? ` ${errno.path}` : '';
    return { code: EXIT_BAD_INPUT, message: `cannot ${errno.syscall}${path}: ${errno.code}` };
  }
  return undefined;
}

/** Tint's verdict keeps its first line (the rest is a source excerpt); other text is escaped whole. */
function withoutExcerpt(error: Error): string {
  return error.name === 'WgslCompileError'
    ? (error.message.split('\n')[0] ?? error.message)
    : error.message;
}
