import { ExecutionError, ValidationError } from '../errors.js';
import { takeSnapshot } from '../snapshot.js';
import { evaluateSizeExpression } from '../size-expression.js';
import type { KernelSpec, Schedule } from '../spec.js';
import { checkFirstDispatch, isMultiDispatch, kernelDispatches } from '../dispatch.js';
import type { Frame, Scope } from './compile-expr.js';
import { compileBlock, type Block } from './compile-stmt.js';
import { Memory, allocateElements, allocatePoisoned, type ElementArray } from './memory.js';
import { resolveWarps, type Running, type Thread } from './warp.js';
import { roundTo, type Value } from './scalar-ops.js';

/**
 * The inputs of one `interpret` run: every param and every buffer by name (`read_write` buffers
 * receive the results), and optionally the schedule and the grid.
 */
export interface InterpretOptions {
  /** Complete schedule (see resolveSchedule); knobs left out take their defaults. */
  readonly schedule?: Schedule;
  readonly params: Readonly<Record<string, number>>;
  /** One typed array per buffer: Float32Array (f32), Uint32Array (u32), Int32Array (i32), Uint16Array (f16 bits). */
  readonly buffers: Readonly<Record<string, ElementArray>>;
  /** Defaults to the spec's launch grid evaluated with params and schedule; single dispatch only. */
  readonly grid?: readonly [number, number, number];
  /**
   * A multi-dispatch kernel's grids, dispatch by dispatch (undefined: the dispatch's own), e.g. to
   * run its grid-stride loops on fewer workgroups.
   */
  readonly dispatchGrids?: readonly (readonly [number, number, number] | undefined)[];
  /**
   * Arrays for scratch buffers by name, e.g. to inspect them afterwards; a scratch buffer left out
   * is allocated at its length and filled with poison (NaN, or all ones for integers), so a read
   * before a write shows.
   */
  readonly scratch?: Readonly<Record<string, ElementArray>>;
  /**
   * The first dispatch of a multi-dispatch kernel to run (0 when omitted): the ones before it are
   * skipped, their results already in `scratch` (a launch reusing another's quantized x).
   */
  readonly firstDispatch?: number;
}

/**
 * What an `interpret` run executed: workgroups, threads (workgroups × workgroup size) and barrier
 * releases summed over all workgroups.
 */
export interface InterpretResult {
  readonly workgroups: number;
  readonly threads: number;
  readonly barriers: number;
}

/**
 * Executes a kernel body on the CPU with workgroup semantics: every thread of a workgroup runs
 * until it reaches a barrier or a warp operation; barriers release when all threads arrive, warp
 * operations when all 32 lanes of the warp arrive. Writes results into `options.buffers`. A
 * multi-dispatch kernel (validated first) runs each dispatch in order over the same buffers and
 * scratch; the counts are summed over the dispatches.
 */
export function interpret(specInput: KernelSpec, options: InterpretOptions): InterpretResult {
  // Read once into a snapshot but not validated: tests run invalid specs to see the faults.
  const spec = takeSnapshot(specInput) as KernelSpec;
  if (!isMultiDispatch(spec)) {
    if ((options.firstDispatch ?? 0) !== 0)
      throw new ValidationError([
        { path: 'firstDispatch', message: 'a single-dispatch kernel has only dispatch 0' },
      ]);
    if (options.dispatchGrids !== undefined)
      throw new ValidationError([
        { path: 'dispatchGrids', message: 'a single-dispatch kernel takes `grid`' },
      ]);
    return interpretDispatch(spec, options);
  }
  if (options.grid !== undefined)
    throw new ValidationError([
      { path: 'grid', message: 'cannot override the grid of a multi-dispatch kernel' },
    ]);
  const views = kernelDispatches(spec);
  const firstDispatch = options.firstDispatch ?? 0;
  checkFirstDispatch(firstDispatch, views.length);
  const sizes: Record<string, number> = { ...options.params };
  for (const knob of spec.schedule)
    sizes[knob.name] = options.schedule?.[knob.name] ?? knob.default;
  const scratch: Record<string, ElementArray> = {};
  for (const buffer of spec.scratch ?? []) {
    scratch[buffer.name] =
      options.scratch?.[buffer.name] ??
      allocatePoisoned(buffer.element, evaluateSizeExpression(buffer.length, sizes));
  }
  const buffers = { ...options.buffers, ...scratch };
  const total = { workgroups: 0, threads: 0, barriers: 0 };
  for (const [index, view] of views.entries()) {
    if (index < firstDispatch) continue;
    const grid = options.dispatchGrids?.[index];
    const result = interpretDispatch(view, { ...options, buffers, ...(grid === undefined ? {} : { grid }) }); // prettier-ignore
    total.workgroups += result.workgroups;
    total.threads += result.threads;
    total.barriers += result.barriers;
  }
  return total;
}

