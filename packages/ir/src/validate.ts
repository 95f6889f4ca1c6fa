import { ValidationError, type ValidationIssue } from './errors.js';
import { KERNEL_ID_PATTERN, entryPointProblem, identifierProblem } from './identifiers.js';
import { memoizeSealed } from './sealed.js';
import { snapshotJson } from './snapshot.js';
import { IssueCollector, describeJson, isRecord, joinPath, type JsonRecord } from './json-shape.js';
import {
  bindSizeExpression,
  parseSizeExpression,
  sizeExpressionNames,
  type SizeExpression,
} from './size-expression.js';
import {
  BUFFER_ACCESSES,
  TARGET_KIND_PATTERN,
  TARGET_KIND_RULE,
  type BufferAccess,
  type KernelSpec,
} from './spec.js';
import { checkBody, type BodyContext } from './typecheck.js';
import { constantFaults } from './constant-faults.js';
import type { Stmt } from './body.js';
import { ELEMENT_TYPES, PARAM_TYPES, type ScalarType } from './types.js';

const SPEC_FIELDS = [
  'id',
  'semanticVersion',
  'entryPoint',
  'description',
  'buffers',
  'params',
  'shared',
  'schedule',
  'launch',
  'body',
];
// Absent means a single dispatch without scratch; present, they are checked like the rest.
const OPTIONAL_FIELDS = ['scratch', 'stages'];
const STAGE_FIELDS = ['entryPoint', 'shared', 'launch', 'body'];
const MAX_DESCRIPTION = 300;
// WebGPU's maxBindingsPerBindGroup is 1000, so bindings run 0..999 (the params struct takes one).
const MAX_BINDING = 999;
// WebGPU's default maxStorageBuffersPerShaderStage: a kernel must run on any conforming device.
const MAX_STORAGE_BUFFERS = 8;
// ptxas's kernel parameter space (0x1100 bytes); buffers are u64 addresses, scalars 4 bytes.
const MAX_PTX_PARAM_BYTES = 4352;
const MAX_KNOB = 1 << 20;
/** Descriptions are printed into comments, so they must stay on one line of printable text. */
const PRINTABLE = /^[\x20-\x7e]*$/;

/** Every problem of `value` as a KernelSpec, each with its JSON path; empty when valid. */
export function checkSpec(value: unknown): ValidationIssue[] {
  const snapshot = snapshotJson(value);
  if (snapshot.issues.length > 0) return [...snapshot.issues];
  return [...analyzeSpec(snapshot.value).issues];
}

/**
 * Paths of the warp operations (shuffle, reduce) of a valid spec that sit in control flow uniform
 * across their warp but not across the workgroup; backends that emulate warps with barriers need to know.
 */
export function warpOpsInDivergentFlow(spec: KernelSpec): string[] {
  return [...analyzeSpec(validateSpec(spec)).warpUniformOnly];
}

// Only snapshots are analyzed, each once; callers get copies of the cached lists.
const analyzeSpec = memoizeSealed(analyze);

