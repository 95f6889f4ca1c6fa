import type { ScalarType } from './types.js';
import type { WORD_OPS, WordOp } from './ops.js';

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
/**
 * A unary op: `neg` and `abs` take floats and i32, `not` integers and bool, the rest (`sqrt` to
 * `floor`) f32 or f16 only.
 */
export type UnaryOp = (typeof UNARY_OPS)[number];

/** Binary ops: `and`/`or`/`xor` are bitwise on integers and logical on bool; comparisons yield bool. */
export const BINARY_OPS = [
  'add', 'sub', 'mul', 'div', 'rem', 'min', 'max',
  'and', 'or', 'xor', 'shl', 'shr',
  'eq', 'ne', 'lt', 'le', 'gt', 'ge',
] as const; // prettier-ignore
/**
 * A binary op. Both operands share a type, except `shl`/`shr` (an integer shifted by a u32 below
 * 32); `rem` takes integers, `and`/`or`/`xor` integers or bool, and comparisons yield bool.
 */
export type BinaryOp = (typeof BINARY_OPS)[number];

/** The binary ops that yield bool; on bool operands only `eq` and `ne` are allowed. */
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
/**
 * A u32 builtin: the thread's `local_id` in its 1-D workgroup, its `lane_id` and `warp_id`, the
 * `workgroup_size`, and per grid axis the `workgroup_id` and `num_workgroups`.
 */
export type BuiltinName = (typeof BUILTIN_NAMES)[number];
/**
 * The grid's three axes; only `workgroup_id` and `num_workgroups` take one, since workgroups are
 * 1-D.
 */
export const AXES = ['x', 'y', 'z'] as const;
/** A grid axis, for `workgroup_id` and `num_workgroups`. */
export type Axis = (typeof AXES)[number];
/** Builtins that take an axis. */
export const AXIS_BUILTINS: readonly BuiltinName[] = ['workgroup_id', 'num_workgroups'];

/**
 * Lanes per warp on every target: `lane_id`, `warp_id`, shuffle and reduce are defined over 32
 * consecutive local ids, whatever the hardware's subgroup size.
 */
export const WARP_SIZE = 32;

/**
 * A literal; `value` must fit `type`: an integer in range for u32 and i32, a finite number within
 * range for f32 and f16, true or false for bool.
 */
export interface ConstExpr<T extends ScalarType = ScalarType> {
  readonly op: 'const';
  readonly type: T;
  readonly value: number | boolean;
}
/**
 * Reads a local in scope, declared by `let`, `load_vector`, `shuffle`, `reduce`, `mma` or a `for`
 * loop.
 */
export interface VarExpr<T extends ScalarType = ScalarType> {
  readonly op: 'var';
  readonly type: T;
  readonly name: string;
}
/**
 * Reads a scalar launch parameter declared in the spec's `params`; `type` must be its declared
 * type.
 */
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
/**
 * A u32 builtin; `axis` is required for `workgroup_id` and `num_workgroups` and must be absent for
 * the others.
 */
export interface BuiltinExpr {
  readonly op: 'builtin';
  readonly type: 'u32';
  readonly name: BuiltinName;
  readonly axis?: Axis;
}
/** A unary op; the result has the operand's type, floats rounded to it and integers wrapping. */
export interface UnaryExpr {
  readonly op: UnaryOp;
  readonly type: ScalarType;
  readonly args: readonly [Expr];
}
/**
 * A binary op; the result has the operands' type, or bool for comparisons. Integers wrap and
 * integer `div` truncates toward zero; integer division by zero and shifts by 32 or more have no
 * defined result, so a kernel must rule them out (the interpreter throws ExecutionError).
 */
export interface BinaryExpr {
  readonly op: BinaryOp;
  readonly type: ScalarType;
  readonly args: readonly [Expr, Expr];
}
/**
 * `args[0] * args[1] + args[2]` with a single rounding; all three operands share one float type.
 */
export interface FmaExpr {
  readonly op: 'fma';
  readonly type: ScalarType;
  readonly args: readonly [Expr, Expr, Expr];
}
/**
 * A word op (`WORD_OPS` in ops.ts declares each once: its operand and result types and semantics):
 * three u32 or i32 operands, a fixed result type.
 */
export type WordExpr = {
  readonly [K in WordOp]: {
    readonly op: K;
    readonly type: (typeof WORD_OPS)[K]['result'];
    readonly args: readonly [Expr, Expr, Expr];
  };
}[WordOp];
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
/**
 * The u32 whose low 16 bits are the f32 `args[0]` and high 16 bits the f32 `args[1]`, each rounded
 * to an IEEE binary16 to nearest even (beyond ±65504 to ±inf, NaN to a quiet NaN): the inverse of
 * `unpack_half`, so f16 values can be stored in u32 words without the f16 feature.
 */
export interface PackHalfExpr {
  readonly op: 'pack_half';
  readonly type: 'u32';
  readonly args: readonly [Expr, Expr];
}
/** Element `args[0]` of a buffer or shared array named `memory`. */
export interface LoadExpr {
  readonly op: 'load';
  readonly type: ScalarType;
  readonly memory: string;
  readonly args: readonly [Expr];
}

/** Any expression node, whatever its type; see Expr. */
export type AnyExpr =
  | ConstExpr
  | VarExpr
  | ParamExpr
  | ScheduleExpr
  | BuiltinExpr
  | UnaryExpr
  | BinaryExpr
  | FmaExpr
  | WordExpr
  | SelectExpr
  | ConvertExpr
  | BitcastExpr
  | UnpackHalfExpr
  | PackHalfExpr
  | LoadExpr;

