/** Every error Forge raises on purpose derives from ForgeError, so callers can tell a user's mistake from a bug. */
export class ForgeError extends Error {
  override readonly name: string = 'ForgeError';
  constructor(message: string) {
    super(message);
  }
}

/** One problem found in a spec, located by its JSON path (`buffers[2].name`). */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

/** A spec (or schedule, or launch expression) failed validation; carries every problem found. */
export class ValidationError extends ForgeError {
  override readonly name = 'ValidationError';
  readonly issues: readonly ValidationIssue[];
  constructor(issues: readonly ValidationIssue[]) {
    const first = issues[0];
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(first === undefined ? 'invalid input' : `${formatIssue(first)}${more}`);
    this.issues = issues;
  }
  /** The JSON path of the first problem. */
  get path(): string {
    return this.issues[0]?.path ?? '';
  }
}

/** The target cannot express an op; a backend never emits silent fallbacks. */
export class UnsupportedError extends ForgeError {
  override readonly name = 'UnsupportedError';
  constructor(
    readonly target: string,
    readonly op: string,
    detail?: string,
  ) {
    super(`${target} does not support op '${op}'${detail === undefined ? '' : `: ${detail}`}`);
  }
}

/**
 * A broken internal invariant: a bug in Forge, never a user's mistake, so it is not a ForgeError
 * (the CLI shows its stack and asks for a report instead of a one-line input error). `where` names
 * the part that found it: a backend (`wgsl`, `ptx`), a pass, the builder.
 */
export class InternalError extends Error {
  override readonly name = 'InternalError';
  constructor(
    readonly where: string,
    message: string,
  ) {
    super(`${where}: ${message}`);
  }
}

/**
 * A BodyBuilder appended a statement after the callback it was given to (or defineKernel, for a
 * body's own builder) had returned: the block it belongs to is closed.
 */
export class BuilderScopeError extends ForgeError {
  override readonly name = 'BuilderScopeError';
  constructor(
    /** JSON path of the misused builder's block (`body[2].then`). */
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** The interpreter hit a run-time fault (divergent barrier, out-of-bounds access, deadlock). */
export class ExecutionError extends ForgeError {
  override readonly name = 'ExecutionError';
}

/**
 * An issue as `path: message` (just the message for the root), the form ValidationError's message
 * uses.
 */
export function formatIssue(issue: ValidationIssue): string {
  return issue.path === '' ? issue.message : `${abbreviatePath(issue.path)}: ${issue.message}`;
}

// A step is a key with its indices (`.then[0]`), so an abbreviated path never splits one.
const PATH_STEP = /\.[A-Za-z_$][A-Za-z0-9_$]*(?:\[[^\]]*\])*|\[[^\]]*\]/g;
const MAX_PATH_LENGTH = 80;

/**
 * A JSON path short enough for a one-line message: a deep path keeps its first and last steps and
 * says how many it left out (`body[0].then[0]...(+57 levels)....args[0]`).
 */
export function abbreviatePath(path: string): string {
  if (path.length <= MAX_PATH_LENGTH) return path;
  const head = /^[^.[]*/.exec(path)?.[0] ?? '';
  const steps = path.slice(head.length).match(PATH_STEP) ?? [];
  let front = 0;
  let back = 0;
  let length = head.length;
  // Keep steps from both ends, alternating, while they fit in the budget.
  while (front + back < steps.length) {
    const next = front <= back ? steps[front] : steps[steps.length - 1 - back];
    if (next === undefined || length + next.length > MAX_PATH_LENGTH - 20) break;
    length += next.length;
    if (front <= back) front++;
    else back++;
  }
  const hidden = steps.length - front - back;
  if (hidden <= 0) return path;
  return `${head}${steps.slice(0, front).join('')}...(+${hidden} levels)...${steps.slice(steps.length - back).join('')}`;
}