function analyze(value: unknown): { issues: ValidationIssue[]; warpUniformOnly: string[] } {
  const issues = new IssueCollector();
  const done = () => ({ issues: issues.issues, warpUniformOnly: [] });
  const spec = issues.record(value, '', [...SPEC_FIELDS, ...OPTIONAL_FIELDS]);
  if (spec === undefined) return done();
  for (const key of SPEC_FIELDS) if (!(key in spec)) issues.add(key, 'is required');

  if (typeof spec['id'] !== 'string' || !KERNEL_ID_PATTERN.test(spec['id'])) {
    issues.add(
      'id',
      `must be lowercase letters and digits joined by '-' or '_', got ${describeJson(spec['id'])}`,
    );
  }
  issues.integer(spec['semanticVersion'], 'semanticVersion', 1, 1_000_000);
  const entryProblem = entryPointProblem(spec['entryPoint']);
  if (entryProblem !== undefined) issues.add('entryPoint', entryProblem);
  const description = spec['description'];
  if (
    typeof description !== 'string' ||
    !PRINTABLE.test(description) ||
    description.length > MAX_DESCRIPTION
  ) {
    issues.add(
      'description',
      `must be one line of printable ASCII, at most ${MAX_DESCRIPTION} characters`,
    );
  }

  const names = new Map<string, string>();
  const claim = (name: unknown, path: string): name is string => {
    const problem = identifierProblem(name);
    if (problem !== undefined) {
      issues.add(path, problem);
      return false;
    }
    const previous = names.get(name as string);
    if (previous !== undefined) {
      issues.add(path, `'${String(name)}' is already declared at ${previous}`);
      return false;
    }
    names.set(name as string, path);
    return true;
  };

  const knobs = checkSchedule(spec['schedule'], issues, claim);
  const buffers = new Map<string, { element: ScalarType; access: BufferAccess }>();
  const bindings = new Set<string>();
  const claimBinding = (group: number | undefined, binding: number | undefined, path: string) => {
    if (group === undefined || binding === undefined) return;
    const key = `${group}:${binding}`;
    if (bindings.has(key))
      issues.add(joinPath(path, 'binding'), `group ${group} binding ${binding} is used twice`);
    bindings.add(key);
  };
  eachRecord(
    issues,
    spec['buffers'],
    'buffers',
    ['group', 'binding', 'name', 'element', 'access'],
    (buffer, path) => {
      const group = issues.integer(buffer['group'], joinPath(path, 'group'), 0, 3);
      const binding = issues.integer(buffer['binding'], joinPath(path, 'binding'), 0, MAX_BINDING);
      const element = issues.oneOf(buffer['element'], joinPath(path, 'element'), ELEMENT_TYPES);
      const access = issues.oneOf(buffer['access'], joinPath(path, 'access'), BUFFER_ACCESSES);
      claimBinding(group, binding, path);
      if (
        claim(buffer['name'], joinPath(path, 'name')) &&
        element !== undefined &&
        access !== undefined
      ) {
        buffers.set(buffer['name'], { element, access });
      }
    },
  );
  const params = new Map<string, ScalarType>();
  eachRecord(issues, spec['params'], 'params', ['name', 'type'], (param, path) => {
    const type = issues.oneOf(param['type'], joinPath(path, 'type'), PARAM_TYPES);
    if (claim(param['name'], joinPath(path, 'name')) && type !== undefined)
      params.set(param['name'], type);
  });
  const u32Params = new Set([...params].filter(([, type]) => type === 'u32').map(([n]) => n));
  const sizeNames = new Set([...knobs, ...u32Params]);
  if (spec['scratch'] !== undefined)
    eachRecord(issues, spec['scratch'], 'scratch', SCRATCH_FIELDS, (scratch, path) => {
      const group = issues.integer(scratch['group'], joinPath(path, 'group'), 0, 3);
      const binding = issues.integer(scratch['binding'], joinPath(path, 'binding'), 0, MAX_BINDING);
      const element = issues.oneOf(scratch['element'], joinPath(path, 'element'), ELEMENT_TYPES);
      claimBinding(group, binding, path);
      checkSizeExpression(scratch['length'], joinPath(path, 'length'), sizeNames, issues);
      if (claim(scratch['name'], joinPath(path, 'name')) && element !== undefined)
        buffers.set(scratch['name'], { element, access: 'read_write' });
    });
  checkBindingLimits(spec, bindings, params.size > 0, issues);
  // Every dispatch sees these; shared arrays are each dispatch's own.
  const globalNames = new Map(names);
  const dispatches: Dispatch[] = [{ path: '', record: spec }];
  const entryPoints = new Map<string, string>();
  if (typeof spec['entryPoint'] === 'string') entryPoints.set(spec['entryPoint'], 'entryPoint');
  if (spec['stages'] !== undefined)
    eachRecord(issues, spec['stages'], 'stages', STAGE_FIELDS, (stage, path) => {
      for (const key of STAGE_FIELDS)
        if (!(key in stage)) issues.add(joinPath(path, key), 'is required');
      const at = joinPath(path, 'entryPoint');
      const problem = entryPointProblem(stage['entryPoint']);
      if (problem !== undefined) issues.add(at, problem);
      else {
        const previous = entryPoints.get(stage['entryPoint'] as string);
        if (previous !== undefined)
          issues.add(
            at,
            `'${String(stage['entryPoint'])}' is already the entry point at ${previous}`,
          );
        entryPoints.set(stage['entryPoint'] as string, at);
      }
      dispatches.push({ path, record: stage });
    });

  const contexts = dispatches.map(({ path, record }) => {
    names.clear();
    for (const [name, at] of globalNames) names.set(name, at);
    const shared = new Map<string, ScalarType>();
    const sharedPath = joinPath(path, 'shared');
    eachRecord(issues, record['shared'], sharedPath, ['name', 'element', 'length'], (array, at) => {
      const element = issues.oneOf(array['element'], joinPath(at, 'element'), ELEMENT_TYPES);
      checkSizeExpression(array['length'], joinPath(at, 'length'), knobs, issues);
      if (claim(array['name'], joinPath(at, 'name')) && element !== undefined)
        shared.set(array['name'], element);
    });
    checkLaunch(record['launch'], joinPath(path, 'launch'), knobs, sizeNames, issues);
    const context: BodyContext = {
      params,
      knobs,
      buffers,
      shared,
      reserved: new Set(names.keys()),
    };
    return context;
  });

  if (issues.issues.length > 0) return done();
  const warpUniformOnly: string[] = [];
  dispatches.forEach(({ path, record }, index) => {
    const bodyPath = joinPath(path, 'body');
    const context = contexts[index] as BodyContext;
    warpUniformOnly.push(...checkBody(record['body'], bodyPath, context, issues));
  });
  if (issues.issues.length > 0) return done();
  // Faults constant on their own; bindConstants finds those that need the schedule's values.
  for (const { path, record } of dispatches) {
    const body = record['body'] as readonly Stmt[];
    for (const issue of constantFaults(body, joinPath(path, 'body'), constantLengths(record)))
      issues.add(issue.path, issue.message);
  }
  return { issues: issues.issues, warpUniformOnly };
}

