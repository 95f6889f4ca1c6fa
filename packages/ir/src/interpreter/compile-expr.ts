import {
  WARP_SIZE,
  type BinaryExpr,
  type BuiltinExpr,
  type Expr,
  type LoadExpr,
  type UnaryExpr,
} from '../body.js';
import { ExecutionError } from '../errors.js';
import { f16FromBits, packHalfBits } from '../f16.js';
import { ownField } from '../json-shape.js';
import { WORD_OP_SIGNATURES, assertNever, isBinaryExpr, isUnaryExpr, isWordExpr } from '../ops.js';
import type { ScalarType } from '../types.js';
import { divisor, noMemory, outOfBounds, shiftAmount } from './faults.js';
import type { Memory } from './memory.js';
import {
  BINARY_SEMANTICS,
  UNARY_SEMANTICS,
  bitcastValue,
  convertValue,
  fmaSemantics,
  roundTo,
  type Value,
} from './scalar-ops.js';
import type { Thread } from './warp.js';

// Expressions compiled once per dispatch into closures: names resolve to local slots, params,
// schedule values and memories up front, so evaluating a node is one call with no lookups. Every
// closure keeps the tree walker's semantics: its evaluation order, rounding and faults.

/** The workgroup a dispatch is running: its id changes in place from one workgroup to the next. */
export interface Frame {
  readonly workgroupId: [number, number, number];
  readonly grid: readonly [number, number, number];
  readonly workgroupSize: number;
}

/** What the compiled code may refer to; `slots` numbers the locals as it meets their names. */
export interface Scope {
  readonly params: ReadonlyMap<string, number>;
  readonly schedule: Readonly<Record<string, number>>;
  readonly memories: ReadonlyMap<string, Memory>;
  readonly frame: Frame;
  readonly slots: Map<string, number>;
}

/** A compiled expression: its value in one thread. */
export type Eval = (thread: Thread) => Value;
/** A compiled expression whose value is a number (as the tree walker assumed, unchecked). */
export type NumEval = (thread: Thread) => number;

/** The slot of local `name` in every thread's `locals`. */
export function slotOf(scope: Scope, name: string): number {
  let slot = scope.slots.get(name);
  if (slot === undefined) {
    slot = scope.slots.size;
    scope.slots.set(name, slot);
  }
  return slot;
}

/** A closure that throws `error` when run: a fault stays where and when the node is evaluated. */
export function thrower(error: unknown): () => never {
  return () => {
    throw error;
  };
}

/** Compiles an expression; a node malformed in an unvalidated spec faults only when evaluated. */
export function compileExpr(expression: Expr, scope: Scope): Eval {
  try {
    return compileNode(expression, scope);
  } catch (error) {
    return thrower(error);
  }
}

/** compileExpr for a node whose value the caller uses as a number. */
export const compileNum = (expression: Expr, scope: Scope): NumEval =>
  compileExpr(expression, scope) as NumEval;

const AXIS_INDEX = { x: 0, y: 1, z: 2 } as const;

