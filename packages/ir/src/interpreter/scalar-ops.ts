import type { BinaryOp, UnaryOp } from '../body.js';
import { ExecutionError } from '../errors.js';
import { roundToF16 } from '../f16.js';
import type { ScalarType } from '../types.js';
import { divisor, shiftAmount } from './faults.js';

/**
 * A value in the interpreter: a number already rounded to its type for f32, f16, i32 and u32, a
 * boolean for bool.
 */
export type Value = number | boolean;

// Reference semantics of each op, shared by every engine's expectations: f32 results round to
// f32, u32/i32 wrap, float-to-int conversion truncates and saturates, shifts must be < 32.

const scratch = new DataView(new ArrayBuffer(4));

/** Rounds a mathematically exact result to the value set of `type`. */
export function roundTo(type: ScalarType, value: number): number {
  switch (type) {
    case 'f32':
      return Math.fround(value);
    case 'f16':
      return roundToF16(value);
    case 'u32':
      return value >>> 0;
    case 'i32':
      return value | 0;
    case 'bool':
      throw new ExecutionError('bool is not numeric');
  }
}

const num = (value: Value): number => value as number;

/**
 * The reference semantics of each unary op on a value of `type`, rounded to `type`; the interpreter
 * and constant folding share them, so they agree.
 */
export const UNARY_SEMANTICS: Readonly<Record<UnaryOp, (value: Value, type: ScalarType) => Value>> =
  {
    neg: (a, type) => roundTo(type, -num(a)),
    abs: (a, type) => roundTo(type, Math.abs(num(a))),
    not: (a, type) => (type === 'bool' ? !a : roundTo(type, ~num(a))),
    sqrt: (a, type) => roundTo(type, Math.sqrt(num(a))),
    rsqrt: (a, type) => roundTo(type, 1 / Math.sqrt(num(a))),
    rcp: (a, type) => roundTo(type, 1 / num(a)),
    exp2: (a, type) => roundTo(type, 2 ** num(a)),
    log2: (a, type) => roundTo(type, Math.log2(num(a))),
    floor: (a, type) => roundTo(type, Math.floor(num(a))),
  };

/** min/max return the other operand when one is NaN, as PTX min.f32/max.f32 do. */
function pickNumber(choose: (a: number, b: number) => number, a: number, b: number): number {
  if (Number.isNaN(a)) return b;
  return Number.isNaN(b) ? a : choose(a, b);
}

function integerDivide(a: number, b: number, type: ScalarType, remainder: boolean): number {
  divisor(b, remainder);
  if (remainder) return roundTo(type, a % b);
  return roundTo(type, Math.trunc(a / b));
}

/** Binary op semantics; `type` is the operand type. */
export const BINARY_SEMANTICS: Readonly<
  Record<BinaryOp, (a: Value, b: Value, type: ScalarType) => Value>
> = {
  add: (a, b, type) => roundTo(type, num(a) + num(b)),
  sub: (a, b, type) => roundTo(type, num(a) - num(b)),
  mul: (a, b, type) =>
    type === 'u32' || type === 'i32'
      ? roundTo(type, Math.imul(num(a), num(b)))
      : roundTo(type, num(a) * num(b)),
  div: (a, b, type) =>
    type === 'u32' || type === 'i32'
      ? integerDivide(num(a), num(b), type, false)
      : roundTo(type, num(a) / num(b)),
  rem: (a, b, type) => integerDivide(num(a), num(b), type, true),
  min: (a, b) => pickNumber(Math.min, num(a), num(b)),
  max: (a, b) => pickNumber(Math.max, num(a), num(b)),
  and: (a, b, type) =>
    type === 'bool' ? a === true && b === true : roundTo(type, num(a) & num(b)),
  or: (a, b, type) => (type === 'bool' ? a === true || b === true : roundTo(type, num(a) | num(b))),
  xor: (a, b, type) => (type === 'bool' ? a !== b : roundTo(type, num(a) ^ num(b))),
  shl: (a, b, type) => roundTo(type, num(a) << shiftAmount(num(b))),
  shr: (a, b, type) =>
    type === 'i32' ? num(a) >> shiftAmount(num(b)) : num(a) >>> shiftAmount(num(b)),
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  lt: (a, b) => num(a) < num(b),
  le: (a, b) => num(a) <= num(b),
  gt: (a, b) => num(a) > num(b),
  ge: (a, b) => num(a) >= num(b),
};

/** The reference fused multiply-add: a * b + c computed in float64 and rounded once to `type`. */
export function fmaSemantics(a: Value, b: Value, c: Value, type: ScalarType): number {
  return roundTo(type, num(a) * num(b) + num(c));
}

/**
 * The reference 4-way byte dot product: `c` plus the products of the sign-extended little-endian
 * bytes of the u32 words `a` and `b`, wrapping to i32.
 */
export function dot4I8Semantics(a: Value, b: Value, c: Value): number {
  let sum = num(c);
  // `<< 24 - 8k >> 24` sign-extends byte k; each product fits 15 bits, so the sum stays exact.
  for (let shift = 24; shift >= 0; shift -= 8)
    sum += ((num(a) << shift) >> 24) * ((num(b) << shift) >> 24);
  return sum | 0;
}

/** The reference funnel shift: the low word of `(hi · 2^32 + lo) >> shift`, for shifts below 32. */
export function funnelShiftRightSemantics(lo: Value, hi: Value, shift: Value): number {
  const amount = shiftAmount(num(shift));
  // `hi << 32 - 0` would shift by 0 in JS, so a zero shift is lo itself.
  return amount === 0 ? num(lo) >>> 0 : ((num(lo) >>> amount) | (num(hi) << (32 - amount))) >>> 0;
}

/** The reference bit select: `a`'s bits where `mask` is 1, `b`'s where it is 0, as a u32. */
export function bitSelectSemantics(mask: Value, a: Value, b: Value): number {
  return ((num(a) & num(mask)) | (num(b) & ~num(mask))) >>> 0;
}

/** Numeric conversion: float to int truncates toward zero and saturates (NaN gives 0). */
export function convertValue(value: Value, from: ScalarType, to: ScalarType): number {
  const source = num(value);
  if (to === 'f32' || to === 'f16') return roundTo(to, source);
  if (from === 'f32' || from === 'f16') {
    if (Number.isNaN(source)) return 0;
    const [low, high] = to === 'u32' ? [0, 0xffffffff] : [-(2 ** 31), 2 ** 31 - 1];
    return Math.min(high, Math.max(low, Math.trunc(source)));
  }
  return roundTo(to, source);
}

/** Reinterprets the 32 bits of a value of type `from` (f32, i32 or u32) as type `to`. */
export function bitcastValue(value: Value, from: ScalarType, to: ScalarType): number {
  if (from === 'f32') scratch.setFloat32(0, num(value));
  else scratch.setUint32(0, num(value) >>> 0);
  if (to === 'f32') return scratch.getFloat32(0);
  return to === 'u32' ? scratch.getUint32(0) : scratch.getInt32(0);
}