const SCRATCH_FIELDS = ['group', 'binding', 'name', 'element', 'length'];

/** A dispatch's record (the spec itself, or a stage) and its JSON path ('' for the spec). */
interface Dispatch {
  readonly path: string;
  readonly record: JsonRecord;
}

function checkLaunch(
  value: unknown,
  path: string,
  knobs: ReadonlySet<string>,
  sizeNames: ReadonlySet<string>,
  issues: IssueCollector,
): void {
  const launch = issues.record(value, path, ['workgroupSize', 'grid', 'maxRegisters']);
  if (launch === undefined) return;
  checkSizeExpression(launch['workgroupSize'], joinPath(path, 'workgroupSize'), knobs, issues);
  // Its value's range is checked where the schedule is bound (resolveSchedule).
  if (Object.hasOwn(launch, 'maxRegisters'))
    checkSizeExpression(launch['maxRegisters'], joinPath(path, 'maxRegisters'), knobs, issues);
  const gridPath = joinPath(path, 'grid');
  const grid = issues.array(launch['grid'], gridPath);
  if (grid !== undefined && grid.length !== 3)
    issues.add(gridPath, `must have 3 entries (x, y, z), got ${grid.length}`);
  grid?.forEach((axis, index) =>
    checkSizeExpression(axis, joinPath(gridPath, index), sizeNames, issues),
  );
}

/**
 * The checked snapshot of `value` (see snapshotJson: each property read once, deep-frozen, no
 * shared sub-objects), or a ValidationError listing every problem. Everything downstream reads the
 * snapshot, never the caller's object again; a snapshot given back is returned at once.
 */
export function validateSpec(value: unknown): KernelSpec {
  const snapshot = snapshotJson(value);
  if (snapshot.issues.length > 0) throw new ValidationError(snapshot.issues);
  const { issues } = analyzeSpec(snapshot.value);
  if (issues.length > 0) throw new ValidationError(issues);
  return snapshot.value as KernelSpec;
}

/** Lengths of the shared arrays whose length needs no schedule knob. */
function constantLengths(spec: JsonRecord): Map<string, number> {
  const lengths = new Map<string, number>();
  for (const array of spec['shared'] as readonly JsonRecord[]) {
    const parsed = bindSizeExpression(parseSizeExpression(array['length'] as string), {});
    if (parsed.kind === 'number') lengths.set(array['name'] as string, parsed.value);
  }
  return lengths;
}

/** WebGPU's default binding limits and ptxas's parameter space, for a spec whose buffers parsed. */
function checkBindingLimits(
  spec: JsonRecord,
  bindings: ReadonlySet<string>,
  hasParams: boolean,
  issues: IssueCollector,
): void {
  const scratch = Array.isArray(spec['scratch']) ? spec['scratch'].length : 0;
  const buffers = (Array.isArray(spec['buffers']) ? spec['buffers'].length : 0) + scratch;
  const scalars = Array.isArray(spec['params']) ? spec['params'].length : 0;
  if (buffers > MAX_STORAGE_BUFFERS)
    issues.add(
      'buffers',
      `${buffers} storage buffers${scratch > 0 ? ` (${scratch} of them scratch)` : ''} exceed WebGPU's default maxStorageBuffersPerShaderStage (${MAX_STORAGE_BUFFERS})`,
    );
  const bytes = 8 * buffers + 4 * scalars;
  if (bytes > MAX_PTX_PARAM_BYTES)
    issues.add(
      'params',
      `${buffers} buffers and ${scalars} params take ${bytes} bytes of PTX parameter space, over ptxas's ${MAX_PTX_PARAM_BYTES}`,
    );
  // The WGSL backend binds the params struct in group 0 after the highest buffer binding there.
  if (hasParams && bindings.has(`0:${MAX_BINDING}`)) {
    const index = (spec['buffers'] as readonly JsonRecord[]).findIndex(
      (buffer) => buffer['group'] === 0 && buffer['binding'] === MAX_BINDING,
    );
    issues.add(
      `buffers[${index}].binding`,
      `group 0 binding ${MAX_BINDING} leaves no binding below 1000 for the params struct`,
    );
  }
}

