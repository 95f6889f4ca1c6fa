import type { ConstExpr, Expr, VarExpr } from './body.js';
import type { Meet, Operand } from './expressions.js';
import type { ScalarType } from './types.js';

// The fluent face of an expression: `tile.add(block).mul(64)` for `ir.mul(ir.add(tile, block), 64)`.
// The methods live on one shared, frozen prototype, so an expression stays plain JSON data (its own
// fields are its only fields) and a spec serializes, hashes and validates exactly as before.

/** `F` when an expression of type T may stand where type U is wanted, else never (not callable). */
export type When<T extends ScalarType, U extends ScalarType, F> = [Meet<U, T>] extends [never]
  ? never
  : F;

/**
 * The methods an expression made by `ir.*` or a BodyBuilder carries; each is the `ir` function of
 * the same name with the expression as its first operand.
 */
export interface ExpressionMethods<T extends ScalarType> {
  /** `ir.add(this, right)`. */
  add<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.sub(this, right)`. */
  sub<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.mul(this, right)`. */
  mul<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.div(this, right)`. */
  div<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.rem(this, right)`. */
  rem<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.min(this, right)`. */
  min<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.max(this, right)`. */
  max<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.and(this, right)`. */
  and<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.or(this, right)`. */
  or<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.xor(this, right)`. */
  xor<O extends ScalarType>(right: Operand<T, O>): Value<Meet<T, O>>;
  /** `ir.eq(this, right)`. */
  eq<O extends ScalarType>(right: Operand<T, O>): Value<'bool'>;
  /** `ir.ne(this, right)`. */
  ne<O extends ScalarType>(right: Operand<T, O>): Value<'bool'>;
  /** `ir.lt(this, right)`. */
  lt<O extends ScalarType>(right: Operand<T, O>): Value<'bool'>;
  /** `ir.le(this, right)`. */
  le<O extends ScalarType>(right: Operand<T, O>): Value<'bool'>;
  /** `ir.gt(this, right)`. */
  gt<O extends ScalarType>(right: Operand<T, O>): Value<'bool'>;
  /** `ir.ge(this, right)`. */
  ge<O extends ScalarType>(right: Operand<T, O>): Value<'bool'>;
  /** `ir.shl(this, amount)`: the amount is a u32. */
  shl<A extends ScalarType>(amount: Operand<'u32', A>): Value<T>;
  /** `ir.shr(this, amount)`: the amount is a u32. */
  shr<A extends ScalarType>(amount: Operand<'u32', A>): Value<T>;
  /** `ir.neg(this)`. */
  neg(): Value<T>;
  /** `ir.abs(this)`. */
  abs(): Value<T>;
  /** `ir.not(this)`. */
  not(): Value<T>;
  /** `ir.sqrt(this)`. */
  sqrt(): Value<T>;
  /** `ir.rsqrt(this)`. */
  rsqrt(): Value<T>;
  /** `ir.rcp(this)`. */
  rcp(): Value<T>;
  /** `ir.exp2(this)`. */
  exp2(): Value<T>;
  /** `ir.log2(this)`. */
  log2(): Value<T>;
  /** `ir.floor(this)`. */
  floor(): Value<T>;
  /** `ir.fma(this, b, c)`: this · b + c, one rounding. */
  fma<B extends ScalarType, C extends ScalarType>(b: Operand<T, B>, c: Operand<T, C>): Value<T>;
  /** `ir.convert(type, this)`. */
  to<U extends ScalarType>(type: U): Value<U>;
  /** `ir.bitcast(type, this)`. */
  bitcast<U extends 'f32' | 'i32' | 'u32'>(type: U): Value<U>;
  /** `ir.dot4I8(this, b, c)` on a u32 word; `c` is 0 when left out. */
  readonly dot4I8: When<
    T,
    'u32',
    <B extends ScalarType, C extends ScalarType>(
      b: Operand<'u32', B>,
      c?: Operand<'i32', C>,
    ) => Value<'i32'>
  >;
  /** `ir.funnelShiftRight(this, hi, shift)` on a u32 word (this is the low word). */
  readonly funnelShiftRight: When<
    T,
    'u32',
    <H extends ScalarType, S extends ScalarType>(
      hi: Operand<'u32', H>,
      shift: Operand<'u32', S>,
    ) => Value<'u32'>
  >;
  /** `ir.bitSelect(this, a, b)` on a u32 mask: a's bits where it is 1, b's elsewhere. */
  readonly bitSelect: When<
    T,
    'u32',
    <A extends ScalarType, B extends ScalarType>(
      a: Operand<'u32', A>,
      b: Operand<'u32', B>,
    ) => Value<'u32'>
  >;
  /** `ir.unpackHalf(this, half)` on a u32 word. */
  readonly unpackHalf: When<T, 'u32', (half: 0 | 1) => Value<'f32'>>;
  /** `ir.select(this, ifTrue, ifFalse)` on a bool. */
  readonly select: When<
    T,
    'bool',
    <L extends ScalarType, F extends ScalarType>(
      ifTrue: Expr<L>,
      ifFalse: Operand<L, F>,
    ) => Value<Meet<L, F>>
  >;
}

/** An expression of type T with its methods (what `ir.*` and the builder return). */
export type Value<T extends ScalarType = ScalarType> = Expr<T> & ExpressionMethods<T>;

/** A local's read with its methods (what `let`, a `for` index and the other declarations return). */
export type Local<T extends ScalarType = ScalarType> = VarExpr<T> & ExpressionMethods<T>;

/** A literal with its methods. */
export type Literal<T extends ScalarType = ScalarType> = ConstExpr<T> & ExpressionMethods<T>;
