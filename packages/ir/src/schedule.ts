import type { Stmt } from './body.js';
import { ValidationError, type ValidationIssue } from './errors.js';
import {
  bindSizeExpression,
  evaluateSizeExpression,
  parseSizeExpression,
} from './size-expression.js';
import { describeJson, isRecord, joinPath } from './json-shape.js';
import { assertNever } from './ops.js';
import { takeSnapshot } from './snapshot.js';
import {
  TARGET_KINDS,
  type KernelSpec,
  type KnobBounds,
  type Schedule,
  type TargetKind,
} from './spec.js';
import { isOneOf } from './types.js';
import { validateSpec } from './validate.js';
import { ELEMENT_BYTES } from './types.js';

/** Hardware limits a schedule must respect per target kind, beyond each knob's own bounds. */
export const TARGET_LIMITS: Readonly<
  Record<TargetKind, { maxWorkgroupSize: number; maxSharedBytes: number }>
> = {
  ptx: { maxWorkgroupSize: 1024, maxSharedBytes: 48 * 1024 },
  wgsl: { maxWorkgroupSize: 1024, maxSharedBytes: 32 * 1024 },
};

/** Parses `key=value` pairs as given on a command line; a malformed pair is a ValidationError. */
export function parseScheduleAssignments(assignments: readonly string[]): Record<string, number> {
  // No prototype: `__proto__=1` must become a knob that resolveSchedule reports, not a no-op.
  const schedule = Object.create(null) as Record<string, number>;
  for (const assignment of assignments) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(\d{1,9})$/.exec(assignment);
    if (match === null || match[1] === undefined || match[2] === undefined) {
      throw new ValidationError([
        {
          path: 'schedule',
          message: `'${assignment}' is not key=value with a non-negative integer value`,
        },
      ]);
    }
    schedule[match[1]] = Number(match[2]);
  }
  return schedule;
}

/**
 * Why `value` is not allowed by a knob's `bounds` (`"96 is not a multiple of 64"`), or undefined
 * when it is: an integer in [min, max], a multiple of `multipleOf`, a power of two if asked.
 */
export function knobValueProblem(value: number, bounds: KnobBounds): string | undefined {
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max)
    return `${value} is outside [${bounds.min}, ${bounds.max}]`;
  if (bounds.multipleOf !== undefined && value % bounds.multipleOf !== 0)
    return `${value} is not a multiple of ${bounds.multipleOf}`;
  if (bounds.powerOfTwo === true && (value & (value - 1)) !== 0)
    return `${value} is not a power of two`;
  return undefined;
}

/**
 * Fills in defaults and checks every knob against its bounds for `target`, then the derived launch
 * geometry against the target's limits. Returns the complete schedule with keys in spec order.
 */
export function resolveSchedule(
  specInput: KernelSpec,
  target: TargetKind,
  overridesInput: Readonly<Record<string, number>> = {},
): Schedule {
  // Both are read once, into snapshots; a getter cannot change them between check and use.
  const spec = validateSpec(specInput);
  const overrides = scheduleSnapshot(overridesInput, 'schedule');
  if (!isOneOf(TARGET_KINDS, target))
    throw new ValidationError([
      {
        path: 'target',
        message: `must be one of ${TARGET_KINDS.join(', ')}, got ${describeJson(target)}`,
      },
    ]);
  const issues: ValidationIssue[] = [];
  const known = new Set(spec.schedule.map((knob) => knob.name));
  for (const name of Object.keys(overrides)) {
    if (!known.has(name)) {
      issues.push({
        path: `schedule.${name}`,
        message: `unknown schedule knob (known: ${[...known].join(', ') || 'none'})`,
      });
    }
  }
  const schedule: Record<string, number> = {};
  for (const knob of spec.schedule) {
    const value = Object.hasOwn(overrides, knob.name)
      ? (overrides[knob.name] as number)
      : knob.default;
    const problem = knobValueProblem(value, knob.bounds[target]);
    if (problem !== undefined)
      issues.push({ path: `schedule.${knob.name}`, message: `${problem} for ${target}` });
    schedule[knob.name] = value;
  }
  if (issues.length > 0) throw new ValidationError(issues);

  const limits = TARGET_LIMITS[target];
  // A size expression can fault at these knob values (division by zero, a negative difference).
  const evaluate = (expression: string, path: string): number => {
    try {
      return evaluateSizeExpression(expression, schedule);
    } catch (error) {
      issues.push({ path, message: (error as Error).message });
      return Number.NaN;
    }
  };
  const workgroupSize = evaluate(spec.launch.workgroupSize, 'launch.workgroupSize');
  if (workgroupSize < 1 || workgroupSize > limits.maxWorkgroupSize) {
    issues.push({
      path: 'launch.workgroupSize',
      message: `${workgroupSize} is outside [1, ${limits.maxWorkgroupSize}] for ${target}`,
    });
  }
  if (usesWarpOps(spec.body) && Number.isFinite(workgroupSize) && workgroupSize % 32 !== 0) {
    issues.push({
      path: 'launch.workgroupSize',
      message: `${workgroupSize} is not a multiple of the 32-lane warp the body's shuffles and reductions need`,
    });
  }
  let sharedBytes = 0;
  spec.shared.forEach((array, index) => {
    const length = evaluate(array.length, `shared[${index}].length`);
    if (length < 1)
      issues.push({
        path: `shared[${index}].length`,
        message: `evaluates to ${length}; must be at least 1`,
      });
    sharedBytes += length * ELEMENT_BYTES[array.element];
  });
  spec.launch.grid.forEach((axis, index) => {
    try {
      bindSizeExpression(parseSizeExpression(axis), schedule);
    } catch (error) {
      issues.push({ path: `launch.grid[${index}]`, message: (error as Error).message });
    }
  });
  if (sharedBytes > limits.maxSharedBytes) {
    issues.push({
      path: 'shared',
      message: `${sharedBytes} bytes exceed the ${limits.maxSharedBytes}-byte limit for ${target}`,
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return takeSnapshot(schedule) as Schedule;
}

/**
 * A snapshot of schedule values: a plain object of numbers, each property read once. Used for
 * overrides and for a resolved schedule handed back to an entry point.
 */
export function scheduleSnapshot(value: unknown, path: string): Schedule {
  const copy = takeSnapshot(value, path);
  if (!isRecord(copy))
    throw new ValidationError([{ path, message: `must be an object, got ${describeJson(copy)}` }]);
  const issues: ValidationIssue[] = [];
  for (const [name, knob] of Object.entries(copy)) {
    if (typeof knob !== 'number')
      issues.push({
        path: joinPath(path, name),
        message: `must be a number, got ${describeJson(knob)}`,
      });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return copy as Schedule;
}

/** Whether any statement is a warp shuffle or reduction. */
export function usesWarpOps(body: readonly Stmt[]): boolean {
  return body.some((statement) => {
    switch (statement.op) {
      case 'shuffle':
      case 'reduce':
        return true;
      case 'if':
        return usesWarpOps(statement.then) || usesWarpOps(statement.else);
      case 'for':
        return usesWarpOps(statement.body);
      case 'let':
      case 'assign':
      case 'store':
      case 'load_vector':
      case 'barrier':
        return false;
      default:
        return assertNever(statement, 'statement op');
    }
  });
}

/** Prints a schedule as `k=v,k=v` in key order, the form used in file names and cache keys. */
export function formatSchedule(schedule: Schedule): string {
  return Object.keys(schedule)
    .sort()
    .map((key) => `${key}=${schedule[key]}`)
    .join(',');
}