function interpretDispatch(spec: KernelSpec, options: InterpretOptions): InterpretResult {
  const schedule: Record<string, number> = {};
  for (const knob of spec.schedule)
    schedule[knob.name] = options.schedule?.[knob.name] ?? knob.default;
  const params = new Map<string, number>();
  for (const param of spec.params) {
    const value = options.params[param.name];
    if (value === undefined || !Number.isFinite(value)) {
      throw new ValidationError([
        { path: `params.${param.name}`, message: 'is missing or not a finite number' },
      ]);
    }
    params.set(param.name, param.type === 'f32' ? Math.fround(value) : roundTo(param.type, value));
  }
  const global = new Map<string, Memory>();
  for (const buffer of spec.buffers) {
    const data = options.buffers[buffer.name];
    if (data === undefined)
      throw new ValidationError([{ path: `buffers.${buffer.name}`, message: 'is missing' }]);
    global.set(buffer.name, new Memory(buffer.name, buffer.element, data));
  }
  const sizes = { ...Object.fromEntries(params), ...schedule };
  const workgroupSize = evaluateSizeExpression(spec.launch.workgroupSize, schedule);
  const grid =
    options.grid ??
    (spec.launch.grid.map((axis) => evaluateSizeExpression(axis, sizes)) as [
      number,
      number,
      number,
    ]);
  let barriers = 0;
  // Compiled at the first workgroup, so a dispatch without workgroups evaluates nothing.
  let compiled: { body: Block; scope: Scope; shared: Memory[] } | undefined;
  const frame: Frame = { workgroupId: [0, 0, 0], grid, workgroupSize };
  for (let z = 0; z < grid[2]; z++) {
    for (let y = 0; y < grid[1]; y++) {
      for (let x = 0; x < grid[0]; x++) {
        frame.workgroupId[0] = x;
        frame.workgroupId[1] = y;
        frame.workgroupId[2] = z;
        if (compiled === undefined) {
          compiled = compileDispatch(spec, global, params, schedule, frame);
        } else {
          // Each workgroup's shared memory starts zeroed.
          for (const memory of compiled.shared) memory.data.fill(0);
        }
        barriers += runWorkgroup(compiled.body, compiled.scope.slots.size, frame);
      }
    }
  }
  const workgroups = grid[0] * grid[1] * grid[2];
  return { workgroups, threads: workgroups * workgroupSize, barriers };
}

function compileDispatch(
  spec: KernelSpec,
  global: ReadonlyMap<string, Memory>,
  params: ReadonlyMap<string, number>,
  schedule: Readonly<Record<string, number>>,
  frame: Frame,
): { body: Block; scope: Scope; shared: Memory[] } {
  const memories = new Map(global);
  const shared: Memory[] = [];
  for (const array of spec.shared) {
    const length = evaluateSizeExpression(array.length, schedule);
    const memory = new Memory(array.name, array.element, allocateElements(array.element, length));
    memories.set(array.name, memory);
    shared.push(memory);
  }
  const scope: Scope = { params, schedule, memories, frame, slots: new Map() };
  return { body: compileBlock(spec.body, scope), scope, shared };
}

function runWorkgroup(body: Block, slotCount: number, frame: Frame): number {
  const newThread = (localId: number): Thread => ({
    localId,
    locals: new Array<Value | undefined>(slotCount).fill(undefined),
  });
  if (!body.yields) {
    // Nothing suspends a thread: each runs to its end in turn, as the scheduler would run them.
    for (let localId = 0; localId < frame.workgroupSize; localId++) body.run(newThread(localId));
    return 0;
  }
  const threads: Running[] = [];
  for (let localId = 0; localId < frame.workgroupSize; localId++) {
    const thread = newThread(localId);
    threads.push({ thread, steps: body.run(thread), waiting: undefined, resume: [], done: false });
  }
  let barriers = 0;
  for (;;) {
    for (const running of threads) {
      if (running.done || running.waiting !== undefined) continue;
      const step = running.steps.next(running.resume);
      if (step.done === true) running.done = true;
      else running.waiting = step.value;
    }
    if (threads.every((running) => running.done)) return barriers;
    if (resolveWarps(threads)) continue;
    const waiting = threads.filter((running) => !running.done);
    const first = waiting[0]?.waiting;
    if (
      first?.kind === 'barrier' &&
      waiting.every((running) => running.waiting?.statement === first.statement)
    ) {
      if (waiting.length !== threads.length) {
        throw new ExecutionError(
          `divergent barrier in workgroup ${frame.workgroupId.join(',')}: ${threads.length - waiting.length} thread(s) finished while ${waiting.length} wait`,
        );
      }
      for (const running of waiting) running.waiting = undefined;
      barriers++;
      continue;
    }
    const kinds = new Set(
      waiting.map((running) =>
        running.waiting?.kind === 'barrier'
          ? 'a barrier'
          : `a warp ${running.waiting?.statement.op}`,
      ),
    );
    throw new ExecutionError(
      `deadlock in workgroup ${frame.workgroupId.join(',')}: threads wait at ${[...kinds].join(' and ')} that not all of their peers reach`,
    );
  }
}
