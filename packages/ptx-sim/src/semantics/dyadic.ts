// Exact arithmetic on finite binary fractions (±m·2^e with a bigint m), for the rare cases double
// arithmetic cannot settle: f64 fma, directed-rounded f64 mul/div/sqrt, 64-bit integer → float.
import { f64ToBits } from './float-bits.js';
import { overflowResult, roundToFormat, type FloatFormat, type Rounding } from './rounding.js';

/** The value (negative ? −1 : 1) · mantissa · 2^exponent; mantissa ≥ 0. */
export interface Dyadic {
  readonly negative: boolean;
  readonly mantissa: bigint;
  readonly exponent: number;
}

/** Exact value of a finite double. */
export function dyadicOf(x: number): Dyadic {
  const bits = f64ToBits(x);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & 0xfffffffffffffn;
  const negative = bits >> 63n === 1n;
  return biased === 0
    ? { negative, mantissa: fraction, exponent: -1074 }
    : { negative, mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

export function dyadicMul(a: Dyadic, b: Dyadic): Dyadic {
  return {
    negative: a.negative !== b.negative,
    mantissa: a.mantissa * b.mantissa,
    exponent: a.exponent + b.exponent,
  };
}

const signed = (d: Dyadic, shift: number): bigint => {
  const m = shift === 0 ? d.mantissa : d.mantissa << BigInt(shift);
  return d.negative ? -m : m;
};

export function dyadicAdd(a: Dyadic, b: Dyadic): Dyadic {
  const exponent = Math.min(a.exponent, b.exponent);
  const sum = signed(a, a.exponent - exponent) + signed(b, b.exponent - exponent);
  return { negative: sum < 0n, mantissa: sum < 0n ? -sum : sum, exponent };
}

export const dyadicNegate = (d: Dyadic): Dyadic => ({ ...d, negative: !d.negative });

/** Sign of (a − b). */
export function dyadicCompare(a: Dyadic, b: Dyadic): number {
  const difference = dyadicAdd(a, dyadicNegate(b));
  return difference.mantissa === 0n ? 0 : difference.negative ? -1 : 1;
}

export function dyadicOfInteger(value: bigint): Dyadic {
  return { negative: value < 0n, mantissa: value < 0n ? -value : value, exponent: 0 };
}

function bitLength(m: bigint): number {
  const hex = m.toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0] as string, 16)));
}

/**
 * Rounds an exact value to `fmt`. A zero value gives +0 (callers decide the sign of exact zeros).
 * First rounds to the nearest double (keeping the residual sign), then to the format.
 */
export function roundDyadic(d: Dyadic, fmt: FloatFormat, mode: Rounding): number {
  const { negative, mantissa, exponent } = d;
  if (mantissa === 0n) return 0;
  const length = bitLength(mantissa);
  const top = exponent + length - 1;
  if (top > 1024) return overflowResult(negative, fmt, mode);
  // Significand bits a double has at this magnitude (fewer in the subnormal range).
  const bits = top >= -1022 ? 53 : 53 - (-1022 - top);
  let x: number;
  let residual: number;
  if (bits < 0) {
    x = 0;
    residual = 1;
  } else if (length <= bits) {
    x = Number(mantissa) * 2 ** exponent;
    residual = 0;
  } else {
    const shift = length - bits;
    const kept = mantissa >> BigInt(shift);
    const rest = mantissa - (kept << BigInt(shift));
    const half = 1n << BigInt(shift - 1);
    const up = rest > half || (rest === half && (kept & 1n) === 1n);
    x = Number(up ? kept + 1n : kept) * 2 ** (exponent + shift);
    residual = up ? -1 : rest > 0n ? 1 : 0;
  }
  if (x === Infinity) return overflowResult(negative, fmt, mode);
  return roundToFormat(negative ? -x : x, fmt, mode, () => (negative ? -residual : residual));
}