function compileNode(expression: Expr, scope: Scope): Eval {
  switch (expression.op) {
    case 'const': {
      const { type, value } = expression;
      if (typeof value === 'boolean') return () => value;
      let rounded: number;
      try {
        rounded = roundTo(type, value);
      } catch {
        return () => roundTo(type, value);
      }
      return () => rounded;
    }
    case 'var': {
      const { name } = expression;
      const slot = slotOf(scope, name);
      return (thread) => {
        const value = thread.locals[slot];
        if (value === undefined) throw new ExecutionError(`local '${name}' read before it is set`);
        return value;
      };
    }
    case 'param': {
      const value = scope.params.get(expression.name) as number;
      return () => value;
    }
    case 'schedule': {
      const value = scope.schedule[expression.name] as number;
      return () => value;
    }
    case 'builtin':
      return compileBuiltin(expression, scope.frame);
    case 'load':
      return compileLoad(expression, scope);
    case 'unpack_half': {
      const word = compileNum(expression.args[0], scope);
      const shift = 16 * expression.half;
      return (thread) => f16FromBits((word(thread) >>> shift) & 0xffff);
    }
    case 'pack_half': {
      const lo = compileNum(expression.args[0], scope);
      const hi = compileNum(expression.args[1], scope);
      return (thread) => packHalfBits(lo(thread), hi(thread));
    }
    case 'fma': {
      const [a, b, c] = compileArgs(expression.args, scope);
      const { type } = expression;
      if (type === 'f32') return (thread) => Math.fround(a(thread) * b(thread) + c(thread));
      return (thread) => fmaSemantics(a(thread), b(thread), c(thread), type);
    }
    case 'select': {
      const condition = compileExpr(expression.args[0], scope);
      const ifTrue = compileExpr(expression.args[1], scope);
      const ifFalse = compileExpr(expression.args[2], scope);
      // All three are evaluated, as before, so a fault in the branch not taken still shows.
      return (thread) => {
        const chosen = condition(thread) === true;
        const a = ifTrue(thread);
        const b = ifFalse(thread);
        return chosen ? a : b;
      };
    }
    case 'convert':
      return compileConvert(
        compileNum(expression.args[0], scope),
        expression.args[0].type,
        expression.type,
      );
    case 'bitcast': {
      const value = compileExpr(expression.args[0], scope);
      const from = expression.args[0].type;
      const to = expression.type;
      return (thread) => bitcastValue(value(thread), from, to);
    }
    default:
      if (isWordExpr(expression)) {
        const [a, b, c] = compileArgs(expression.args, scope);
        const { semantics } = WORD_OP_SIGNATURES[expression.op];
        return (thread) => semantics(a(thread), b(thread), c(thread));
      }
      if (isUnaryExpr(expression)) return compileUnary(expression, scope);
      if (isBinaryExpr(expression)) return compileBinary(expression, scope);
      return thrower(tryAssertNever(expression));
  }
}

function tryAssertNever(expression: never): unknown {
  try {
    return assertNever(expression, 'expression op');
  } catch (error) {
    return error;
  }
}

function compileArgs(args: readonly [Expr, Expr, Expr], scope: Scope): [NumEval, NumEval, NumEval] {
  return [compileNum(args[0], scope), compileNum(args[1], scope), compileNum(args[2], scope)];
}

function compileBuiltin(expression: BuiltinExpr, frame: Frame): Eval {
  const axis = AXIS_INDEX[ownField(expression, 'axis') ?? 'x'];
  switch (expression.name) {
    case 'local_id':
      return (thread) => thread.localId;
    case 'workgroup_id': {
      const id = frame.workgroupId;
      return () => id[axis];
    }
    case 'num_workgroups': {
      const count = frame.grid[axis];
      return () => count;
    }
    case 'workgroup_size': {
      const size = frame.workgroupSize;
      return () => size;
    }
    case 'lane_id':
      return (thread) => thread.localId % WARP_SIZE;
    case 'warp_id':
      return (thread) => Math.floor(thread.localId / WARP_SIZE);
  }
  return thrower(new ExecutionError(`cannot evaluate op 'builtin'`));
}

function compileLoad(expression: LoadExpr, scope: Scope): Eval {
  const memory = scope.memories.get(expression.memory);
  // The memory was looked up before the index was evaluated, so a missing one faults first.
  if (memory === undefined) return thrower(noMemory(expression.memory));
  const index = compileNum(expression.args[0], scope);
  const { name, data } = memory;
  const length = data.length;
  if (memory.element === 'f16') {
    return (thread) => {
      const at = index(thread);
      if (!(at >= 0 && at < length)) throw outOfBounds(name, 'read', at, length);
      return f16FromBits(data[at] as number);
    };
  }
  return (thread) => {
    const at = index(thread);
    if (!(at >= 0 && at < length)) throw outOfBounds(name, 'read', at, length);
    return data[at] as number;
  };
}

function compileConvert(value: NumEval, from: ScalarType, to: ScalarType): Eval {
  const fromFloat = from === 'f32' || from === 'f16';
  if (to === 'f32') return (thread) => Math.fround(value(thread));
  if (fromFloat && to === 'u32') {
    return (thread) => {
      const source = value(thread);
      return Number.isNaN(source) ? 0 : Math.min(0xffffffff, Math.max(0, Math.trunc(source)));
    };
  }
  if (fromFloat && to === 'i32') {
    return (thread) => {
      const source = value(thread);
      if (Number.isNaN(source)) return 0;
      return Math.min(2 ** 31 - 1, Math.max(-(2 ** 31), Math.trunc(source)));
    };
  }
  if (!fromFloat && to === 'u32') return (thread) => value(thread) >>> 0;
  if (!fromFloat && to === 'i32') return (thread) => value(thread) | 0;
  return (thread) => convertValue(value(thread), from, to);
}

