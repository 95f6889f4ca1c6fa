import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { F32_NAN, f32FromBits, f32ToBits, f64FromBits, f64ToBits } from './float-bits.js';
import { decodeAlu } from './index.js';
import type { Rounding } from './rounding.js';
import type { Bits } from './types.js';

/** Runs one lane of `name` (opcode.modifiers…) on the sources; returns the first result. */
function run(name: string, sources: readonly Bits[]): Bits {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, sources.length + 1);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op.evaluate(sources)[0] ?? 0;
}
const f32 = (name: string, ...values: number[]): number =>
  f32FromBits(
    Number(
      run(
        name,
        values.map((value) => f32ToBits(Math.fround(value))),
      ),
    ),
  );
const f64 = (name: string, ...values: number[]): number =>
  f64FromBits(
    BigInt(
      run(
        name,
        values.map((value) => f64ToBits(value)),
      ),
    ),
  );

// Independent exact reference: values as bigint numerators over 2^k, f32 neighbours by stepping bits.
type Exact = readonly [bigint, number];
function exact(x: number): Exact {
  let scaled = x;
  let k = 0;
  while (!Number.isInteger(scaled)) {
    scaled *= 2;
    k++;
  }
  return [BigInt(scaled), k];
}
const align = ([n, k]: Exact, to: number): bigint => n << BigInt(to - k);
const add = (a: Exact, b: Exact): Exact => {
  const k = Math.max(a[1], b[1]);
  return [align(a, k) + align(b, k), k];
};
const mul = (a: Exact, b: Exact): Exact => [a[0] * b[0], a[1] + b[1]];
const sign = (a: Exact): number => (a[0] > 0n ? 1 : a[0] < 0n ? -1 : 0);
const negate = (a: Exact): Exact => [-a[0], a[1]];

const nextUp = (y: number): number =>
  y === 0 ? f32FromBits(1) : f32FromBits(y > 0 ? f32ToBits(y) + 1 : f32ToBits(y) - 1);
/** Rounds the real v to f32, given `above(f)` = sign(f − v) and a double estimate of v. */
function reference(estimate: number, above: (f: number) => number, mode: Rounding): number {
  let lower = Math.fround(estimate);
  if (lower === Infinity) lower = f32FromBits(0x7f7fffff);
  if (lower === -Infinity) lower = -Infinity;
  while (lower !== -Infinity && above(lower) > 0) lower = -nextUp(-lower);
  while (nextUp(lower) !== Infinity && above(nextUp(lower)) <= 0) lower = nextUp(lower);
  if (lower !== -Infinity && above(lower) === 0) return lower;
  const upper = nextUp(lower);
  const positive = lower >= 0;
  if (mode === 'rz') return positive ? lower : upper;
  if (mode === 'rm') return lower;
  if (mode === 'rp') return upper;
  const low = lower === -Infinity ? -(2 ** 128) : lower;
  const high = upper === Infinity ? 2 ** 128 : upper;
  const side = above((low + high) / 2);
  if (side !== 0) return side > 0 ? lower : upper;
  return (f32ToBits(lower) & 1) === 0 ? lower : upper;
}

const finiteF32 = fc
  .integer({ min: 0, max: 0xffffffff })
  .map(f32FromBits)
  .filter((x) => Number.isFinite(x));
const nearOne = fc.float({ min: 0.5, max: 2, noNaN: true }).map((x) => Math.fround(x));
const operand = fc.oneof(
  finiteF32,
  nearOne,
  nearOne.map((x) => -x),
);
const modes = fc.constantFrom<Rounding>('rn', 'rz', 'rm', 'rp');
const same = (a: number, b: number): boolean => Object.is(a, b);

