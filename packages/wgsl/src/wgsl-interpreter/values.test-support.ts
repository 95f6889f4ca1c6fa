import { f16Bits, f16FromBits } from '@forge/ir';

// WGSL's scalar semantics on JS numbers: u32 and i32 wrap, f32 and f16 round after every operation,
// integer division by zero gives the dividend, float-to-integer conversions saturate. Floats are JS
// numbers, which need not keep a NaN's payload: bits carried through an f32 NaN may come back changed.

export type Scalar = 'u32' | 'i32' | 'f32' | 'f16' | 'bool';
/** A value's type: a scalar (width 1) or a vector of 2 to 4 of them. */
export interface ValueType {
  readonly scalar: Scalar;
  readonly width: number;
}
export type Value = number | boolean | readonly number[];

/** A run-time fault in a shader: an access out of bounds, a race, a non-uniform barrier. */
export class WgslExecutionError extends Error {
  override readonly name = 'WgslExecutionError';
}

export const scalarType = (scalar: Scalar): ValueType => ({ scalar, width: 1 });
export const typeName = (type: ValueType): string =>
  type.width === 1 ? type.scalar : `vec${type.width}<${type.scalar}>`;

// Read once: under vitest an `export *` re-export is a getter, a cost on every call.
const halfBits = f16Bits;
// Every f16's value by its bits, from f16FromBits once: a lookup instead of a power of two a call.
const HALF_VALUES = Float64Array.from({ length: 0x10000 }, (_, bits) => f16FromBits(bits));
const halfValue = (bits: number): number => HALF_VALUES[bits] ?? 0;
/** roundToF16: to the nearest f16's bits, then their value. */
const toF16 = (value: number): number => halfValue(halfBits(value));
const toF32 = (value: number): number => Math.fround(value);
const toU32 = (value: number): number => value >>> 0;
const toI32 = (value: number): number => value | 0;
const unchanged = (value: number): number => value;

/** The rounding or wrapping into `scalar`'s range of the result of an operation of that type. */
export function rounding(scalar: Scalar): (value: number) => number {
  switch (scalar) {
    case 'f32':
      return toF32;
    case 'f16':
      return toF16;
    case 'u32':
      return toU32;
    case 'i32':
      return toI32;
    case 'bool':
      return unchanged;
  }
}

/** A number rounded or wrapped into `scalar`'s range, as the result of an operation of that type. */
export const wrap = (scalar: Scalar, value: number): number => rounding(scalar)(value);

/** `T(x)`: floats round to nearest; into integers truncation toward zero, saturating at the largest f32 in range. */
export function convert(value: number | boolean, from: Scalar, to: Scalar): number | boolean {
  if (to === 'bool') return value !== 0 && value !== false;
  const number = typeof value === 'boolean' ? Number(value) : value;
  if (from === 'f32' || from === 'f16') {
    if (to === 'u32')
      return Number.isNaN(number) ? 0 : Math.min(Math.max(Math.trunc(number), 0), 4294967040);
    if (to === 'i32')
      return Number.isNaN(number)
        ? 0
        : Math.min(Math.max(Math.trunc(number), -2147483648), 2147483520);
  }
  return wrap(to, number);
}

const integerMinimum = (a: number, b: number): number => (a < b ? a : b);
const integerMaximum = (a: number, b: number): number => (a > b ? a : b);
// IEEE minNum/maxNum: a NaN operand yields the other one.
const floatMinimum = (a: number, b: number): number =>
  Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.min(a, b);
const floatMaximum = (a: number, b: number): number =>
  Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.max(a, b);

type Binary = (a: number, b: number) => number;

function divide(scalar: Scalar): Binary {
  if (scalar === 'u32') return (a, b) => (b === 0 ? a : Math.floor(a / b));
  if (scalar === 'i32')
    return (a, b) => (b === 0 || (a === -2147483648 && b === -1) ? a : Math.trunc(a / b) | 0);
  return (a, b) => wrap(scalar, a / b);
}

