import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dyadicOfInteger, roundDyadic } from './dyadic.js';
import { f32FromBits, f32ToBits } from './float-bits.js';
import {
  BF16,
  F16,
  F32,
  F64,
  roundToFormat,
  roundToIntegral,
  twoSumError,
  type Rounding,
} from './rounding.js';

// Independent reference: the f32 neighbours of x by stepping bit patterns, then the mode's pick.
const nextUpF32 = (y: number): number => {
  if (y === 0) return f32FromBits(1);
  const bits = f32ToBits(y);
  return f32FromBits(y > 0 ? bits + 1 : bits - 1);
};
function referenceF32(x: number, mode: Rounding): number {
  let lower = Math.fround(x);
  if (lower === x) return x;
  if (lower > x) lower = -nextUpF32(-lower);
  const upper = nextUpF32(lower);
  // ±∞ stand in for ±2^128 when placing the midpoint.
  const floorMidpoint = lower === -Infinity ? -(2 ** 128) : lower;
  const ceilingMidpoint = upper === Infinity ? 2 ** 128 : upper;
  if (mode === 'rz') return x > 0 ? lower : upper;
  if (mode === 'rm') return lower;
  if (mode === 'rp') return upper;
  const midpoint = (floorMidpoint + ceilingMidpoint) / 2;
  if (x !== midpoint) return x < midpoint ? lower : upper;
  return (f32ToBits(lower) & 1) === 0 ? lower : upper;
}

const anyDouble = fc.double({ noNaN: true, noDefaultInfinity: true });
const f32Range = fc.double({ min: -(2 ** 129), max: 2 ** 129, noNaN: true });

describe('roundToFormat', () => {
  it('matches Math.fround for exact doubles in .rn', () => {
    fc.assert(
      fc.property(anyDouble, (x) => Object.is(roundToFormat(x, F32, 'rn'), Math.fround(x))),
      {
        numRuns: 3000,
      },
    );
  });

  it('matches stepping neighbours in every directed mode', () => {
    fc.assert(
      fc.property(f32Range, fc.constantFrom<Rounding>('rn', 'rz', 'rm', 'rp'), (x, mode) => {
        const result = roundToFormat(x, F32, mode);
        return x === 0 ? Object.is(result, x) : result === referenceF32(x, mode);
      }),
      { numRuns: 3000 },
    );
  });

  it('uses the residual on format values and midpoints', () => {
    const one = 1;
    const midpoint = 1 + 2 ** -24;
    expect(roundToFormat(one, F32, 'rz', () => -1)).toBe(1 - 2 ** -24);
    expect(roundToFormat(one, F32, 'rp', () => 1)).toBe(1 + 2 ** -23);
    expect(roundToFormat(one, F32, 'rn', () => 1)).toBe(1);
    expect(roundToFormat(midpoint, F32, 'rn')).toBe(1);
    expect(roundToFormat(midpoint, F32, 'rn', () => 1)).toBe(1 + 2 ** -23);
    expect(roundToFormat(midpoint, F32, 'rn', () => -1)).toBe(1);
    expect(roundToFormat(-midpoint, F32, 'rn', () => -1)).toBe(-(1 + 2 ** -23));
    expect(roundToFormat(0, F32, 'rp', () => 1)).toBe(2 ** -149);
    expect(
      Object.is(
        roundToFormat(0, F32, 'rp', () => -1),
        -0,
      ),
    ).toBe(true);
    expect(roundToFormat(0, F32, 'rm', () => -1)).toBe(-(2 ** -149));
  });

  it('overflows by mode', () => {
    const huge = 2 ** 200;
    expect(roundToFormat(huge, F32, 'rn')).toBe(Infinity);
    expect(roundToFormat(huge, F32, 'rz')).toBe(F32.maxFinite);
    expect(roundToFormat(-huge, F32, 'rp')).toBe(-F32.maxFinite);
    expect(roundToFormat(-huge, F32, 'rm')).toBe(-Infinity);
    expect(roundToFormat(65520, F16, 'rn')).toBe(Infinity);
    expect(roundToFormat(65519.99, F16, 'rn')).toBe(65504);
    expect(roundToFormat(Number.MAX_VALUE, F64, 'rp', () => 1)).toBe(Infinity);
    expect(roundToFormat(Number.MAX_VALUE, F64, 'rz', () => 1)).toBe(Number.MAX_VALUE);
  });

  it('rounds to f16 and bf16 subnormals with ties to even', () => {
    expect(roundToFormat(2 ** -25, F16, 'rn')).toBe(0);
    expect(roundToFormat(3 * 2 ** -25, F16, 'rn')).toBe(2 ** -23);
    expect(roundToFormat(2 ** -25, F16, 'rp')).toBe(2 ** -24);
    expect(roundToFormat(1 + 2 ** -8, BF16, 'rn')).toBe(1);
    expect(roundToFormat(1 + 3 * 2 ** -8, BF16, 'rn')).toBe(1 + 2 ** -6);
  });

  it('steps f64 by its residual', () => {
    expect(roundToFormat(1, F64, 'rm', () => -1)).toBe(1 - 2 ** -53);
    expect(roundToFormat(1, F64, 'rp', () => 1)).toBe(1 + 2 ** -52);
    expect(roundToFormat(5e-324, F64, 'rz', () => -1)).toBe(0);
  });
});

describe('roundDyadic', () => {
  it('matches Number(bigint) (nearest even) and rounds directed modes around it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 80n), max: 1n << 80n }), (value) => {
        const nearest = roundDyadic(dyadicOfInteger(value), F64, 'rn');
        const down = roundDyadic(dyadicOfInteger(value), F64, 'rm');
        const up = roundDyadic(dyadicOfInteger(value), F64, 'rp');
        const exact = BigInt(Number(value)) === value;
        return (
          nearest === Number(value) &&
          (exact ? down === up : BigInt(down) < value && BigInt(up) > value) &&
          BigInt(down) <= value &&
          BigInt(up) >= value
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('rounds tiny values in the double subnormal range', () => {
    const value = { negative: false, mantissa: 3n, exponent: -1076 };
    expect(roundDyadic(value, F64, 'rn')).toBe(5e-324);
    expect(roundDyadic({ ...value, mantissa: 1n, exponent: -1075 }, F64, 'rn')).toBe(0);
    expect(roundDyadic({ ...value, mantissa: 1n, exponent: -1080 }, F64, 'rp')).toBe(5e-324);
    expect(roundDyadic({ ...value, mantissa: 1n, exponent: 1100 }, F64, 'rz')).toBe(
      Number.MAX_VALUE,
    );
  });
});

describe('helpers', () => {
  it('rounds to integral values keeping signed zeros', () => {
    expect([0.5, 1.5, 2.5, -0.5, -2.5].map((x) => roundToIntegral(x, 'rn'))).toEqual([
      0, 2, 2, -0, -2,
    ]);
    expect(Object.is(roundToIntegral(-0.5, 'rn'), -0)).toBe(true);
    expect(Object.is(roundToIntegral(-0.7, 'rp'), -0)).toBe(true);
    expect(roundToIntegral(-1.5, 'rz')).toBe(-1);
    expect(roundToIntegral(-1.5, 'rm')).toBe(-2);
  });

  it('gives the exact TwoSum error', () => {
    expect(twoSumError(1, 2 ** -60, 1 + 2 ** -60)).toBe(2 ** -60);
    expect(twoSumError(2 ** 60, -1, 2 ** 60 - 1)).toBe(-1);
  });
});
