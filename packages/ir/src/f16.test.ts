import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { f16Bits, f16FromBits, roundToF16 } from './f16.js';

const isNaNBits = (bits: number): boolean => (bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0;

describe('f16FromBits', () => {
  it.each([
    [0x0000, 0],
    [0x3c00, 1],
    [0xc000, -2],
    [0x3555, 0.333251953125],
    [0x7bff, 65504],
    [0xfbff, -65504],
    [0x0400, 2 ** -14],
    [0x03ff, 1023 * 2 ** -24],
    [0x0001, 2 ** -24],
    [0x8001, -(2 ** -24)],
    [0x7c00, Infinity],
    [0xfc00, -Infinity],
  ])('decodes 0x%s', (bits, value) => {
    expect(f16FromBits(bits)).toBe(value);
  });

  it('decodes 0x8000 as negative zero and NaN patterns as NaN', () => {
    expect(Object.is(f16FromBits(0x8000), -0)).toBe(true);
    expect(f16FromBits(0x7e00)).toBeNaN();
    expect(f16FromBits(0x7c01)).toBeNaN();
    expect(f16FromBits(0xffff)).toBeNaN();
  });
});

describe('f16Bits', () => {
  it('round-trips every one of the 65536 bit patterns except NaNs', () => {
    let checked = 0;
    const mismatches: string[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = f16FromBits(bits);
      if (isNaNBits(bits)) {
        expect(Number.isNaN(value)).toBe(true);
        continue;
      }
      const back = f16Bits(value);
      if (back !== bits)
        mismatches.push(`0x${bits.toString(16)} -> ${value} -> 0x${back.toString(16)}`);
      checked++;
    }
    expect(mismatches).toEqual([]);
    expect(checked).toBe(65536 - 2 * 1023);
  });

  it('keeps NaN a NaN and the sign of zero', () => {
    expect(isNaNBits(f16Bits(Number.NaN))).toBe(true);
    expect(f16Bits(0)).toBe(0x0000);
    expect(f16Bits(-0)).toBe(0x8000);
  });

  it('rounds ties to even', () => {
    // Halfway between 1 (0x3c00, even) and 1 + 2^-10 (0x3c01): to 1.
    expect(f16Bits(1 + 2 ** -11)).toBe(0x3c00);
    // Halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
    expect(f16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    // Just past halfway rounds up.
    expect(f16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
    expect(f16Bits(-(1 + 2 ** -11))).toBe(0xbc00);
    // 2049 lies halfway between 2048 and 2050 (f16 steps by 2 there): to even 2048.
    expect(f16Bits(2049)).toBe(f16Bits(2048));
    expect(f16Bits(2051)).toBe(f16Bits(2052));
  });

  it('rounds a rounding carry into the exponent', () => {
    // 2 - 2^-12 is past halfway between 0x3fff (2 - 2^-10, mantissa all ones) and 2 (0x4000).
    expect(f16Bits(2 - 2 ** -12)).toBe(0x4000);
    expect(f16Bits(2 - 2 ** -10)).toBe(0x3fff);
    // The same carry out of the largest subnormal gives the smallest normal.
    expect(f16Bits(1023.75 * 2 ** -24)).toBe(0x0400);
  });

  it('converts through f32, as a GPU converting an f32 does', () => {
    // Just above the tie in a double, but exactly the tie once rounded to f32: ties to even.
    expect(f16Bits(1 + 2 ** -11 + 2 ** -40)).toBe(0x3c00);
  });

  it('handles subnormals, including ties to even and the boundary to normals', () => {
    expect(f16Bits(2 ** -24)).toBe(0x0001);
    expect(f16Bits(2 ** -25)).toBe(0x0000); // halfway between 0 and the smallest subnormal
    expect(f16Bits(1.5 * 2 ** -25)).toBe(0x0001);
    expect(f16Bits(3 * 2 ** -25)).toBe(0x0002); // halfway between 1 and 2 units: to even
    expect(f16Bits(5 * 2 ** -25)).toBe(0x0002); // halfway between 2 and 3 units: to even
    expect(f16Bits(2 ** -26)).toBe(0x0000);
    expect(f16Bits(-(2 ** -26))).toBe(0x8000);
    expect(f16Bits(1e-30)).toBe(0x0000);
    expect(f16Bits(1023 * 2 ** -24)).toBe(0x03ff);
    expect(f16Bits(1023.5 * 2 ** -24)).toBe(0x0400); // tie between 0x03ff and 0x0400 (even)
    expect(f16Bits(2 ** -14)).toBe(0x0400);
    expect(f16Bits(-(2 ** -24))).toBe(0x8001);
    expect(roundToF16(2 ** -24 * 0.75)).toBe(2 ** -24);
  });

  it('overflows to infinity past the largest finite value', () => {
    expect(f16Bits(65504)).toBe(0x7bff);
    expect(f16Bits(65519)).toBe(0x7bff); // below the halfway point 65520
    expect(f16Bits(65520)).toBe(0x7c00); // halfway, and 0x7bff is odd: to infinity
    expect(f16Bits(1e6)).toBe(0x7c00);
    expect(f16Bits(-1e6)).toBe(0xfc00);
    expect(f16Bits(3.4e38)).toBe(0x7c00);
    expect(f16Bits(1e300)).toBe(0x7c00);
    expect(f16Bits(Infinity)).toBe(0x7c00);
    expect(f16Bits(-Infinity)).toBe(0xfc00);
  });

  it('gives the nearest f16 to any f32 (ties to even)', () => {
    fc.assert(
      fc.property(fc.float({ min: -65504, max: 65504, noNaN: true }), (value) => {
        const bits = f16Bits(value);
        const rounded = f16FromBits(bits);
        const error = Math.abs(value - rounded);
        // Neighbours of the result in the same sign direction.
        for (const neighbour of [bits - 1, bits + 1]) {
          if (neighbour < 0 || neighbour > 0xffff || (neighbour & 0x7fff) > 0x7bff) continue;
          if ((neighbour & 0x8000) !== (bits & 0x8000)) continue;
          const other = Math.abs(value - f16FromBits(neighbour));
          expect(error).toBeLessThanOrEqual(other);
          if (error === other) expect(bits & 1).toBe(0);
        }
        if (value !== 0)
          expect(Math.sign(rounded) === Math.sign(value) || rounded === 0).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('roundToF16 agrees with the bit conversion', () => {
    expect(roundToF16(0.1)).toBe(f16FromBits(0x2e66));
    expect(roundToF16(1 / 3)).toBe(0.333251953125);
    expect(roundToF16(1e5)).toBe(Infinity);
  });
});
