import { describe, expect, it } from 'vitest';
import { defineKernel, type BodyBuilder, type KernelDeclarations } from './builder.js';
import { ValidationError, type ValidationIssue } from './errors.js';
import * as ir from './expressions.js';
import { getKernel } from './kernels/catalog.js';
import {
  formatSchedule,
  knobBounds,
  parseScheduleAssignments,
  resolveSchedule,
  usesWarpOps,
  type TargetLimits,
} from './schedule.js';
import type { KernelSpec, KnobBounds, ScheduleKnob, SharedDecl } from './spec.js';
import { validateSpec } from './validate.js';

const affine = getKernel('affine-f32').spec;
const rmsnorm = getKernel('rmsnorm').spec;

/** The issues of the ValidationError `run` throws (fails the test when it throws nothing). */
function issuesOf(run: () => unknown): readonly ValidationIssue[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues;
  }
  throw new Error('expected a ValidationError');
}

// Limits as a backend passes them (the real ones live in @forge/ptx and @forge/wgsl).
const PTX: TargetLimits = { kind: 'ptx', maxWorkgroupSize: 1024, maxSharedBytes: 48 * 1024 };
const WGSL: TargetLimits = { kind: 'wgsl', maxWorkgroupSize: 1024, maxSharedBytes: 32 * 1024 };

function knob(name: string, fallback: number, bounds: Partial<KnobBounds> = {}): ScheduleKnob {
  const range = { min: 1, max: 4096, ...bounds };
  return { name, description: name, default: fallback, bounds: { ptx: range, wgsl: range } };
}

function specWith(
  schedule: ScheduleKnob[],
  workgroupSize: string,
  shared: SharedDecl[] = [],
  build: (b: BodyBuilder) => void = (b) => b.store('out', b.localId(), ir.u32(1)),
): KernelSpec {
  const declarations: KernelDeclarations = {
    id: 'unit',
    semanticVersion: 1,
    entryPoint: 'unit',
    description: 'schedule test',
    buffers: [{ group: 0, binding: 0, name: 'out', element: 'u32', access: 'read_write' }],
    params: [],
    shared,
    schedule,
    launch: { workgroupSize, grid: ['1', '1', '1'] },
  };
  return defineKernel(declarations, build);
}

