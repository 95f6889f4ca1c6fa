import type { Stmt } from './body.js';
import { ValidationError, type ValidationIssue } from './errors.js';
import {
  bindSizeExpression,
  evaluateSizeExpression,
  parseSizeExpression,
} from './size-expression.js';
import { describeJson, isRecord, joinPath, ownField } from './json-shape.js';
import { assertNever } from './ops.js';
import { takeSnapshot } from './snapshot.js';
import {
  MAX_REGISTERS_RANGE,
  TARGET_KIND_PATTERN,
  TARGET_KIND_RULE,
  type KernelSpec,
  type KnobBounds,
  type Schedule,
  type ScheduleKnob,
} from './spec.js';
import { validateSpec } from './validate.js';
import { ELEMENT_BYTES } from './types.js';

/**
 * What a backend tells resolveSchedule about its target kind: the name that selects each knob's
 * bounds, and the hardware limits every schedule must respect beyond them (`PTX_LIMITS` in
 * @forge/ptx, `WGSL_LIMITS` in @forge/wgsl).
 */
export interface TargetLimits {
  readonly kind: string;
  /** Most invocations per workgroup. */
  readonly maxWorkgroupSize: number;
  /** Most bytes of static shared (workgroup) memory. */
  readonly maxSharedBytes: number;
}

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
  const multipleOf = ownField(bounds, 'multipleOf');
  if (multipleOf !== undefined && value % multipleOf !== 0)
    return `${value} is not a multiple of ${multipleOf}`;
  if (ownField(bounds, 'powerOfTwo') === true && (value & (value - 1)) !== 0)
    return `${value} is not a power of two`;
  return undefined;
}

/**
 * Fills in defaults and checks every knob against its bounds for the target's kind (a kind without
 * bounds for a knob takes any value the spec's basic rule allows), then the derived launch geometry
 * against the target's limits. A bare kind (`'ptx'`) checks the bounds and no hardware limit.
 * Returns the complete schedule with keys in spec order.
 */
export function resolveSchedule(
  specInput: KernelSpec,
  targetInput: TargetLimits | string,
  overridesInput: Readonly<Record<string, number>> = {},
): Schedule {
  // All three are read once, into snapshots; a getter cannot change them between check and use.
  const spec = validateSpec(specInput);
  const overrides = scheduleSnapshot(overridesInput, 'schedule');
  const { kind: target, ...limits } = checkTargetLimits(targetInput);
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
    const bounds = knobBounds(ownField(knob, 'bounds'), target);
    const problem = bounds === undefined ? undefined : knobValueProblem(value, bounds);
    if (problem !== undefined)
      issues.push({ path: `schedule.${knob.name}`, message: `${problem} for ${target}` });
    schedule[knob.name] = value;
  }
  if (issues.length > 0) throw new ValidationError(issues);

  // A size expression can fault at these knob values (division by zero, a negative difference).
  const evaluate = (expression: string, path: string): number => {
    try {
      return evaluateSizeExpression(expression, schedule);
    } catch (error) {
      issues.push({ path, message: (error as Error).message });
      return Number.NaN;
    }
  };
  // Grid and scratch lengths keep their params, but binding the knobs can fault already.
  const bind = (expression: string, path: string): void => {
    try {
      bindSizeExpression(parseSizeExpression(expression), schedule);
    } catch (error) {
      issues.push({ path, message: (error as Error).message });
    }
  };
  const dispatches = [
    { path: '', ...spec },
    ...(ownField(spec, 'stages') ?? []).map((stage, index) => ({
      path: `stages[${index}].`,
      ...stage,
    })),
  ];
  for (const { path, launch, shared, body } of dispatches) {
    const workgroupSize = evaluate(launch.workgroupSize, `${path}launch.workgroupSize`);
    if (workgroupSize < 1 || workgroupSize > limits.maxWorkgroupSize) {
      // A bare kind has no maximum: only the lower end is a rule then.
      const range = Number.isFinite(limits.maxWorkgroupSize)
        ? `outside [1, ${limits.maxWorkgroupSize}]`
        : 'less than 1';
      issues.push({
        path: `${path}launch.workgroupSize`,
        message: `${workgroupSize} is ${range} for ${target}`,
      });
    }
    if (usesWarpOps(body) && Number.isFinite(workgroupSize) && workgroupSize % 32 !== 0) {
      issues.push({
        path: `${path}launch.workgroupSize`,
        message: `${workgroupSize} is not a multiple of the 32-lane warp the body's warp operations (shuffle, reduce, mma) need`,
      });
    }
    let sharedBytes = 0;
    shared.forEach((array, index) => {
      const length = evaluate(array.length, `${path}shared[${index}].length`);
      if (length < 1)
        issues.push({
          path: `${path}shared[${index}].length`,
          message: `evaluates to ${length}; must be at least 1`,
        });
      sharedBytes += length * ELEMENT_BYTES[array.element];
    });
    launch.grid.forEach((axis, index) => bind(axis, `${path}launch.grid[${index}]`));
    const cap = ownField(launch, 'maxRegisters');
    if (cap !== undefined) {
      const registers = evaluate(cap, `${path}launch.maxRegisters`);
      const { min, max } = MAX_REGISTERS_RANGE;
      if (!(registers >= min && registers <= max))
        issues.push({
          path: `${path}launch.maxRegisters`,
          message: `${registers} registers a thread is outside [${min}, ${max}]`,
        });
    }
    if (sharedBytes > limits.maxSharedBytes) {
      issues.push({
        path: `${path}shared`,
        message: `${sharedBytes} bytes exceed the ${limits.maxSharedBytes}-byte limit for ${target}`,
      });
    }
  }
  (ownField(spec, 'scratch') ?? []).forEach((scratch, index) =>
    bind(scratch.length, `scratch[${index}].length`),
  );
  if (issues.length > 0) throw new ValidationError(issues);
  return takeSnapshot(schedule) as Schedule;
}

