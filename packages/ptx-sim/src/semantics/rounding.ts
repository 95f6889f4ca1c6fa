// Correct IEEE rounding of real values to f16, bf16, f32 and f64 in the four PTX rounding modes.
//
// A value to round is given as a double x plus, when x is not exact, the sign of (exact − x).
// x must be the exact value or its round-to-nearest double: then no boundary of a narrower format
// lies strictly between x and the exact value (format values and midpoints are doubles), so the
// residual sign settles the only ambiguous cases — x exactly on a format value (directed modes)
// or exactly on a midpoint (nearest). That is what makes double arithmetic plus an error term
// (TwoSum) or an exact check give correctly rounded f32 results without double rounding.
import { exponentOf, pow2 } from './float-bits.js';

/** PTX rounding modifiers: nearest-even, toward zero, toward −∞, toward +∞. */
export type Rounding = 'rn' | 'rz' | 'rm' | 'rp';

export interface FloatFormat {
  readonly name: 'f16' | 'bf16' | 'f32' | 'f64';
  /** Significand bits, the hidden bit included. */
  readonly precision: number;
  /** Exponent of the smallest normal number. */
  readonly minExponent: number;
  readonly maxExponent: number;
  readonly maxFinite: number;
  readonly minNormal: number;
}

const format = (
  name: FloatFormat['name'],
  precision: number,
  maxExponent: number,
): FloatFormat => ({
  name,
  precision,
  minExponent: 1 - maxExponent,
  maxExponent,
  maxFinite: (2 - pow2(1 - precision)) * pow2(maxExponent),
  minNormal: pow2(1 - maxExponent),
});

export const F16 = format('f16', 11, 15);
export const BF16 = format('bf16', 8, 127);
export const F32 = format('f32', 24, 127);
export const F64 = format('f64', 53, 1023);

export const ROUNDINGS: readonly Rounding[] = ['rn', 'rz', 'rm', 'rp'];

/** Whether a mode rounds a value of the given sign toward zero (down in magnitude). */
const towardZero = (mode: Rounding, negative: boolean): boolean =>
  mode === 'rz' || (mode === 'rm' && !negative) || (mode === 'rp' && negative);

/** The result for an exact value beyond the format's range: ±max finite or ±∞ by mode. */
export function overflowResult(negative: boolean, fmt: FloatFormat, mode: Rounding): number {
  const magnitude = mode !== 'rn' && towardZero(mode, negative) ? fmt.maxFinite : Infinity;
  return negative ? -magnitude : magnitude;
}

/**
 * Rounds to `fmt` the value that x stands for (see the file comment). `residual` returns the sign
 * of (exact − x); it is called only when needed, and omitted means x is exact.
 */
export function roundToFormat(
  x: number,
  fmt: FloatFormat,
  mode: Rounding,
  residual?: () => number,
): number {
  // NaN and ±∞ pass through (x − x is NaN for them).
  if (x - x !== 0) return x;
  if (residual === undefined && mode === 'rn' && fmt === F32) return Math.fround(x);
  // Sign of (exact − x), read from `residual` at most once and only where it matters.
  let sign = 0;
  if (x === 0) {
    if (residual === undefined) return x;
    sign = Math.sign(residual());
    if (sign === 0) return x;
    residual = undefined;
  }
  const negative = x === 0 ? sign < 0 : x < 0;
  const magnitude = Math.abs(x);
  const exponent =
    magnitude === 0 ? fmt.minExponent : Math.max(exponentOf(magnitude), fmt.minExponent);
  const ulp = pow2(exponent - fmt.precision + 1);
  const scaled = magnitude / ulp;
  const units = Math.floor(scaled);
  const fraction = scaled - units;
  const down = mode !== 'rn' && towardZero(mode, negative);
  let result: number;
  if (fraction === 0) {
    if (mode !== 'rn' && residual !== undefined) sign = Math.sign(residual());
    // Sign of (|exact| − |x|).
    const side = mode === 'rn' ? 0 : negative ? -sign : sign;
    if (side === 0) result = magnitude;
    else if (side > 0) result = down ? magnitude : magnitude + ulp;
    else {
      // The exact value lies just below a format value: its predecessor is half an ulp down at a
      // binade start.
      const atBinadeStart = units === 2 ** (fmt.precision - 1) && exponent > fmt.minExponent;
      result = down ? magnitude - (atBinadeStart ? ulp / 2 : ulp) : magnitude;
    }
  } else {
    const lower = units * ulp;
    let up: boolean;
    if (mode !== 'rn') up = !down;
    else if (fraction !== 0.5) up = fraction > 0.5;
    else {
      if (residual !== undefined) sign = Math.sign(residual());
      const side = negative ? -sign : sign;
      up = side === 0 ? units % 2 === 1 : side > 0;
    }
    result = up ? lower + ulp : lower;
  }
  if (result > fmt.maxFinite) result = down ? fmt.maxFinite : Infinity;
  return negative ? -result : result;
}

