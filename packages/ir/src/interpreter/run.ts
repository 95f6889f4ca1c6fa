import { WARP_SIZE, type Expr, type Stmt } from '../body.js';
import { ExecutionError, ValidationError } from '../errors.js';
import { f16FromBits, packHalfBits } from '../f16.js';
import { assertNever, isBinaryExpr, isUnaryExpr } from '../ops.js';
import { takeSnapshot } from '../snapshot.js';
import { evaluateSizeExpression } from '../size-expression.js';
import type { KernelSpec, Schedule } from '../spec.js';
import { isMultiDispatch, kernelDispatches } from '../dispatch.js';
import { Memory, allocateElements, allocatePoisoned, type ElementArray } from './memory.js';
import { resolveWarps, type Event, type Resume, type Running, type Thread } from './warp.js';
import {
  BINARY_SEMANTICS,
  UNARY_SEMANTICS,
  bitcastValue,
  convertValue,
  dot4I8Semantics,
  funnelShiftRightSemantics,
  bitSelectSemantics,
  fmaSemantics,
  roundTo,
  type Value,
} from './scalar-ops.js';

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
   * Arrays for scratch buffers by name, e.g. to inspect them afterwards; a scratch buffer left out
   * is allocated at its length and filled with poison (NaN, or all ones for integers), so a read
   * before a write shows.
   */
  readonly scratch?: Readonly<Record<string, ElementArray>>;
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
  if (!isMultiDispatch(spec)) return interpretDispatch(spec, options);
  if (options.grid !== undefined)
    throw new ValidationError([
      { path: 'grid', message: 'cannot override the grid of a multi-dispatch kernel' },
    ]);
  const views = kernelDispatches(spec);
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
  for (const view of views) {
    const result = interpretDispatch(view, { ...options, buffers });
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
  for (let z = 0; z < grid[2]; z++) {
    for (let y = 0; y < grid[1]; y++) {
      for (let x = 0; x < grid[0]; x++) {
        const memories = new Map(global);
        for (const array of spec.shared) {
          const length = evaluateSizeExpression(array.length, schedule);
          memories.set(
            array.name,
            new Memory(array.name, array.element, allocateElements(array.element, length)),
          );
        }
        const context: Context = {
          params,
          schedule,
          memories,
          workgroupId: [x, y, z],
          grid,
          workgroupSize,
        };
        barriers += runWorkgroup(spec.body, context);
      }
    }
  }
  const workgroups = grid[0] * grid[1] * grid[2];
  return { workgroups, threads: workgroups * workgroupSize, barriers };
}

interface Context {
  readonly params: ReadonlyMap<string, number>;
  readonly schedule: Readonly<Record<string, number>>;
  readonly memories: ReadonlyMap<string, Memory>;
  readonly workgroupId: readonly [number, number, number];
  readonly grid: readonly [number, number, number];
  readonly workgroupSize: number;
}

const AXIS_INDEX = { x: 0, y: 1, z: 2 } as const;

function runWorkgroup(body: readonly Stmt[], context: Context): number {
  const threads: Running[] = [];
  for (let localId = 0; localId < context.workgroupSize; localId++) {
    const thread: Thread = { localId, locals: new Map() };
    threads.push({
      thread,
      steps: execute(body, thread, context),
      waiting: undefined,
      resume: [],
      done: false,
    });
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
          `divergent barrier in workgroup ${context.workgroupId.join(',')}: ${threads.length - waiting.length} thread(s) finished while ${waiting.length} wait`,
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
      `deadlock in workgroup ${context.workgroupId.join(',')}: threads wait at ${[...kinds].join(' and ')} that not all of their peers reach`,
    );
  }
}