/**
 * A knob's bounds for one target kind, or undefined when it gives none (an own key only: a kind
 * such as `constructor` must not reach Object.prototype).
 */
export function knobBounds(bounds: ScheduleKnob['bounds'], kind: string): KnobBounds | undefined {
  return bounds !== undefined && Object.hasOwn(bounds, kind) ? bounds[kind] : undefined;
}

const NO_LIMITS = {
  maxWorkgroupSize: Number.POSITIVE_INFINITY,
  maxSharedBytes: Number.POSITIVE_INFINITY,
};

/** `value` as TargetLimits read once; a bare kind has no limits. Anything else is a ValidationError. */
function checkTargetLimits(value: unknown): TargetLimits {
  const kindProblem = (kind: unknown, path: string): ValidationIssue[] =>
    typeof kind === 'string' && TARGET_KIND_PATTERN.test(kind)
      ? []
      : [
          {
            path,
            message: `must be a target kind (${TARGET_KIND_RULE}), got ${describeJson(kind)}`,
          },
        ];
  if (typeof value === 'string') {
    const issues = kindProblem(value, 'target');
    if (issues.length > 0) throw new ValidationError(issues);
    return { kind: value, ...NO_LIMITS };
  }
  const copy = takeSnapshot(value, 'target');
  if (!isRecord(copy))
    throw new ValidationError([
      { path: 'target', message: `must be a target kind or limits, got ${describeJson(copy)}` },
    ]);
  const issues = kindProblem(copy['kind'], 'target.kind');
  for (const field of ['maxWorkgroupSize', 'maxSharedBytes'] as const) {
    const limit = copy[field];
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0)
      issues.push({
        path: `target.${field}`,
        message: `must be a non-negative integer, got ${describeJson(limit)}`,
      });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return copy as unknown as TargetLimits;
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

/** Whether any statement is a warp shuffle, reduction or mma. */
export function usesWarpOps(body: readonly Stmt[]): boolean {
  return body.some((statement) => {
    switch (statement.op) {
      case 'shuffle':
      case 'reduce':
      case 'mma':
        return true;
      case 'if':
        return usesWarpOps(statement.then) || usesWarpOps(statement.else);
      case 'for':
        return usesWarpOps(statement.body);
      case 'let':
      case 'assign':
      case 'store':
      case 'load_vector':
      case 'store_vector':
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
