import type { ScalarType } from './types.js';

/** Unary ops: `not` is bitwise on integers and logical on bool. */
export const UNARY_OPS = [
  'neg',
  'abs',
  'not',
  'sqrt',
  'rsqrt',
  'rcp',
  'exp2',
  'log2',
  'floor',
] as const;
export type UnaryOp = (typeof UNARY_OPS)[number];

/** Binary ops: `and`/`or`/`xor` are bitwise on integers and logical on bool; comparisons yield bool. */
export const BINARY_OPS = [
  'add', 'sub', 'mul', 'div', 'rem', 'min', 'max',
  'and', 'or', 'xor', 'shl', 'shr',
  'eq', 'ne', 'lt', 'le', 'gt', 'ge',
] as const; // prettier-ignore
export type BinaryOp = (typeof BINARY_OPS)[number];

export const COMPARISON_OPS: readonly BinaryOp[] = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'];

/** Built-in ids. Workgroups are 1-D; the grid is 3-D. A warp is 32 consecutive `local_id`s. */
export const BUILTIN_NAMES = [
  'local_id',
  'workgroup_id',
  'num_workgroups',
  'workgroup_size',
  'lane_id',
  'warp_id',
] as const;
export type BuiltinName = (typeof BUILTIN_NAMES)[number];
export const AXES = ['x', 'y', 'z'] as const;
export type Axis = (typeof AXES)[number];
/** Builtins that take an axis. */
export const AXIS_BUILTINS: readonly BuiltinName[] = ['workgroup_id', 'num_workgroups'];

export const WARP_SIZE = 32;

export interface ConstExpr {
  readonly op: 'const';
  readonly type: ScalarType;
  readonly value: number | boolean;
}
export interface VarExpr {
  readonly op: 'var';
  readonly type: ScalarType;
  readonly name: string;
}
export interface ParamExpr {
  readonly op: 'param';
  readonly type: ScalarType;
  readonly name: string;
}
/** A schedule knob: a compile-time u32. */
export interface ScheduleExpr {
  readonly op: 'schedule';
  readonly type: 'u32';
  readonly name: string;
}
export interface BuiltinExpr {
  readonly op: 'builtin';
  readonly type: 'u32';
  readonly name: BuiltinName;
  readonly axis?: Axis;
}
export interface UnaryExpr {
  readonly op: UnaryOp;
  readonly type: ScalarType;
  readonly args: readonly [Expr];
}
export interface BinaryExpr {
  readonly op: BinaryOp;
  readonly type: ScalarType;
  readonly args: readonly [Expr, Expr];
}
export interface FmaExpr {
  readonly op: 'fma';
  readonly type: ScalarType;
  readonly args: readonly [Expr, Expr, Expr];
}
/** `args[0] ? args[1] : args[2]`, evaluating both sides. */
export interface SelectExpr {
  readonly op: 'select';
  readonly type: ScalarType;
  readonly args: readonly [Expr, Expr, Expr];
}
/** Numeric conversion: float to int truncates toward zero and saturates; int/float to float rounds to nearest even. */
export interface ConvertExpr {
  readonly op: 'convert';
  readonly type: ScalarType;
  readonly args: readonly [Expr];
}
/** Reinterprets the bits of a 32-bit value. */
export interface BitcastExpr {
  readonly op: 'bitcast';
  readonly type: ScalarType;
  readonly args: readonly [Expr];
}
/**
 * The low (`half` 0) or high (`half` 1) 16 bits of the u32 `args[0]` read as an IEEE binary16 and
 * converted exactly to f32: GGUF blocks keep f16 scales inside words WGSL storage can hold without f16.
 */
export interface UnpackHalfExpr {
  readonly op: 'unpack_half';
  readonly type: 'f32';
  readonly half: 0 | 1;
  readonly args: readonly [Expr];
}
/** Element `args[0]` of a buffer or shared array named `memory`. */
export interface LoadExpr {
  readonly op: 'load';
  readonly type: ScalarType;
  readonly memory: string;
  readonly args: readonly [Expr];
}

export type Expr =
  | ConstExpr
  | VarExpr
  | ParamExpr
  | ScheduleExpr
  | BuiltinExpr
  | UnaryExpr
  | BinaryExpr
  | FmaExpr
  | SelectExpr
  | ConvertExpr
  | BitcastExpr
  | UnpackHalfExpr
  | LoadExpr;

export type ExprOp = Expr['op'];

/** Declares a mutable local; names are unique in the whole body. */
export interface LetStmt {
  readonly op: 'let';
  readonly name: string;
  readonly type: ScalarType;
  readonly value: Expr;
}
export interface AssignStmt {
  readonly op: 'assign';
  readonly name: string;
  readonly value: Expr;
}
export interface StoreStmt {
  readonly op: 'store';
  readonly memory: string;
  readonly index: Expr;
  readonly value: Expr;
}
/** Vector widths a `load_vector` may take: 8 or 16 bytes of 4-byte elements in one access. */
export const VECTOR_WIDTHS = [2, 4] as const;
export type VectorWidth = (typeof VECTOR_WIDTHS)[number];
/**
 * Declares `names[k]` = `memory[index + k]` for every k, read in one aligned access: `index` must be
 * a multiple of `names.length` (2 or 4), so GPUs can issue one 8- or 16-byte load per lane.
 */
export interface LoadVectorStmt {
  readonly op: 'load_vector';
  readonly names: readonly string[];
  readonly type: ScalarType;
  readonly memory: string;
  readonly index: Expr;
}
export interface IfStmt {
  readonly op: 'if';
  readonly condition: Expr;
  readonly then: readonly Stmt[];
  readonly else: readonly Stmt[];
}
/** `for (name = start; name < end; name += step)`; step must be positive. */
export interface ForStmt {
  readonly op: 'for';
  readonly name: string;
  readonly type: 'u32' | 'i32';
  readonly start: Expr;
  readonly end: Expr;
  readonly step: Expr;
  readonly body: readonly Stmt[];
}
/** Workgroup barrier with memory ordering for shared memory; only in workgroup-uniform control flow. */
export interface BarrierStmt {
  readonly op: 'barrier';
}
export const SHUFFLE_MODES = ['xor', 'down', 'up', 'idx'] as const;
export type ShuffleMode = (typeof SHUFFLE_MODES)[number];
/**
 * Declares `name` = `value` read from another lane of the warp: lane ^ m, lane + d, lane - d or lane m.
 * A source lane outside the warp yields the lane's own value. All 32 lanes must take part.
 */
export interface ShuffleStmt {
  readonly op: 'shuffle';
  readonly mode: ShuffleMode;
  readonly name: string;
  readonly type: ScalarType;
  readonly value: Expr;
  readonly lane: Expr;
}
export const REDUCTIONS = ['add', 'min', 'max'] as const;
export type Reduction = (typeof REDUCTIONS)[number];
/** Declares `name` = the reduction of `value` over the 32 lanes of the warp, in every lane. */
export interface ReduceStmt {
  readonly op: 'reduce';
  readonly reduction: Reduction;
  readonly name: string;
  readonly type: ScalarType;
  readonly value: Expr;
}

export type Stmt =
  | LetStmt
  | AssignStmt
  | StoreStmt
  | LoadVectorStmt
  | IfStmt
  | ForStmt
  | BarrierStmt
  | ShuffleStmt
  | ReduceStmt;

export type StmtOp = Stmt['op'];