function* execute(
  statements: readonly Stmt[],
  thread: Thread,
  context: Context,
): Generator<Event, void, Resume> {
  for (const statement of statements) {
    switch (statement.op) {
      case 'let':
      case 'assign':
        thread.locals.set(statement.name, evaluate(statement.value, thread, context));
        break;
      case 'store': {
        const index = evaluate(statement.index, thread, context) as number;
        memoryOf(context, statement.memory).write(
          index,
          evaluate(statement.value, thread, context) as number,
        );
        break;
      }
      case 'load_vector': {
        const index = evaluate(statement.index, thread, context) as number;
        const width = statement.names.length;
        // A GPU's vector load needs its address aligned to the whole vector: catch it here first.
        if (index % width !== 0)
          throw new ExecutionError(
            `load_vector of ${width} from '${statement.memory}' at element ${index}, not a multiple of ${width}`,
          );
        const memory = memoryOf(context, statement.memory);
        statement.names.forEach((name, k) => thread.locals.set(name, memory.read(index + k)));
        break;
      }
      case 'store_vector': {
        const index = evaluate(statement.index, thread, context) as number;
        const width = statement.values.length;
        // A GPU's vector store needs its address aligned to the whole vector, as a vector load does.
        if (index % width !== 0)
          throw new ExecutionError(
            `store_vector of ${width} to '${statement.memory}' at element ${index}, not a multiple of ${width}`,
          );
        const values = statement.values.map((value) => evaluate(value, thread, context) as number);
        const memory = memoryOf(context, statement.memory);
        values.forEach((value, k) => memory.write(index + k, value));
        break;
      }
      case 'if':
        yield* execute(
          evaluate(statement.condition, thread, context) === true ? statement.then : statement.else,
          thread,
          context,
        );
        break;
      case 'for': {
        const end = (): number => evaluate(statement.end, thread, context) as number;
        let index = evaluate(statement.start, thread, context) as number;
        while (index < end()) {
          thread.locals.set(statement.name, index);
          yield* execute(statement.body, thread, context);
          const step = evaluate(statement.step, thread, context) as number;
          if (step <= 0)
            throw new ExecutionError(
              `loop '${statement.name}' has step ${step}; it must be positive`,
            );
          const next = roundTo(statement.type, index + step);
          if (next <= index) break; // wrapped past the type's range: a GPU loop would end here too
          index = next;
        }
        break;
      }
      case 'barrier':
        yield { kind: 'barrier', statement };
        break;
      case 'shuffle':
      case 'reduce': {
        const value = evaluate(statement.value, thread, context) as number;
        const lane =
          statement.op === 'shuffle' ? (evaluate(statement.lane, thread, context) as number) : 0;
        const [result] = yield { kind: 'warp', statement, values: [value], lane };
        thread.locals.set(statement.name, result as number);
        break;
      }
      case 'mma': {
        const operands = [...statement.a, ...statement.b, ...statement.c];
        const values = operands.map((operand) => evaluate(operand, thread, context) as number);
        const results = yield { kind: 'warp', statement, values, lane: 0 };
        statement.names.forEach((name, k) => thread.locals.set(name, results[k] as number));
        break;
      }
      default:
        assertNever(statement, 'statement op');
    }
  }
}

function memoryOf(context: Context, name: string): Memory {
  const memory = context.memories.get(name);
  if (memory === undefined) throw new ExecutionError(`no buffer or shared array named '${name}'`);
  return memory;
}

function evaluate(expression: Expr, thread: Thread, context: Context): Value {
  switch (expression.op) {
    case 'const':
      return typeof expression.value === 'boolean'
        ? expression.value
        : roundTo(expression.type, expression.value);
    case 'var': {
      const value = thread.locals.get(expression.name);
      if (value === undefined)
        throw new ExecutionError(`local '${expression.name}' read before it is set`);
      return value;
    }
    case 'param':
      return context.params.get(expression.name) as number;
    case 'schedule':
      return context.schedule[expression.name] as number;
    case 'builtin': {
      const axis = AXIS_INDEX[expression.axis ?? 'x'];
      switch (expression.name) {
        case 'local_id':
          return thread.localId;
        case 'workgroup_id':
          return context.workgroupId[axis];
        case 'num_workgroups':
          return context.grid[axis];
        case 'workgroup_size':
          return context.workgroupSize;
        case 'lane_id':
          return thread.localId % WARP_SIZE;
        case 'warp_id':
          return Math.floor(thread.localId / WARP_SIZE);
      }
      break;
    }
    case 'load':
      return memoryOf(context, expression.memory).read(
        evaluate(expression.args[0], thread, context) as number,
      );
    case 'unpack_half': {
      const word = evaluate(expression.args[0], thread, context) as number;
      return f16FromBits((word >>> (16 * expression.half)) & 0xffff);
    }
    case 'pack_half': {
      const lo = evaluate(expression.args[0], thread, context) as number;
      return packHalfBits(lo, evaluate(expression.args[1], thread, context) as number);
    }
    case 'fma':
      return fmaSemantics(...evaluateArgs(expression.args, thread, context), expression.type);
    case 'dot4_i8':
      return dot4I8Semantics(...evaluateArgs(expression.args, thread, context));
    case 'funnel_shift_right':
      return funnelShiftRightSemantics(...evaluateArgs(expression.args, thread, context));
    case 'bit_select':
      return bitSelectSemantics(...evaluateArgs(expression.args, thread, context));
    case 'select': {
      const [condition, ifTrue, ifFalse] = evaluateArgs(expression.args, thread, context);
      return condition === true ? ifTrue : ifFalse;
    }
    case 'convert':
      return convertValue(
        evaluate(expression.args[0], thread, context),
        expression.args[0].type,
        expression.type,
      );
    case 'bitcast':
      return bitcastValue(
        evaluate(expression.args[0], thread, context),
        expression.args[0].type,
        expression.type,
      );
    default:
      if (isUnaryExpr(expression)) {
        return UNARY_SEMANTICS[expression.op](
          evaluate(expression.args[0], thread, context),
          expression.type,
        );
      }
      if (isBinaryExpr(expression)) {
        return BINARY_SEMANTICS[expression.op](
          evaluate(expression.args[0], thread, context),
          evaluate(expression.args[1], thread, context),
          expression.args[0].type,
        );
      }
      return assertNever(expression, 'expression op');
  }
  throw new ExecutionError(`cannot evaluate op '${(expression as Expr).op}'`);
}

function evaluateArgs(
  args: readonly [Expr, Expr, Expr],
  thread: Thread,
  context: Context,
): [Value, Value, Value] {
  return [
    evaluate(args[0], thread, context),
    evaluate(args[1], thread, context),
    evaluate(args[2], thread, context),
  ];
}
