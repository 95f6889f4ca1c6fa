import type {
  Axis,
  BinaryOp,
  BuiltinName,
  ConstExpr,
  Expr,
  PackHalfExpr,
  UnaryOp,
  UnpackHalfExpr,
  VarExpr,
} from './body.js';
import { COMPARISON_OPS } from './body.js';
import type { ScalarType } from './types.js';
import type { ExpressionMethods, Literal, Local, Value } from './expression-methods.js';

export type * from './expression-methods.js';

// Expression constructors used by kernel authors; result types follow the type checker's rules.
// Operands are typed (`Expr<'u32'>`…), so mixing types is a compile error, and a plain number is
// accepted where another operand fixes its type: it becomes a const of that type.

/**
 * The type two operands of types L and R share: L when they agree, the known one when the other is
 * the whole ScalarType (an untyped `Expr`), and never when they differ, which rejects the call.
 */
export type Meet<L extends ScalarType, R extends ScalarType> = ScalarType extends L
  ? R
  : ScalarType extends R
    ? L
    : [L] extends [R]
      ? L
      : never;

/**
 * An operand that must agree with type L: an expression of L (or untyped, or of any type when L is
 * untyped), or a plain number; R is the expression's own type, inferred at the call.
 */
export type Operand<L extends ScalarType, R extends ScalarType = L> =
  (Expr<R> & Expr<[Meet<L, R>] extends [never] ? never : ScalarType>) | number;

/** `value` itself, or for a plain number the const of `type`. */
export function operand<T extends ScalarType>(type: T, value: Expr | number): Expr<T> {
  return (typeof value === 'number' ? constant(type, value) : value) as Expr<T>;
}

/** A read of the local `name` of `type` (what the builder's declarations return). */
export const local = <T extends ScalarType>(type: T, name: string): Local<T> =>
  node<T, VarExpr<T>>({ op: 'var', type, name });

/** A literal of `type`; validation checks that `value` fits it. */
export const constant = <T extends ScalarType>(type: T, value: number | boolean): Literal<T> =>
  node<T, ConstExpr<T>>({ op: 'const', type, value });
/** An f32 literal; `value` must be finite and within f32 range. */
export const f32 = (value: number): Literal<'f32'> => constant('f32', value);
/** An f16 literal; `value` must be finite and within ±65504. */
export const f16 = (value: number): Literal<'f16'> => constant('f16', value);
/** A u32 literal; `value` must be an integer in [0, 2^32). */
export const u32 = (value: number): Literal<'u32'> => constant('u32', value);
/** An i32 literal; `value` must be an integer in [-2^31, 2^31). */
export const i32 = (value: number): Literal<'i32'> => constant('i32', value);
/** A bool literal; bool values live in registers only, never in memory. */
export const bool = (value: boolean): Literal<'bool'> => constant('bool', value);

/**
 * A u32 builtin; give `axis` for `workgroup_id` and `num_workgroups` and for no other
 * (BodyBuilder's `localId()`, `workgroupId()`… are shorter).
 */
export function builtin(name: BuiltinName, axis?: Axis): Value<'u32'> {
  return node<'u32'>(
    axis === undefined
      ? { op: 'builtin', type: 'u32', name }
      : { op: 'builtin', type: 'u32', name, axis },
  );
}

function unary(op: UnaryOp) {
  return <T extends ScalarType>(value: Expr<T>): Value<T> =>
    node<T>({ op, type: value.type, args: [value] } as Expr<T>);
}

/**
 * A binary op over operands of one type, yielding `R` (that type, or bool for a comparison); one
 * operand may be a plain number, which becomes a const of the other's type.
 */
export interface Binary<R extends ScalarType | 'same'> {
  <L extends ScalarType, T extends ScalarType>(
    left: Expr<L>,
    right: Operand<L, T>,
  ): Value<R extends ScalarType ? R : Meet<L, T>>;
  <T extends ScalarType>(left: number, right: Expr<T>): Value<R extends ScalarType ? R : T>;
}