describe('resolveSchedule', () => {
  it('fills in defaults', () => {
    expect(resolveSchedule(rmsnorm, 'ptx')).toEqual({ workgroupSize: 256 });
    expect(resolveSchedule(affine, 'wgsl', {})).toEqual({ workgroupSize: 256 });
  });

  it('applies overrides within bounds', () => {
    expect(resolveSchedule(rmsnorm, 'ptx', { workgroupSize: 128 })).toEqual({ workgroupSize: 128 });
    expect(resolveSchedule(rmsnorm, 'ptx', { workgroupSize: 32 })).toEqual({ workgroupSize: 32 });
    expect(resolveSchedule(rmsnorm, 'ptx', { workgroupSize: 1024 })).toEqual({
      workgroupSize: 1024,
    });
  });

  it.each([
    [0, /0 is outside \[32, 1024\] for ptx/],
    [31, /outside/],
    [1056, /1056 is outside \[32, 1024\] for ptx/],
    [-32, /outside/],
    [64.5, /outside/],
    [Number.NaN, /outside/],
    [48, /48 is not a multiple of 32 for ptx/],
    [100, /not a multiple of 32/],
  ])('rejects workgroupSize %d with the path schedule.workgroupSize', (value, message) => {
    const issues = issuesOf(() => resolveSchedule(rmsnorm, 'ptx', { workgroupSize: value }));
    expect(issues).toEqual([
      { path: 'schedule.workgroupSize', message: expect.stringMatching(message) },
    ]);
  });

  it('checks a register cap once the knobs are bound: within [24, 255]', () => {
    const capped = validateSpec({
      ...affine,
      launch: { ...affine.launch, maxRegisters: 'workgroupSize / 2' },
    });
    expect(resolveSchedule(capped, 'ptx', { workgroupSize: 256 })).toEqual({ workgroupSize: 256 });
    for (const [workgroupSize, registers] of [
      [32, 16],
      [512, 256],
    ] as const)
      expect(issuesOf(() => resolveSchedule(capped, 'ptx', { workgroupSize }))).toEqual([
        {
          path: 'launch.maxRegisters',
          message: `${registers} registers a thread is outside [24, 255]`,
        },
      ]);
  });

  it('checks bounds per target', () => {
    // affine-f32 takes any size in [1, 1024] on WGSL but only multiples of 32 on PTX.
    expect(resolveSchedule(affine, 'wgsl', { workgroupSize: 48 })).toEqual({ workgroupSize: 48 });
    expect(issuesOf(() => resolveSchedule(affine, 'ptx', { workgroupSize: 48 }))[0]?.path).toBe(
      'schedule.workgroupSize',
    );
  });

  it('rejects unknown knobs, reporting every problem at once', () => {
    const issues = issuesOf(() =>
      resolveSchedule(rmsnorm, 'ptx', { blockSize: 128, workgroupSize: 7 }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      'schedule.blockSize',
      'schedule.workgroupSize',
    ]);
    expect(issues[0]?.message).toMatch(/unknown schedule knob \(known: workgroupSize\)/);
  });

  it('treats inherited property names as unknown knobs', () => {
    const overrides = JSON.parse('{"__proto__": 5, "constructor": 3}') as Record<string, number>;
    const issues = issuesOf(() => resolveSchedule(rmsnorm, 'ptx', overrides));
    expect(issues.map((issue) => issue.path)).toEqual([
      'schedule.__proto__',
      'schedule.constructor',
    ]);
  });

  it('enforces powerOfTwo', () => {
    const spec = specWith([knob('size', 64, { powerOfTwo: true })], 'size');
    expect(resolveSchedule(spec, 'ptx', { size: 128 })).toEqual({ size: 128 });
    expect(issuesOf(() => resolveSchedule(spec, 'ptx', { size: 96 }))).toEqual([
      { path: 'schedule.size', message: '96 is not a power of two for ptx' },
    ]);
  });

  it('returns knobs in spec order', () => {
    const spec = specWith([knob('b', 2), knob('a', 4)], 'a * b');
    expect(Object.keys(resolveSchedule(spec, 'ptx', { a: 8, b: 1 }))).toEqual(['b', 'a']);
  });

  it('checks the derived workgroup size against the target limit', () => {
    const spec = specWith([knob('threads', 256)], 'threads * 2');
    expect(resolveSchedule(spec, PTX, { threads: 512 })).toEqual({ threads: 512 });
    expect(issuesOf(() => resolveSchedule(spec, PTX, { threads: 513 }))).toEqual([
      { path: 'launch.workgroupSize', message: '1026 is outside [1, 1024] for ptx' },
    ]);
    // A bare kind checks no hardware limit, only the lower end.
    expect(resolveSchedule(spec, 'ptx', { threads: 513 })).toEqual({ threads: 513 });
  });

  it('requires whole warps when the body uses warp operations', () => {
    const spec = specWith([knob('threads', 64)], 'threads', [], (b) => {
      b.store('out', b.localId(), b.reduce('add', 'total', ir.u32(1)));
    });
    expect(resolveSchedule(spec, 'wgsl', { threads: 96 })).toEqual({ threads: 96 });
    const issues = issuesOf(() => resolveSchedule(spec, 'wgsl', { threads: 48 }));
    expect(issues).toEqual([
      {
        path: 'launch.workgroupSize',
        message: expect.stringMatching(/not a multiple of the 32-lane warp/),
      },
    ]);
    // Without warp operations any size is fine.
    expect(
      resolveSchedule(specWith([knob('threads', 64)], 'threads'), 'wgsl', { threads: 48 }),
    ).toEqual({
      threads: 48,
    });
  });

  it('checks shared memory against each target limit', () => {
    const spec = specWith([knob('elements', 1024, { max: 1 << 20 })], '32', [
      { name: 'tile', element: 'f32', length: 'elements' },
    ]);
    const fits = (target: TargetLimits, elements: number): boolean => {
      try {
        resolveSchedule(spec, target, { elements });
        return true;
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).path).toBe('shared');
        return false;
      }
    };
    expect(fits(PTX, PTX.maxSharedBytes / 4)).toBe(true);
    expect(fits(PTX, PTX.maxSharedBytes / 4 + 1)).toBe(false);
    expect(fits(WGSL, WGSL.maxSharedBytes / 4)).toBe(true);
    expect(fits(WGSL, WGSL.maxSharedBytes / 4 + 1)).toBe(false);
    expect(fits(PTX, 12_000)).toBe(true);
    expect(fits(WGSL, 12_000)).toBe(false);
    // A new backend's limits apply to a kind no knob has bounds for.
    expect(fits({ kind: 'metal', maxWorkgroupSize: 1024, maxSharedBytes: 4096 }, 1024)).toBe(true);
    expect(fits({ kind: 'metal', maxWorkgroupSize: 1024, maxSharedBytes: 4096 }, 1025)).toBe(false);
  });

  it('rejects a shared array whose length evaluates to zero', () => {
    const spec = specWith([knob('threads', 64)], 'threads', [
      { name: 'partial', element: 'f32', length: 'threads / 64' },
    ]);
    expect(resolveSchedule(spec, 'ptx', { threads: 64 })).toEqual({ threads: 64 });
    expect(issuesOf(() => resolveSchedule(spec, 'ptx', { threads: 32 }))).toEqual([
      { path: 'shared[0].length', message: 'evaluates to 0; must be at least 1' },
    ]);
  });

  it('reports size expressions that fault at the chosen knob values with their paths', () => {
    const spec = specWith([knob('threads', 64)], 'threads - 64 + 32', [
      { name: 'partial', element: 'f32', length: 'threads / (threads - 64)' },
    ]);
    expect(resolveSchedule(spec, 'ptx', { threads: 96 })).toEqual({ threads: 96 });
    expect(issuesOf(() => resolveSchedule(spec, 'ptx', { threads: 32 }))).toEqual([
      { path: 'launch.workgroupSize', message: '32 - 64 is negative' },
      { path: 'shared[0].length', message: '32 - 64 is negative' },
    ]);
    expect(issuesOf(() => resolveSchedule(spec, 'ptx', { threads: 64 }))).toEqual([
      { path: 'shared[0].length', message: 'division of 64 by zero' },
    ]);
  });
});