function compileUnary(expression: UnaryExpr, scope: Scope): Eval {
  const a = compileNum(expression.args[0], scope);
  const { op, type } = expression;
  if (type === 'f32') {
    switch (op) {
      case 'neg':
        return (thread) => Math.fround(-a(thread));
      case 'abs':
        return (thread) => Math.fround(Math.abs(a(thread)));
      case 'sqrt':
        return (thread) => Math.fround(Math.sqrt(a(thread)));
      case 'rsqrt':
        return (thread) => Math.fround(1 / Math.sqrt(a(thread)));
      case 'rcp':
        return (thread) => Math.fround(1 / a(thread));
      case 'exp2':
        return (thread) => Math.fround(2 ** a(thread));
      case 'log2':
        return (thread) => Math.fround(Math.log2(a(thread)));
      case 'floor':
        return (thread) => Math.fround(Math.floor(a(thread)));
      default:
        break;
    }
  }
  if (type === 'u32' && op === 'not') return (thread) => ~a(thread) >>> 0;
  const semantics = UNARY_SEMANTICS[op];
  return (thread) => semantics(a(thread), type);
}

function compileBinary(expression: BinaryExpr, scope: Scope): Eval {
  const a = compileNum(expression.args[0], scope);
  const b = compileNum(expression.args[1], scope);
  const { op } = expression;
  const type = expression.args[0].type;
  const special =
    compareOrPick(op, a, b) ??
    (type === 'f32' ? f32Binary(op, a, b) : type === 'u32' ? u32Binary(op, a, b) : undefined);
  if (special !== undefined) return special;
  const semantics = BINARY_SEMANTICS[op];
  return (thread) => semantics(a(thread), b(thread), type);
}

// Comparisons and min/max do not depend on the operand type.
function compareOrPick(op: BinaryExpr['op'], a: NumEval, b: NumEval): Eval | undefined {
  switch (op) {
    case 'eq':
      return (thread) => a(thread) === b(thread);
    case 'ne':
      return (thread) => a(thread) !== b(thread);
    case 'lt':
      return (thread) => a(thread) < b(thread);
    case 'le':
      return (thread) => a(thread) <= b(thread);
    case 'gt':
      return (thread) => a(thread) > b(thread);
    case 'ge':
      return (thread) => a(thread) >= b(thread);
    case 'min':
      return (thread) => {
        const x = a(thread);
        const y = b(thread);
        if (Number.isNaN(x)) return y;
        return Number.isNaN(y) ? x : Math.min(x, y);
      };
    case 'max':
      return (thread) => {
        const x = a(thread);
        const y = b(thread);
        if (Number.isNaN(x)) return y;
        return Number.isNaN(y) ? x : Math.max(x, y);
      };
    default:
      return undefined;
  }
}

function f32Binary(op: BinaryExpr['op'], a: NumEval, b: NumEval): Eval | undefined {
  switch (op) {
    case 'add':
      return (thread) => Math.fround(a(thread) + b(thread));
    case 'sub':
      return (thread) => Math.fround(a(thread) - b(thread));
    case 'mul':
      return (thread) => Math.fround(a(thread) * b(thread));
    case 'div':
      return (thread) => Math.fround(a(thread) / b(thread));
    default:
      return undefined;
  }
}

function u32Binary(op: BinaryExpr['op'], a: NumEval, b: NumEval): Eval | undefined {
  switch (op) {
    case 'add':
      return (thread) => (a(thread) + b(thread)) >>> 0;
    case 'sub':
      return (thread) => (a(thread) - b(thread)) >>> 0;
    case 'mul':
      return (thread) => Math.imul(a(thread), b(thread)) >>> 0;
    case 'div':
      return (thread) => {
        const x = a(thread);
        return Math.trunc(x / divisor(b(thread), false)) >>> 0;
      };
    case 'rem':
      return (thread) => {
        const x = a(thread);
        return (x % divisor(b(thread), true)) >>> 0;
      };
    case 'and':
      return (thread) => (a(thread) & b(thread)) >>> 0;
    case 'or':
      return (thread) => (a(thread) | b(thread)) >>> 0;
    case 'xor':
      return (thread) => (a(thread) ^ b(thread)) >>> 0;
    case 'shl':
      return (thread) => {
        const x = a(thread);
        return (x << shiftAmount(b(thread))) >>> 0;
      };
    case 'shr':
      return (thread) => {
        const x = a(thread);
        return x >>> shiftAmount(b(thread));
      };
    default:
      return undefined;
  }
}