/** Knuth's TwoSum: the exact error (a + b) − fl(a + b) for finite a, b whose sum does not overflow. */
export function twoSumError(a: number, b: number, sum: number): number {
  const bVirtual = sum - a;
  const aVirtual = sum - bVirtual;
  return a - aVirtual + (b - bVirtual);
}

/**
 * Rounds the exact sum a + b of two doubles (the sum of two format values, or a product that is
 * exact in double plus an addend) to `fmt`. Handles the IEEE sign of an exact zero sum.
 */
export function roundSum(a: number, b: number, fmt: FloatFormat, mode: Rounding): number {
  const sum = a + b;
  if (sum !== sum) return sum;
  if (sum === 0) return exactZeroSum(a, b, mode);
  if (sum === Infinity || sum === -Infinity) {
    return Number.isFinite(a) && Number.isFinite(b) ? overflowResult(sum < 0, fmt, mode) : sum;
  }
  const error = twoSumError(a, b, sum);
  if (fmt === F64) {
    if (mode === 'rn' || error === 0) return sum;
    return roundToFormat(sum, fmt, mode, () => error);
  }
  return error === 0 ? roundToFormat(sum, fmt, mode) : roundToFormat(sum, fmt, mode, () => error);
}

/** IEEE sign of an exactly-zero sum: −0 only for (−0) + (−0), or under .rm for cancellation. */
export function exactZeroSum(a: number, b: number, mode: Rounding): number {
  if (a === 0 && b === 0 && 1 / a < 0 && 1 / b < 0) return -0;
  return mode === 'rm' ? -0 : 0;
}

/** Rounds to an integral value (cvt .rni/.rzi/.rmi/.rpi), keeping the sign of a zero result. */
export function roundToIntegral(x: number, mode: Rounding): number {
  if (!Number.isFinite(x)) return x;
  let result: number;
  if (mode === 'rz') result = Math.trunc(x);
  else if (mode === 'rm') result = Math.floor(x);
  else if (mode === 'rp') result = Math.ceil(x);
  else {
    const floor = Math.floor(x);
    const fraction = x - floor;
    result =
      fraction < 0.5 ? floor : fraction > 0.5 ? floor + 1 : floor % 2 === 0 ? floor : floor + 1;
  }
  return result === 0 && x < 0 ? -0 : result === 0 && x > 0 ? 0 : result;
}

/** Flushes a subnormal of `fmt` to a zero of the same sign (.ftz). */
export function flushSubnormal(x: number, fmt: FloatFormat): number {
  return x !== 0 && Math.abs(x) < fmt.minNormal ? (x < 0 ? -0 : 0) : x;
}

/** .sat: clamps to [0, 1]; NaN and −0 become +0. */
export function saturate(x: number): number {
  return x > 0 ? (x < 1 ? x : 1) : 0;
}