describe('resolveSchedule on a target kind without bounds', () => {
  const metal: TargetLimits = { kind: 'metal', maxWorkgroupSize: 512, maxSharedBytes: 16 * 1024 };

  it('takes any value the basic rule and the backend limits allow', () => {
    // rmsnorm's knob has ptx and wgsl bounds (32 to 1024, multiples of 32) and none for metal.
    expect(resolveSchedule(rmsnorm, metal, { workgroupSize: 64 })).toEqual({ workgroupSize: 64 });
    expect(resolveSchedule(affine, metal, { workgroupSize: 7 })).toEqual({ workgroupSize: 7 });
    expect(issuesOf(() => resolveSchedule(affine, metal, { workgroupSize: 513 }))).toEqual([
      { path: 'launch.workgroupSize', message: '513 is outside [1, 512] for metal' },
    ]);
    // The body's own rule still holds: rmsnorm reduces across warps.
    expect(issuesOf(() => resolveSchedule(rmsnorm, metal, { workgroupSize: 48 }))).toEqual([
      {
        path: 'launch.workgroupSize',
        message: expect.stringMatching(/48 is not a multiple of the 32-lane warp/),
      },
    ]);
  });

  it('checks bounds for the kinds a knob gives and ignores the others', () => {
    const only = { ...knob('threads', 64), bounds: { ptx: { min: 32, max: 128 } } };
    const spec = specWith([only], 'threads');
    expect(issuesOf(() => resolveSchedule(spec, PTX, { threads: 256 }))).toEqual([
      { path: 'schedule.threads', message: '256 is outside [32, 128] for ptx' },
    ]);
    expect(resolveSchedule(spec, WGSL, { threads: 256 })).toEqual({ threads: 256 });
    const bare = specWith([{ name: 'threads', description: 'threads', default: 64 }], 'threads');
    expect(resolveSchedule(bare, PTX, { threads: 1000 })).toEqual({ threads: 1000 });
  });

  it('reads only own keys of bounds, so constructor is a kind without bounds', () => {
    expect(knobBounds({ ptx: { min: 1, max: 2 } }, 'constructor')).toBeUndefined();
    expect(knobBounds(undefined, 'ptx')).toBeUndefined();
    expect(resolveSchedule(affine, 'constructor', { workgroupSize: 5 })).toEqual({
      workgroupSize: 5,
    });
  });

  it.each([
    ['Ptx', 'target'],
    ['', 'target'],
    ['__proto__', 'target'],
  ])('rejects the kind %j at %s', (kind, path) => {
    const issues = issuesOf(() => resolveSchedule(affine, kind));
    expect(issues).toEqual([{ path, message: expect.stringMatching(/^must be a target kind/) }]);
  });

  it('rejects malformed limits naming the field', () => {
    const bad = {
      kind: 'ptx',
      maxWorkgroupSize: -1,
      maxSharedBytes: '4',
    } as unknown as TargetLimits;
    expect(issuesOf(() => resolveSchedule(affine, bad)).map((issue) => issue.path)).toEqual([
      'target.maxWorkgroupSize',
      'target.maxSharedBytes',
    ]);
    const badKind = { ...PTX, kind: 'P T X' };
    expect(issuesOf(() => resolveSchedule(affine, badKind))[0]?.path).toBe('target.kind');
  });
});