function binary(op: BinaryOp): Binary<'same'>;
function binary(op: BinaryOp, comparison: true): Binary<'bool'>;
function binary(op: BinaryOp): Binary<'same'> | Binary<'bool'> {
  const comparison = COMPARISON_OPS.includes(op);
  return (left: Expr | number, right: Expr | number): Value => {
    // The signatures let at most one side be a number; the other fixes its type.
    const type = typeof left === 'number' ? (right as Expr).type : left.type;
    return node({
      op,
      type: comparison ? 'bool' : type,
      args: [operand(type, left), operand(type, right)],
    });
  };
}

/** A shift of an integer by a u32 amount (a number becomes a u32 const). */
function shift(op: 'shl' | 'shr') {
  return <T extends ScalarType, A extends ScalarType>(
    value: Expr<T>,
    amount: Operand<'u32', A>,
  ): Value<T> =>
    node<T>({ op, type: value.type, args: [value, operand('u32', amount)] } as Expr<T>);
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
export const shl = shift('shl');
/** Shifts a u32 or i32 right by a u32 amount below 32: logical for u32, arithmetic for i32. */
export const shr = shift('shr');
/** Whether two operands of one type (bool included) are equal; false when a float is NaN. */
export const eq = binary('eq', true);
/** Whether two operands of one type (bool included) differ; true when a float is NaN. */
export const ne = binary('ne', true);
/** Whether a < b, for two numeric operands of one type; false when a float is NaN. */
export const lt = binary('lt', true);
/** Whether a <= b, for two numeric operands of one type; false when a float is NaN. */
export const le = binary('le', true);
/** Whether a > b, for two numeric operands of one type; false when a float is NaN. */
export const gt = binary('gt', true);
/** Whether a >= b, for two numeric operands of one type; false when a float is NaN. */
export const ge = binary('ge', true);

/** `a * b + c` with a single rounding; all three share one float type (numbers become consts). */
export const fma = <A extends ScalarType, B extends ScalarType, C extends ScalarType>(
  a: Expr<A>,
  b: Operand<A, B>,
  c: Operand<A, C>,
): Value<A> =>
  node<A>({
    op: 'fma',
    type: a.type,
    args: [a, operand(a.type, b), operand(a.type, c)],
  } as Expr<A>);

/**
 * `c` plus the dot product of the four sign-extended bytes (little-endian) of the u32 words `a` and
 * `b`, wrapping to i32 (PTX `dp4a.s32.s32`, WGSL `dot4I8Packed`); numbers become consts.
 */
export const dot4I8 = <A extends ScalarType, B extends ScalarType, C extends ScalarType>(
  a: Operand<'u32', A>,
  b: Operand<'u32', B>,
  c: Operand<'i32', C>,
): Value<'i32'> =>
  node<'i32'>({
    op: 'dot4_i8',
    type: 'i32',
    args: [operand('u32', a), operand('u32', b), operand('i32', c)],
  });

/**
 * The low 32 bits of `(hi · 2^32 + lo) >> shift` for u32 words (PTX `shf.r.clamp`): `lo` at a
 * shift of 0, undefined from 32 on like every shift; numbers become consts.
 */
export const funnelShiftRight = <L extends ScalarType, H extends ScalarType, S extends ScalarType>(
  lo: Operand<'u32', L>,
  hi: Operand<'u32', H>,
  shift: Operand<'u32', S>,
): Value<'u32'> =>
  node<'u32'>({
    op: 'funnel_shift_right',
    type: 'u32',
    args: [operand('u32', lo), operand('u32', hi), operand('u32', shift)],
  });

/**
 * `(a & mask) | (b & ~mask)` for u32 words (PTX `lop3`, one instruction): `a`'s bits where `mask`
 * is 1, `b`'s elsewhere; numbers become consts.
 */
export const bitSelect = <M extends ScalarType, A extends ScalarType, B extends ScalarType>(
  mask: Operand<'u32', M>,
  a: Operand<'u32', A>,
  b: Operand<'u32', B>,
): Value<'u32'> =>
  node<'u32'>({
    op: 'bit_select',
    type: 'u32',
    args: [operand('u32', mask), operand('u32', a), operand('u32', b)],
  });

/**
 * `ifTrue` where the bool `condition` holds, else `ifFalse`; both sides are evaluated and share a
 * type, and one of them may be a plain number.
 */
export function select<C extends ScalarType, L extends ScalarType, T extends ScalarType>(
  condition: Operand<'bool', C>,
  ifTrue: Expr<L>,
  ifFalse: Operand<L, T>,
): Value<Meet<L, T>>;
export function select<C extends ScalarType, T extends ScalarType>(
  condition: Operand<'bool', C>,
  ifTrue: number,
  ifFalse: Expr<T>,
): Value<T>;
export function select(
  condition: Expr | number,
  ifTrue: Expr | number,
  ifFalse: Expr | number,
): Value {
  const type = typeof ifTrue === 'number' ? (ifFalse as Expr).type : ifTrue.type;
  return node({
    op: 'select',
    type,
    args: [operand('bool', condition), operand(type, ifTrue), operand(type, ifFalse)],
  });
}

/**
 * Converts a numeric `value` to numeric `type`: float to integer truncates toward zero and
 * saturates (NaN gives 0), to a float rounds to nearest even, integer to integer wraps.
 */
export const convert = <T extends ScalarType>(type: T, value: Expr): Value<T> =>
  node<T>({ op: 'convert', type, args: [value] } as Expr<T>);
/** Reinterprets the 32 bits of an f32, i32 or u32 as another of those three types. */
export const bitcast = <T extends 'f32' | 'i32' | 'u32'>(type: T, value: Expr): Value<T> =>
  node<T>({ op: 'bitcast', type, args: [value] } as Expr<T>);
/** The f16 in the low (0) or high (1) half of a u32 word, as an exact f32. */
export const unpackHalf = <W extends ScalarType>(
  word: Expr<W> & Expr<[Meet<'u32', W>] extends [never] ? never : ScalarType>,
  half: 0 | 1,
): UnpackHalfExpr & Value<'f32'> =>
  node<'f32', UnpackHalfExpr>({ op: 'unpack_half', type: 'f32', half, args: [word] });
/**
 * The u32 holding `lo` (low 16 bits) and `hi` (high 16 bits) rounded to f16, to nearest even: the
 * inverse of `unpackHalf`. A plain number becomes an f32 const.
 */
export const packHalf = <L extends ScalarType, H extends ScalarType>(
  lo: Operand<'f32', L>,
  hi: Operand<'f32', H>,
): PackHalfExpr & Value<'u32'> =>
  node<'u32', PackHalfExpr>({
    op: 'pack_half',
    type: 'u32',
    args: [operand('f32', lo), operand('f32', hi)],
  });

// The prototype every expression above is made with: its methods are the functions above with the
// expression first, and it holds no data, so an expression's own fields are the JSON it stands for.
const methods: { readonly [name: string]: (first: Expr, ...operands: never[]) => Expr } = {
  add, sub, mul, div, rem, min, max, and, or, xor, eq, ne, lt, le, gt, ge, shl, shr,
  neg, abs, not, sqrt, rsqrt, rcp, exp2, log2, floor, fma, funnelShiftRight, bitSelect, unpackHalf,
  select,
  dot4I8: (a: Expr, b: Expr | number, c: Expr | number = 0) => dot4I8(a, b, c),
  to: (value: Expr, type: ScalarType) => convert(type, value),
  bitcast: (value: Expr, type: 'f32' | 'i32' | 'u32') => bitcast(type, value),
}; // prettier-ignore

/**
 * The shared prototype of expressions made here: frozen, its methods non-enumerable, so reading an
 * expression's own fields (as JSON, hashing and validation do) sees only its data.
 */
export const EXPRESSION_PROTOTYPE: object = Object.freeze(
  Object.create(
    Object.prototype,
    Object.fromEntries(
      Object.entries(methods).map(([name, build]) => [
        name,
        {
          value(this: Expr, ...operands: never[]) {
            return build(this, ...operands);
          },
        },
      ]),
    ),
  ),
);

/** `fields` as an expression with methods: a fresh object on the shared prototype. */
function node<T extends ScalarType, E extends Expr<T> = Expr<T>>(
  fields: E,
): E & ExpressionMethods<T> {
  return Object.assign(Object.create(EXPRESSION_PROTOTYPE), fields);
}

/** `expression` with methods: itself when it has them, else a shallow copy on the prototype. */
export function fluent<T extends ScalarType>(expression: Expr<T>): Value<T> {
  return Object.getPrototypeOf(expression) === EXPRESSION_PROTOTYPE
    ? (expression as Value<T>)
    : node(expression);
}
