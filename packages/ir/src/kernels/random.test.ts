import { describe, expect, it } from 'vitest';
import { Rng, fillUniform, seedFromString, uniformF32 } from './random.js';

describe('Rng (mulberry32)', () => {
  it('gives the reference mulberry32 sequence, so every process and engine sees the same data', () => {
    const rng = new Rng(1);
    expect([rng.nextU32(), rng.nextU32(), rng.nextU32(), rng.nextU32()]).toEqual([
      2693262067, 11749833, 2265367787, 4213581821,
    ]);
    const other = new Rng(0xdeadbeef);
    expect([other.nextU32(), other.nextU32()]).toEqual([4043151706, 1147597007]);
  });

  it('is deterministic per seed and differs between seeds', () => {
    const draw = (seed: number): number[] => {
      const rng = new Rng(seed);
      return Array.from({ length: 8 }, () => rng.nextU32());
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    // Seeds are taken modulo 2^32.
    expect(draw(-1)).toEqual(draw(0xffffffff));
  });

  it('rejects non-integer seeds', () => {
    expect(() => new Rng(1.5)).toThrow(RangeError);
    expect(() => new Rng(Number.NaN)).toThrow(RangeError);
  });

  it('draws floats in [0, 1) and integers in an inclusive range, covering it', () => {
    const rng = new Rng(123);
    const seen = new Set<number>();
    let sum = 0;
    for (let index = 0; index < 10_000; index++) {
      const value = rng.nextFloat();
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      sum += value;
      const integer = rng.integer(-2, 3);
      expect(Number.isInteger(integer) && integer >= -2 && integer <= 3).toBe(true);
      seen.add(integer);
    }
    expect(sum / 10_000).toBeCloseTo(0.5, 1);
    expect([...seen].sort((a, b) => a - b)).toEqual([-2, -1, 0, 1, 2, 3]);
    expect(() => rng.integer(3, 2)).toThrow(RangeError);
  });
});

describe('seedFromString (FNV-1a)', () => {
  it('matches the FNV-1a reference values', () => {
    expect(seedFromString('')).toBe(0x811c9dc5);
    expect(seedFromString('a')).toBe(0xe40c292c);
    expect(seedFromString('foobar')).toBe(0xbf9cf968);
  });
});

describe('fillUniform and uniformF32', () => {
  it('fill with values within the magnitude, of both signs', () => {
    for (const magnitude of [1e-3, 1, 1e3]) {
      const values = uniformF32(2000, 99, magnitude);
      const largest = Math.max(...values.map(Math.abs));
      expect(largest).toBeLessThanOrEqual(Math.fround(magnitude));
      expect(largest).toBeGreaterThan(0.9 * magnitude);
      expect(values.some((value) => value < 0)).toBe(true);
      expect(values.some((value) => value > 0)).toBe(true);
    }
  });

  it('pins the first values for a seed', () => {
    expect([...uniformF32(4, 42)]).toEqual([
      0.2022075057029724, -0.10341887921094894, 0.7049316167831421, 0.3394680917263031,
    ]);
  });

  it('continues the generator across calls and rejects bad magnitudes', () => {
    const rng = new Rng(5);
    const first = fillUniform(new Float32Array(3), rng, 1);
    const second = fillUniform(new Float32Array(3), rng, 1);
    expect([...first]).not.toEqual([...second]);
    expect([...first, ...second]).toEqual([...uniformF32(6, 5)]);
    expect(() => fillUniform(new Float32Array(1), rng, -1)).toThrow(RangeError);
    expect(() => fillUniform(new Float32Array(1), rng, Infinity)).toThrow(RangeError);
  });
});