describe('parseScheduleAssignments', () => {
  it('parses key=value pairs', () => {
    expect(parseScheduleAssignments(['workgroupSize=128', 'split_k=4'])).toEqual({
      workgroupSize: 128,
      split_k: 4,
    });
    expect(parseScheduleAssignments([])).toEqual({});
  });

  it('keeps __proto__ and constructor as knob names, which resolveSchedule then rejects', () => {
    const schedule = parseScheduleAssignments(['__proto__=1', 'constructor=2']);
    expect(Object.keys(schedule)).toEqual(['__proto__', 'constructor']);
    expect(issuesOf(() => resolveSchedule(rmsnorm, 'ptx', schedule))).toEqual([
      { path: 'schedule.__proto__', message: 'unknown schedule knob (known: workgroupSize)' },
      { path: 'schedule.constructor', message: 'unknown schedule knob (known: workgroupSize)' },
    ]);
  });

  it('lets a later assignment win', () => {
    expect(parseScheduleAssignments(['a=1', 'a=2'])).toEqual({ a: 2 });
  });

  it.each([
    'workgroupSize',
    'workgroupSize=',
    '=128',
    'workgroupSize=-1',
    'a=b',
    'a=1.5',
    'a=1234567890',
    'a b=1',
    ' a=1',
    '1a=2',
  ])('rejects %j with the path schedule', (assignment) => {
    const issues = issuesOf(() => parseScheduleAssignments([assignment]));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('schedule');
    expect(issues[0]?.message).toContain(`'${assignment}'`);
  });
});

describe('formatSchedule and usesWarpOps', () => {
  it('formats a schedule with sorted keys', () => {
    expect(formatSchedule({ workgroupSize: 256 })).toBe('workgroupSize=256');
    expect(formatSchedule({ b: 1, a: 2, c: 3 })).toBe('a=2,b=1,c=3');
    expect(formatSchedule({})).toBe('');
  });

  it('finds warp operations anywhere in the body', () => {
    expect(usesWarpOps(rmsnorm.body)).toBe(true);
    expect(usesWarpOps(affine.body)).toBe(false);
    const nested = specWith([], '32', [], (b) => {
      b.for('i', { start: ir.u32(0), end: ir.u32(2), step: ir.u32(1) }, (loop) => {
        loop.if(
          ir.bool(true),
          () => undefined,
          (otherwise) => {
            otherwise.shuffle('xor', 'other', ir.u32(1), ir.u32(1));
          },
        );
      });
    });
    expect(usesWarpOps(nested.body)).toBe(true);
  });
});