describe('f32 .rn against Math.fround of double results (no double rounding possible)', () => {
  it('add, sub, mul, div', () => {
    fc.assert(
      fc.property(operand, operand, (a, b) => {
        return (
          same(f32('add.rn.f32', a, b), Math.fround(a + b)) &&
          same(f32('sub.rn.f32', a, b), Math.fround(a - b)) &&
          same(f32('mul.rn.f32', a, b), Math.fround(a * b)) &&
          (b === 0 || same(f32('div.rn.f32', a, b), Math.fround(a / b)))
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('sqrt', () => {
    fc.assert(
      fc.property(finiteF32, (a) =>
        same(f32('sqrt.rn.f32', Math.abs(a)), Math.fround(Math.sqrt(Math.abs(a)))),
      ),
      {
        numRuns: 2000,
      },
    );
  });

  it('fma where a·b + c is exact in double', () => {
    fc.assert(
      fc.property(operand, operand, operand, (a, b, c) => {
        const sum = a * b + c;
        fc.pre(Number.isFinite(sum) && sum - c === a * b && sum - a * b === c);
        return same(f32('fma.rn.f32', a, b, c), Math.fround(sum));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('f32 in every rounding mode against exact arithmetic', () => {
  it('add and mul', () => {
    fc.assert(
      fc.property(operand, operand, modes, (a, b, mode) => {
        const sum = add(exact(a), exact(b));
        const product = mul(exact(a), exact(b));
        const addOk =
          sign(sum) === 0 ||
          f32(`add.${mode}.f32`, a, b) ===
            reference(a + b, (f) => sign(add(exact(f), negate(sum))), mode);
        const mulOk =
          sign(product) === 0 ||
          f32(`mul.${mode}.f32`, a, b) ===
            reference(a * b, (f) => sign(add(exact(f), negate(product))), mode);
        return addOk && mulOk;
      }),
      { numRuns: 1500 },
    );
  });

  it('fma', () => {
    fc.assert(
      fc.property(operand, operand, operand, modes, (a, b, c, mode) => {
        const value = add(mul(exact(a), exact(b)), exact(c));
        fc.pre(sign(value) !== 0);
        const expected = reference(a * b + c, (f) => sign(add(exact(f), negate(value))), mode);
        return f32(`fma.${mode}.f32`, a, b, c) === expected;
      }),
      { numRuns: 1500 },
    );
  });

  it('div and sqrt', () => {
    fc.assert(
      fc.property(operand, operand, modes, (a, b, mode) => {
        fc.pre(a !== 0 && b !== 0);
        // sign(f − a/b) = sign(f·b − a) · sign(b)
        const quotient = (f: number): number =>
          sign(add(mul(exact(f), exact(b)), negate(exact(a)))) * Math.sign(b);
        const root = (f: number): number =>
          sign(add(mul(exact(f), exact(f)), negate(exact(Math.abs(a)))));
        return (
          f32(`div.${mode}.f32`, a, b) === reference(a / b, quotient, mode) &&
          f32(`sqrt.${mode}.f32`, Math.abs(a)) === reference(Math.sqrt(Math.abs(a)), root, mode)
        );
      }),
      { numRuns: 1500 },
    );
  });
});

describe('f32 hand-checked cases', () => {
  it('fma rounds once where rounding through double would be wrong', () => {
    // a·b = 2^-24 + 2^-60: 1 + a·b is just above the midpoint 1 + 2^-24; a double rounds it onto the
    // midpoint, and ties-to-even would then give 1.
    const a = 4097 * 2 ** -36;
    const b = 16773121 * 2 ** -24;
    expect(f32('fma.rn.f32', a, b, 1)).toBe(1 + 2 ** -23);
    expect(f32('fma.rz.f32', a, b, 1)).toBe(1);
    expect(f32('fma.rp.f32', a, b, 1)).toBe(1 + 2 ** -23);
    expect(f32('fma.rn.f32', -a, b, -1)).toBe(-(1 + 2 ** -23));
    // a·b = 2^-24 − 2^-60 on top of an odd value: just below the midpoint, so it rounds down.
    expect(f32('fma.rn.f32', 262143 * 2 ** -30, 262145 * 2 ** -30, 1 + 2 ** -23)).toBe(
      1 + 2 ** -23,
    );
    expect(f32('mad.rn.f32', a, b, 1)).toBe(1 + 2 ** -23);
    expect(f32('mad.f32', a, b, 1)).toBe(1 + 2 ** -23);
  });

  it('directed rounding of simple quotients', () => {
    expect(f32('div.rz.f32', 1, 3)).toBe(f32FromBits(0x3eaaaaaa));
    expect(f32('div.rp.f32', 1, 3)).toBe(f32FromBits(0x3eaaaaab));
    expect(f32('div.rn.f32', 1, 3)).toBe(f32FromBits(0x3eaaaaab));
    expect(f32('div.rm.f32', -1, 3)).toBe(-f32FromBits(0x3eaaaaab));
    expect(f32('div.rz.f32', 6, 3)).toBe(2);
    expect(f32('rcp.rn.f32', 3)).toBe(Math.fround(1 / 3));
    expect(f32('add.rz.f32', 1, 2 ** -30)).toBe(1);
    expect(f32('add.rp.f32', 1, 2 ** -30)).toBe(1 + 2 ** -23);
    expect(f32('sub.rm.f32', 1, 2 ** -30)).toBe(1 - 2 ** -24);
  });

  it('NaN, infinities and signed zeros', () => {
    expect(run('add.f32', [f32ToBits(Infinity), f32ToBits(-Infinity)])).toBe(F32_NAN);
    expect(run('mul.rn.f32', [f32ToBits(0), f32ToBits(Infinity)])).toBe(F32_NAN);
    expect(run('add.f32', [0x7fc00001, f32ToBits(1)])).toBe(F32_NAN);
    expect(run('div.rn.f32', [f32ToBits(0), f32ToBits(0)])).toBe(F32_NAN);
    expect(f32('div.rn.f32', 1, 0)).toBe(Infinity);
    expect(f32('div.rn.f32', -1, 0)).toBe(-Infinity);
    expect(Object.is(f32('add.rn.f32', 1, -1), 0)).toBe(true);
    expect(Object.is(f32('add.rm.f32', 1, -1), -0)).toBe(true);
    expect(Object.is(f32('sub.rn.f32', -0, 0), -0)).toBe(true);
    expect(Object.is(f32('mul.rn.f32', -2, 0), -0)).toBe(true);
    expect(Object.is(f32('fma.rn.f32', -1, 0, 0), 0)).toBe(true);
    expect(Object.is(f32('fma.rn.f32', -1, 0, -0), -0)).toBe(true);
    expect(f32('add.rn.f32', 3e38, 3e38)).toBe(Infinity);
    expect(f32('add.rz.f32', 3e38, 3e38)).toBe(f32FromBits(0x7f7fffff));
    expect(Object.is(f32('sqrt.rn.f32', -0), -0)).toBe(true);
    expect(run('sqrt.rn.f32', [f32ToBits(-1)])).toBe(F32_NAN);
  });

  it('subnormals with and without .ftz', () => {
    const tiny = 2 ** -140;
    expect(f32('add.f32', tiny, tiny)).toBe(2 ** -139);
    expect(f32('add.ftz.f32', tiny, tiny)).toBe(0);
    expect(f32('mul.rn.f32', 2 ** -70, 2 ** -70)).toBe(2 ** -140);
    expect(f32('mul.rn.ftz.f32', 2 ** -70, 2 ** -70)).toBe(0);
    expect(Object.is(f32('mul.rn.ftz.f32', -(2 ** -70), 2 ** -70), -0)).toBe(true);
    expect(f32('mul.rn.f32', 2 ** -149, 0.5)).toBe(0);
    expect(f32('mul.rp.f32', 2 ** -149, 0.5)).toBe(2 ** -149);
    // .ftz flushes the subnormal input even though the exact result would be normal.
    expect(f32('fma.rn.ftz.f32', tiny, 2 ** 20, 0)).toBe(0);
    expect(f32('fma.rn.f32', tiny, 2 ** 20, 0)).toBe(2 ** -120);
  });

  it('.sat clamps to [0, 1] and flushes NaN to +0', () => {
    expect(f32('add.sat.f32', 0.75, 0.5)).toBe(1);
    expect(Object.is(f32('mul.sat.f32', -2, 3), 0)).toBe(true);
    expect(f32('fma.rn.sat.f32', 0.25, 2, 0.125)).toBe(0.625);
    expect(run('add.sat.f32', [f32ToBits(Infinity), f32ToBits(-Infinity)])).toBe(0);
  });

  it('div.approx and div.full', () => {
    expect(f32('div.approx.f32', 1, 3)).toBe(Math.fround(1 / 3));
    expect(f32('div.full.ftz.f32', 10, 4)).toBe(2.5);
    expect(f32('div.approx.f32', 1, 2 ** 127)).toBe(0);
    expect(Object.is(f32('div.approx.f32', -1, 2 ** 127), -0)).toBe(true);
    expect(Number.isNaN(f32('div.approx.f32', Infinity, 2 ** 127))).toBe(true);
  });
});

describe('f64', () => {
  it('.rn equals JS arithmetic', () => {
    const anyDouble = fc.double({ noNaN: true });
    fc.assert(
      fc.property(anyDouble, anyDouble, (a, b) => {
        return (
          same(f64('add.rn.f64', a, b), a + b) &&
          same(f64('mul.rn.f64', a, b), a * b) &&
          same(f64('div.rn.f64', a, b), a / b) &&
          same(f64('sqrt.rn.f64', Math.abs(a)), Math.sqrt(Math.abs(a)))
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('fma rounds once', () => {
    const a = 1 + 2 ** -52;
    const b = 1 - 2 ** -52;
    expect(f64('fma.rn.f64', a, b, -1)).toBe(-(2 ** -104));
    // 1/3 as a double is (2^54 − 1)/3 · 2^-54, so 3 · it − 1 = −2^-54 exactly.
    expect(f64('mad.rn.f64', 3, 1 / 3, -1)).toBe(-(2 ** -54));
    expect(f64('fma.rz.f64', 1, 1, 2 ** -60)).toBe(1);
    expect(f64('fma.rp.f64', 1, 1, 2 ** -60)).toBe(1 + 2 ** -52);
    expect(Object.is(f64('fma.rm.f64', 1, 1, -1), -0)).toBe(true);
  });

  it('directed modes', () => {
    // The nearest double to 1/3 lies below it.
    expect(f64('div.rz.f64', 1, 3)).toBe(1 / 3);
    expect(f64('div.rp.f64', 1, 3)).toBe(1 / 3 + 2 ** -54);
    expect(f64('div.rm.f64', -1, 3)).toBe(-(1 / 3 + 2 ** -54));
    expect(f64('mul.rm.f64', 1 / 3, 3)).toBe(1 - 2 ** -53);
    expect(f64('add.rp.f64', 1, 2 ** -80)).toBe(1 + 2 ** -52);
    // The nearest double to √2 lies above it.
    expect(f64('sqrt.rz.f64', 2)).toBe(Math.SQRT2 - 2 ** -52);
    expect(f64('sqrt.rp.f64', 2)).toBe(Math.SQRT2);
    expect(f64('mul.rz.f64', 1e300, 1e300)).toBe(Number.MAX_VALUE);
    expect(f64('mul.rp.f64', 1e-300, 1e-300)).toBe(5e-324);
  });

  it('propagates NaN payloads', () => {
    const payload = 0x7ff0000000000123n;
    expect(run('add.rn.f64', [payload, f64ToBits(1)])).toBe(0x7ff8000000000123n);
    expect(run('mul.rn.f64', [f64ToBits(0), f64ToBits(Infinity)])).toBe(0x7fffffffffffffffn);
  });
});

describe('decoding', () => {
  it('rejects what it does not implement', () => {
    expect(() => run('div.f32', [0, 0])).toThrow(/rounding/);
    expect(() => run('add.ftz.f64', [0n, 0n])).toThrow(/ftz/);
    expect(() => run('add.rn.f32x2', [0n, 0n])).toThrow(/unsupported/);
    expect(() => run('div.approx.rn.f32', [0, 0])).toThrow(/unsupported/);
  });

  it('sources and destinations are typed', () => {
    const op = decodeAlu('fma', ['rn', 'f32'], 4);
    expect(op?.sourceTypes).toEqual(['f32', 'f32', 'f32']);
    expect(op?.destinationTypes).toEqual(['f32']);
    expect(op?.family).toBe('fma');
  });
});
