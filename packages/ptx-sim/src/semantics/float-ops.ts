// Correctly rounded float arithmetic on values held as doubles, for every format and PTX mode.
//
// f32/f16/bf16: products of two such values are exact in double; sums get TwoSum's exact error;
// quotients and square roots need the residual only when the double result sits on a rounding
// boundary of the format (≤ 25 significant bits), where q·b and q·q are exact in double. f64 uses
// JS arithmetic (IEEE round-to-nearest) directly and exact dyadic arithmetic for fma and for the
// residuals of the directed modes.
import { dyadicAdd, dyadicCompare, dyadicMul, dyadicOf, roundDyadic } from './dyadic.js';
import { signBit } from './float-bits.js';
import {
  exactZeroSum,
  F64,
  overflowResult,
  roundSum,
  roundToFormat,
  type FloatFormat,
  type Rounding,
} from './rounding.js';

export function addRounded(a: number, b: number, fmt: FloatFormat, mode: Rounding): number {
  return roundSum(a, b, fmt, mode);
}

export function mulRounded(a: number, b: number, fmt: FloatFormat, mode: Rounding): number {
  const product = a * b;
  if (fmt !== F64) return roundToFormat(product, fmt, mode);
  if (mode === 'rn' || product !== product) return product;
  if (a === 0 || b === 0 || !Number.isFinite(a) || !Number.isFinite(b)) return product;
  const negative = signBit(a) !== signBit(b);
  if (!Number.isFinite(product)) return overflowResult(negative, fmt, mode);
  if (product === 0) return roundToFormat(product, fmt, mode, () => (negative ? -1 : 1));
  return roundToFormat(product, fmt, mode, () =>
    dyadicCompare(dyadicMul(dyadicOf(a), dyadicOf(b)), dyadicOf(product)),
  );
}

export function fmaRounded(
  a: number,
  b: number,
  c: number,
  fmt: FloatFormat,
  mode: Rounding,
): number {
  if (fmt !== F64) return roundSum(a * b, c, fmt, mode);
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) return a * b + c;
  if (a === 0 || b === 0) return roundSum(a * b, c, fmt, mode);
  const exact = dyadicAdd(dyadicMul(dyadicOf(a), dyadicOf(b)), dyadicOf(c));
  if (exact.mantissa === 0n) return exactZeroSum(a * b, c, mode);
  return roundDyadic(exact, fmt, mode);
}

export function divRounded(a: number, b: number, fmt: FloatFormat, mode: Rounding): number {
  const quotient = a / b;
  if (quotient !== quotient) return quotient;
  const exactSign = signBit(a) !== signBit(b) ? -1 : 1;
  if (quotient === 0) {
    // Zero dividend or infinite divisor is exact; otherwise the f64 quotient underflowed.
    return a === 0 || !Number.isFinite(b)
      ? quotient
      : roundToFormat(quotient, fmt, mode, () => exactSign);
  }
  if (!Number.isFinite(quotient)) {
    return b === 0 || !Number.isFinite(a) ? quotient : overflowResult(exactSign < 0, fmt, mode);
  }
  if (fmt !== F64)
    return roundToFormat(quotient, fmt, mode, () => Math.sign(a - quotient * b) * Math.sign(b));
  if (mode === 'rn') return quotient;
  return roundToFormat(quotient, fmt, mode, () => {
    const remainder = dyadicCompare(dyadicOf(a), dyadicMul(dyadicOf(quotient), dyadicOf(b)));
    return remainder * Math.sign(b);
  });
}

export function sqrtRounded(a: number, fmt: FloatFormat, mode: Rounding): number {
  if (a < 0) return NaN;
  if (a === 0 || a !== a || a === Infinity) return a;
  const root = Math.sqrt(a);
  if (fmt !== F64) return roundToFormat(root, fmt, mode, () => Math.sign(a - root * root));
  if (mode === 'rn') return root;
  return roundToFormat(root, fmt, mode, () =>
    dyadicCompare(dyadicOf(a), dyadicMul(dyadicOf(root), dyadicOf(root))),
  );
}
