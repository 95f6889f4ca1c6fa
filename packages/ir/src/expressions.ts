import type {
  Axis,
  BinaryExpr,
  BinaryOp,
  BuiltinExpr,
  BuiltinName,
  ConstExpr,
  Expr,
  UnaryExpr,
  UnaryOp,
  UnpackHalfExpr,
} from './body.js';
import { COMPARISON_OPS } from './body.js';
import type { ScalarType } from './types.js';

// Expression constructors used by kernel authors; result types follow the type checker's rules.

/** A literal of `type`; validation checks that `value` fits it. */
export const constant = (type: ScalarType, value: number | boolean): ConstExpr => ({
  op: 'const',
  type,
  value,
});
/** An f32 literal; `value` must be finite and within f32 range. */
export const f32 = (value: number): ConstExpr => constant('f32', value);
/** An f16 literal; `value` must be finite and within ±65504. */
export const f16 = (value: number): ConstExpr => constant('f16', value);
/** A u32 literal; `value` must be an integer in [0, 2^32). */
export const u32 = (value: number): ConstExpr => constant('u32', value);
/** An i32 literal; `value` must be an integer in [-2^31, 2^31). */
export const i32 = (value: number): ConstExpr => constant('i32', value);
/** A bool literal; bool values live in registers only, never in memory. */
export const bool = (value: boolean): ConstExpr => constant('bool', value);

/**
 * A u32 builtin; give `axis` for `workgroup_id` and `num_workgroups` and for no other
 * (BodyBuilder's `localId()`, `workgroupId()`… are shorter).
 */
export function builtin(name: BuiltinName, axis?: Axis): BuiltinExpr {
  return axis === undefined
    ? { op: 'builtin', type: 'u32', name }
    : { op: 'builtin', type: 'u32', name, axis };
}

function unary(op: UnaryOp) {
  return (value: Expr): UnaryExpr => ({ op, type: value.type, args: [value] });
}

function binary(op: BinaryOp) {
  const comparison = COMPARISON_OPS.includes(op);
  return (left: Expr, right: Expr): BinaryExpr => ({
    op,
    type: comparison ? 'bool' : left.type,
    args: [left, right],
  });
}

/** Negation of an f32, f16 or i32. */
export const neg = unary('neg');
/** Absolute value of an f32, f16 or i32. */
export const abs = unary('abs');
/** Bitwise complement of a u32 or i32, logical negation of a bool. */
export const not = unary('not');
/** Square root of an f32 or f16. */
export const sqrt = unary('sqrt');
/**
 * 1 / sqrt(x) of an f32 or f16; GPUs use their approximate instruction, so the last bits may differ
 * from the exact value.
 */
export const rsqrt = unary('rsqrt');
/** Reciprocal 1 / x of an f32 or f16. */
export const rcp = unary('rcp');
/**
 * 2^x of an f32 or f16; GPUs use their approximate instruction, so the last bits may differ from
 * the exact value.
 */
export const exp2 = unary('exp2');
/**
 * Base-2 logarithm of an f32 or f16; GPUs use their approximate instruction, so the last bits may
 * differ from the exact value.
 */
export const log2 = unary('log2');
/** Rounds an f32 or f16 toward negative infinity. */
export const floor = unary('floor');

/** Sum of two operands of one numeric type; integers wrap. */
export const add = binary('add');
/** Difference of two operands of one numeric type; integers wrap. */
export const sub = binary('sub');
/** Product of two operands of one numeric type; integers keep the low 32 bits. */
export const mul = binary('mul');
/**
 * Quotient of two operands of one numeric type; integer division truncates toward zero and its
 * divisor must not be zero.
 */
export const div = binary('div');
/** Remainder of two u32 or i32 operands, with the dividend's sign; the divisor must not be zero. */
export const rem = binary('rem');
/**
 * The smaller of two operands of one numeric type; in the IR's semantics a NaN operand yields the
 * other one.
 */
export const min = binary('min');
/**
 * The larger of two operands of one numeric type; in the IR's semantics a NaN operand yields the
 * other one.
 */
export const max = binary('max');
/** Bitwise and of two u32 or i32, logical and of two bools (both sides are evaluated). */
export const and = binary('and');
/** Bitwise or of two u32 or i32, logical or of two bools (both sides are evaluated). */
export const or = binary('or');
/** Bitwise exclusive or of two u32 or i32, inequality of two bools. */
export const xor = binary('xor');
/** Shifts a u32 or i32 left by a u32 amount, which must be below 32. */
export const shl = binary('shl');
/** Shifts a u32 or i32 right by a u32 amount below 32: logical for u32, arithmetic for i32. */
export const shr = binary('shr');
/** Whether two operands of one type (bool included) are equal; false when a float is NaN. */
export const eq = binary('eq');
/** Whether two operands of one type (bool included) differ; true when a float is NaN. */
export const ne = binary('ne');
/** Whether a < b, for two numeric operands of one type; false when a float is NaN. */
export const lt = binary('lt');
/** Whether a <= b, for two numeric operands of one type; false when a float is NaN. */
export const le = binary('le');
/** Whether a > b, for two numeric operands of one type; false when a float is NaN. */
export const gt = binary('gt');
/** Whether a >= b, for two numeric operands of one type; false when a float is NaN. */
export const ge = binary('ge');

/** `a * b + c` with a single rounding; all three share one float type. */
export const fma = (a: Expr, b: Expr, c: Expr): Expr => ({
  op: 'fma',
  type: a.type,
  args: [a, b, c],
});
/**
 * `ifTrue` where the bool `condition` holds, else `ifFalse`; both sides are evaluated and share a
 * type.
 */
export const select = (condition: Expr, ifTrue: Expr, ifFalse: Expr): Expr => ({
  op: 'select',
  type: ifTrue.type,
  args: [condition, ifTrue, ifFalse],
});
/**
 * Converts a numeric `value` to numeric `type`: float to integer truncates toward zero and
 * saturates (NaN gives 0), to a float rounds to nearest even, integer to integer wraps.
 */
export const convert = (type: ScalarType, value: Expr): Expr => ({
  op: 'convert',
  type,
  args: [value],
});
/** Reinterprets the 32 bits of an f32, i32 or u32 as another of those three types. */
export const bitcast = (type: ScalarType, value: Expr): Expr => ({
  op: 'bitcast',
  type,
  args: [value],
});
/** The f16 in the low (0) or high (1) half of a u32 word, as an exact f32. */
export const unpackHalf = (word: Expr, half: 0 | 1): UnpackHalfExpr => ({
  op: 'unpack_half',
  type: 'f32',
  half,
  args: [word],
});