function remainder(scalar: Scalar): Binary {
  if (scalar === 'u32' || scalar === 'i32')
    // `| 0` turns JS's -0 (from -4 % 2) into the 0 an integer is.
    return (a, b) => (b === 0 || (a === -2147483648 && b === -1) ? 0 : (a % b) | 0);
  return (a, b) => wrap(scalar, a - b * Math.trunc(a / b));
}

/** The arithmetic and bitwise binary operators on numbers of one scalar type. */
export function arithmetic(operator: string, scalar: Scalar): Binary | undefined {
  const rounded = rounding(scalar);
  const round =
    (f: Binary): Binary =>
    (a, b) =>
      rounded(f(a, b));
  switch (operator) {
    case '+':
      return round((a, b) => a + b);
    case '-':
      return round((a, b) => a - b);
    case '*':
      return scalar === 'u32' || scalar === 'i32'
        ? round((a, b) => Math.imul(a, b))
        : round((a, b) => a * b);
    case '/':
      return divide(scalar);
    case '%':
      return remainder(scalar);
    case '&':
      return round((a, b) => a & b);
    case '|':
      return round((a, b) => a | b);
    case '^':
      return round((a, b) => a ^ b);
    case '<<':
      return round((a, b) => a << (b & 31));
    case '>>':
      return scalar === 'i32' ? (a, b) => a >> (b & 31) : (a, b) => a >>> (b & 31);
    default:
      return undefined;
  }
}

export const COMPARISONS: Readonly<Record<string, (a: Value, b: Value) => boolean>> = {
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => (a as number) < (b as number),
  '<=': (a, b) => (a as number) <= (b as number),
  '>': (a, b) => (a as number) > (b as number),
  '>=': (a, b) => (a as number) >= (b as number),
};

/**
 * Builtin functions of scalar arguments, by name; each returns a number of the first argument's
 * type. WGSL lets `fma` round the product first: `fusedFma` false does, as lavapipe and SwiftShader.
 */
export function scalarFunction(
  name: string,
  scalar: Scalar,
  fusedFma = true,
): ((...args: number[]) => number) | undefined {
  const float = scalar === 'f32' || scalar === 'f16';
  const round = rounding(scalar);
  const unary = (f: (a: number) => number) => (a: number) => round(f(a));
  switch (name) {
    case 'min':
      return float
        ? (a, b) => floatMinimum(a, b as number)
        : (a, b) => integerMinimum(a, b as number);
    case 'max':
      return float
        ? (a, b) => floatMaximum(a, b as number)
        : (a, b) => integerMaximum(a, b as number);
    case 'abs':
      return unary(Math.abs);
    case 'fma':
      return fusedFma
        ? // fmaSemantics: the product and sum in float64, rounded once.
          scalar === 'f16'
          ? (a, b, c) => toF16(a * (b as number) + (c as number))
          : (a, b, c) => Math.fround(a * (b as number) + (c as number))
        : (a, b, c) => round(round(a * (b as number)) + (c as number));
    case 'sqrt':
      return unary(Math.sqrt);
    case 'inverseSqrt':
      return unary((a) => 1 / Math.sqrt(a));
    case 'exp2':
      return unary((a) => 2 ** a);
    case 'log2':
      return unary(Math.log2);
    case 'exp':
      return unary(Math.exp);
    case 'log':
      return unary(Math.log);
    case 'floor':
      return unary(Math.floor);
    default:
      return undefined;
  }
}

/** unpack2x16float: both halves of a u32 as f16, widened to f32. */
export const unpackHalves = (word: number): number[] => [
  halfValue(word & 0xffff),
  halfValue(word >>> 16),
];
/** pack2x16float: both f32s rounded to f16 (nearest even), `lo` in the low half. */
export const packHalves = ([lo, hi]: readonly number[]): number =>
  (halfBits(lo ?? 0) | (halfBits(hi ?? 0) << 16)) >>> 0;
