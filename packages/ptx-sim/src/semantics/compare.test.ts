import { describe, expect, it } from 'vitest';
import { f32ToBits, f64ToBits } from './float-bits.js';
import { decodeAlu } from './index.js';
import type { Bits } from './types.js';

function run(name: string, sources: readonly Bits[], arity?: readonly number[]): readonly Bits[] {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, arity?.length ?? sources.length + 1, arity);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op.evaluate(sources);
}
const test = (name: string, ...sources: Bits[]): Bits => run(name, sources)[0] ?? 0;
const f = (x: number): number => f32ToBits(x);

describe('setp', () => {
  it('compares signed and unsigned integers', () => {
    expect(test('setp.lt.s32', 0xffffffff, 0)).toBe(1);
    expect(test('setp.lt.u32', 0xffffffff, 0)).toBe(0);
    expect(test('setp.lo.u32', 1, 2)).toBe(1);
    expect(test('setp.hs.u32', 2, 2)).toBe(1);
    expect(test('setp.hi.u64', 0xffffffffffffffffn, 1n)).toBe(1);
    expect(test('setp.gt.s64', 0xffffffffffffffffn, 1n)).toBe(0);
    expect(test('setp.ge.s16', 0x8000, 0x7fff)).toBe(0);
    expect(test('setp.eq.b32', 5, 5)).toBe(1);
    expect(test('setp.ne.b64', 5n, 5n)).toBe(0);
    expect(() => test('setp.lt.b32', 1, 2)).toThrow(/\.lt/);
    expect(() => test('setp.lo.s32', 1, 2)).toThrow(/\.lo/);
  });

  it('ordered comparisons are false on NaN, unordered ones true', () => {
    const nan = f(NaN);
    for (const cmp of ['eq', 'ne', 'lt', 'le', 'gt', 'ge']) {
      expect(test(`setp.${cmp}.f32`, nan, f(1))).toBe(0);
      expect(test(`setp.${cmp}u.f32`, nan, f(1))).toBe(1);
    }
    expect(test('setp.num.f32', f(1), f(2))).toBe(1);
    expect(test('setp.num.f32', f(1), nan)).toBe(0);
    expect(test('setp.nan.f32', nan, f(2))).toBe(1);
    expect(test('setp.ne.f32', f(1), f(2))).toBe(1);
    expect(test('setp.neu.f32', f(1), f(1))).toBe(0);
    expect(test('setp.eq.f32', f(0), f(-0))).toBe(1);
    expect(test('setp.lt.f64', f64ToBits(-1), f64ToBits(0))).toBe(1);
    expect(test('setp.gtu.f64', f64ToBits(NaN), f64ToBits(0))).toBe(1);
  });

  it('.ftz flushes subnormal inputs', () => {
    const tiny = f(2 ** -140);
    expect(test('setp.gt.f32', tiny, f(0))).toBe(1);
    expect(test('setp.gt.ftz.f32', tiny, f(0))).toBe(0);
  });

  it('combines with a predicate and writes the complement pair', () => {
    expect(test('setp.lt.and.s32', 1, 2, 1)).toBe(1);
    expect(test('setp.lt.and.s32', 1, 2, 0)).toBe(0);
    expect(test('setp.lt.or.s32', 3, 2, 1)).toBe(1);
    expect(test('setp.lt.xor.s32', 1, 2, 1)).toBe(0);
    expect(run('setp.lt.s32', [1, 2], [2, 1, 1])).toEqual([1, 0]);
    expect(run('setp.lt.and.s32', [1, 2, 1], [2, 1, 1, 1])).toEqual([1, 0]);
    expect(run('setp.lt.or.s32', [3, 2, 1], [2, 1, 1, 1])).toEqual([1, 1]);
    expect(() => test('setp.lt.and.s32', 1, 2)).toThrow(/operands/);
  });

  it('compares f16 and packed f16x2 halves', () => {
    expect(test('setp.lt.f16', 0x3c00, 0x4000)).toBe(1);
    expect(test('setp.lt.bf16', 0xbf80, 0x3f80)).toBe(1);
    // Low halves 1 < 2, high halves 2 < 1 false.
    expect(run('setp.lt.f16x2', [0x40003c00, 0x3c004000], [2, 1, 1])).toEqual([1, 0]);
  });
});

describe('set, selp, slct', () => {
  it('set writes all ones or 1.0f', () => {
    expect(test('set.lt.u32.s32', 0xffffffff, 0)).toBe(0xffffffff);
    expect(test('set.lt.f32.s32', 0xffffffff, 0)).toBe(0x3f800000);
    expect(test('set.gt.u32.f32', f(1), f(2))).toBe(0);
  });

  it('selp picks by predicate at any width', () => {
    expect(test('selp.b32', 1, 2, 1)).toBe(1);
    expect(test('selp.f32', f(1), f(2), 0)).toBe(f(2));
    expect(test('selp.u64', 1n, 2n, 0)).toBe(2n);
  });

  it('slct picks by the sign of c', () => {
    expect(test('slct.u32.s32', 1, 2, 0)).toBe(1);
    expect(test('slct.u32.s32', 1, 2, 0xffffffff)).toBe(2);
    expect(test('slct.f32.f32', 1, 2, f(-0))).toBe(1);
    expect(test('slct.f32.f32', 1, 2, f(NaN))).toBe(2);
    expect(test('slct.ftz.u32.f32', 1, 2, f(-(2 ** -140)))).toBe(1);
  });
});