function eachRecord(
  issues: IssueCollector,
  value: unknown,
  path: string,
  fields: readonly string[],
  visit: (record: JsonRecord, path: string) => void,
): void {
  issues.array(value, path)?.forEach((item, index) => {
    const record = issues.record(item, joinPath(path, index), fields);
    if (record !== undefined) visit(record, joinPath(path, index));
  });
}

function checkSchedule(
  value: unknown,
  issues: IssueCollector,
  claim: (name: unknown, path: string) => boolean,
): Set<string> {
  const knobs = new Set<string>();
  eachRecord(
    issues,
    value,
    'schedule',
    ['name', 'description', 'default', 'bounds'],
    (knob, path) => {
      if (typeof knob['description'] !== 'string' || !PRINTABLE.test(knob['description'])) {
        issues.add(joinPath(path, 'description'), 'must be one line of printable ASCII');
      }
      const fallback = issues.integer(knob['default'], joinPath(path, 'default'), 1, MAX_KNOB);
      // Optional, and so is every target kind in it: a kind without bounds takes any value above.
      if (knob['bounds'] !== undefined) checkBounds(knob['bounds'], path, fallback, issues);
      if (claim(knob['name'], joinPath(path, 'name'))) knobs.add(knob['name'] as string);
    },
  );
  return knobs;
}

/** A knob's `bounds`: a record from target kind to KnobBounds, each admitting the default. */
function checkBounds(
  value: unknown,
  path: string,
  fallback: number | undefined,
  issues: IssueCollector,
): void {
  const at = joinPath(path, 'bounds');
  if (!isRecord(value)) {
    issues.add(at, `must be an object from target kind to bounds, got ${describeJson(value)}`);
    return;
  }
  for (const [target, rangeValue] of Object.entries(value)) {
    if (!TARGET_KIND_PATTERN.test(target)) {
      issues.add(joinPath(at, target), `is not a target kind (${TARGET_KIND_RULE})`);
      continue;
    }
    const where = joinPath(at, target);
    const range = issues.record(rangeValue, where, ['min', 'max', 'multipleOf', 'powerOfTwo']);
    if (range === undefined) continue;
    const min = issues.integer(range['min'], joinPath(where, 'min'), 1, MAX_KNOB);
    const max = issues.integer(range['max'], joinPath(where, 'max'), 1, MAX_KNOB);
    const multipleOf =
      range['multipleOf'] === undefined
        ? undefined
        : issues.integer(range['multipleOf'], joinPath(where, 'multipleOf'), 1, MAX_KNOB);
    if (range['powerOfTwo'] !== undefined && typeof range['powerOfTwo'] !== 'boolean') {
      issues.add(joinPath(where, 'powerOfTwo'), 'must be true or false');
    }
    if (min !== undefined && max !== undefined && min > max)
      issues.add(where, `min ${min} exceeds max ${max}`);
    if (fallback === undefined) continue;
    const defaultPath = joinPath(path, 'default');
    if (min !== undefined && max !== undefined && (fallback < min || fallback > max)) {
      issues.add(defaultPath, `${fallback} is outside the ${target} bounds [${min}, ${max}]`);
    }
    // resolveSchedule applies these to every value, the default included.
    if (multipleOf !== undefined && fallback % multipleOf !== 0) {
      issues.add(defaultPath, `${fallback} is not a multiple of ${multipleOf} for ${target}`);
    }
    if (range['powerOfTwo'] === true && (fallback & (fallback - 1)) !== 0) {
      issues.add(defaultPath, `${fallback} is not a power of two for ${target}`);
    }
  }
}

function checkSizeExpression(
  value: unknown,
  path: string,
  names: ReadonlySet<string>,
  issues: IssueCollector,
): SizeExpression | undefined {
  if (typeof value !== 'string') {
    issues.add(path, `must be a size expression string, got ${describeJson(value)}`);
    return undefined;
  }
  let parsed: SizeExpression;
  try {
    parsed = parseSizeExpression(value);
    // Folding the constant parts finds a literal product or sum past the u32 range now.
    bindSizeExpression(parsed, {});
  } catch (error) {
    issues.add(path, (error as Error).message);
    return undefined;
  }
  const unknown = sizeExpressionNames(parsed).filter((name) => !names.has(name));
  if (unknown.length > 0)
    issues.add(
      path,
      `refers to unknown name(s) ${unknown.join(', ')} (allowed: ${[...names].join(', ') || 'none'})`,
    );
  return parsed;
}