/**
 * An expression node whose result type is `T` (any type by default). Every node carries its result
 * `type`, which validation checks against its operands; `T` lets TypeScript check it first.
 */
export type Expr<T extends ScalarType = ScalarType> = AnyExpr & { readonly type: T };

/** Every expression `op` tag, for exhaustive switches over Expr. */
export type ExprOp = Expr['op'];

/** Declares a mutable local; names are unique in the whole body. */
export interface LetStmt {
  readonly op: 'let';
  readonly name: string;
  readonly type: ScalarType;
  readonly value: Expr;
}
/**
 * Overwrites a local declared by `let`; loop indices and the results of `load_vector`, `shuffle`,
 * `reduce` and `mma` cannot be assigned.
 */
export interface AssignStmt {
  readonly op: 'assign';
  readonly name: string;
  readonly value: Expr;
}
/**
 * Writes `value` to element `index` (u32) of a `read_write` buffer or a shared array. An index out
 * of bounds is a kernel bug: the interpreter throws ExecutionError and GPUs give no defined result.
 */
export interface StoreStmt {
  readonly op: 'store';
  readonly memory: string;
  readonly index: Expr;
  readonly value: Expr;
}
/** Vector widths a `load_vector` or `store_vector` may take: 8 or 16 bytes of 4-byte elements in one access. */
export const VECTOR_WIDTHS = [2, 4] as const;
/** The element counts one `load_vector` may read or one `store_vector` write. */
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
/**
 * Writes `values[k]` to `memory[index + k]` for every k in one aligned access, the mirror of
 * `load_vector`: `index` must be a multiple of `values.length` (2 or 4); the memory must be a
 * `read_write` buffer or a shared array, as for `store`.
 */
export interface StoreVectorStmt {
  readonly op: 'store_vector';
  readonly memory: string;
  readonly index: Expr;
  readonly values: readonly Expr[];
}
/**
 * Runs `then` or `else` per thread. A barrier inside needs a condition uniform across the
 * workgroup, a warp operation one uniform across its warp.
 */
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
/**
 * How a shuffle picks its source lane: `xor` (lane ^ m), `down` (lane + d), `up` (lane - d), `idx`
 * (lane m).
 */
export const SHUFFLE_MODES = ['xor', 'down', 'up', 'idx'] as const;
/** A shuffle's source-lane rule; see ShuffleStmt. */
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
/** What a warp `reduce` can compute over its 32 lanes: the sum, the minimum or the maximum. */
export const REDUCTIONS = ['add', 'min', 'max'] as const;
/** A warp reduction; see ReduceStmt. */
export type Reduction = (typeof REDUCTIONS)[number];
/** Declares `name` = the reduction of `value` over the 32 lanes of the warp, in every lane. */
export interface ReduceStmt {
  readonly op: 'reduce';
  readonly reduction: Reduction;
  readonly name: string;
  readonly type: ScalarType;
  readonly value: Expr;
}

/** Matrix shapes a warp `mma` takes; see MmaStmt. */
export const MMA_SHAPES = ['m16n8k16'] as const;
/** A warp `mma`'s shape: M×N×K of D = A·B + C; see MmaStmt. */
export type MmaShape = (typeof MMA_SHAPES)[number];
/** How many operand expressions (u32 words of two f16 for `a` and `b`, f32 for `c`) and results an `mma` of each shape takes. */
export const MMA_FRAGMENTS: {
  readonly [S in MmaShape]: { readonly a: number; readonly b: number; readonly c: number };
} = { m16n8k16: { a: 4, b: 2, c: 4 } };
/**
 * A warp matrix multiply-accumulate, D = A·B + C, on fragments spread over the 32 lanes of a warp
 * (all must take part, in warp-uniform control flow). Shape `m16n8k16`: A is 16×16 f16 (row-major),
 * B 16×8 f16 (each column k-major), C and D 16×8 f32. Each lane gives `a` (4 u32 words), `b` (2 u32
 * words) and `c` (4 f32) and declares `names` (4 f32 locals, not assignable) as its part of D, in
 * the PTX ISA's layout for mma.m16n8k16 with .f16 A/B and .f32 C/D, where g = lane_id >> 2 and
 * t = lane_id % 4 and each word holds two halves, the lower-k element in its low 16 bits:
 * - `a[r]` holds A[g + 8·(r & 1)][2t + 8·(r >> 1) + h] in half h (a0 rows 0–7 k 0–7, a1 rows 8–15
 *   k 0–7, a2 rows 0–7 k 8–15, a3 rows 8–15 k 8–15);
 * - `b[r]` holds B[2t + 8·r + h][g] in half h;
 * - `c[i]` and `names[i]` are C and D at [g + 8·(i >> 1)][2t + (i & 1)].
 * Every D element is C plus the 16 products A[row][k]·B[k][col] (exact in f32) added in increasing
 * k, each sum rounded to f32 — the order the interpreter and the WGSL lowering use. Tensor cores
 * add in an unspecified order (and may keep more precision), so compare results with a tolerance.
 */
export interface MmaStmt {
  readonly op: 'mma';
  readonly shape: MmaShape;
  readonly names: readonly string[];
  readonly a: readonly Expr[];
  readonly b: readonly Expr[];
  readonly c: readonly Expr[];
}

/** Any statement of a kernel body; a body is a list of them that every thread runs. */
export type Stmt =
  | LetStmt
  | AssignStmt
  | StoreStmt
  | LoadVectorStmt
  | StoreVectorStmt
  | IfStmt
  | ForStmt
  | BarrierStmt
  | ShuffleStmt
  | ReduceStmt
  | MmaStmt;

/** Every statement `op` tag, for exhaustive switches over Stmt. */
export type StmtOp = Stmt['op'];
