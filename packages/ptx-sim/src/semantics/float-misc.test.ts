import { describe, expect, it } from 'vitest';
import { F32_NAN, f32FromBits, f32ToBits, f64FromBits, f64ToBits } from './float-bits.js';
import { decodeAlu } from './index.js';
import type { Bits } from './types.js';

function run(name: string, ...sources: Bits[]): Bits {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, sources.length + 1);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op.evaluate(sources)[0] ?? 0;
}
const f = (x: number): number => f32ToBits(Math.fround(x));
const v = (bits: Bits): number => f32FromBits(Number(bits));
const f32 = (name: string, ...values: number[]): number => v(run(name, ...values.map(f)));

describe('neg, abs, copysign', () => {
  it('work on sign bits; .ftz flushes subnormals first', () => {
    expect(run('neg.f32', f(1))).toBe(f(-1));
    expect(run('neg.f32', f(0))).toBe(0x80000000);
    expect(run('abs.f32', f(-0))).toBe(0);
    expect(run('abs.f32', 0xff800000)).toBe(0x7f800000);
    expect(run('neg.ftz.f32', 0x00000001)).toBe(0x80000000);
    expect(run('abs.ftz.f32', 0x80000001)).toBe(0);
    expect(run('neg.f64', f64ToBits(2))).toBe(f64ToBits(-2));
    expect(run('abs.f64', f64ToBits(-2))).toBe(f64ToBits(2));
    expect(run('copysign.f32', f(-1), f(3))).toBe(f(-3));
    expect(run('copysign.f64', f64ToBits(1), f64ToBits(-3))).toBe(f64ToBits(3));
  });
});

describe('min / max', () => {
  it('return the non-NaN operand, order -0 below +0', () => {
    expect(f32('min.f32', NaN, 2)).toBe(2);
    expect(f32('max.f32', 2, NaN)).toBe(2);
    expect(run('min.f32', f(NaN), f(NaN))).toBe(F32_NAN);
    expect(run('min.NaN.f32', f(NaN), f(1))).toBe(F32_NAN);
    expect(Object.is(f32('min.f32', 0, -0), -0)).toBe(true);
    expect(Object.is(f32('max.f32', -0, 0), 0)).toBe(true);
    expect(f32('max.f32', -Infinity, -3)).toBe(-3);
    expect(f32('max.xorsign.abs.f32', -3, 2)).toBe(-3);
    expect(f32('min.xorsign.abs.f32', -3, -2)).toBe(2);
    expect(f32('min.ftz.f32', 2 ** -140, 1)).toBe(0);
    expect(f64FromBits(BigInt(run('max.f64', f64ToBits(NaN), f64ToBits(-1))))).toBe(-1);
    expect(() => run('min.xorsign.f32', 0, 0)).toThrow(/xorsign/);
  });

  it('three-input forms', () => {
    const op = decodeAlu('max', ['NaN', 'f32'], 4);
    expect(op?.evaluate([f(1), f(5), f(3)])).toEqual([f(5)]);
    expect(op?.evaluate([f(1), f(5), f(NaN)])).toEqual([F32_NAN]);
  });
});

describe('testp', () => {
  it('classifies with zero as normal', () => {
    expect(run('testp.normal.f32', f(0))).toBe(1);
    expect(run('testp.subnormal.f32', 1)).toBe(1);
    expect(run('testp.normal.f32', 1)).toBe(0);
    expect(run('testp.finite.f32', f(Infinity))).toBe(0);
    expect(run('testp.infinite.f64', f64ToBits(-Infinity))).toBe(1);
    expect(run('testp.notanumber.f32', 0x7fc00000)).toBe(1);
    expect(run('testp.number.f64', f64ToBits(1))).toBe(1);
  });
});

describe('sqrt, rsqrt, rcp and the approximate functions', () => {
  it('special values per the ISA tables', () => {
    expect(f32('rsqrt.approx.f32', -0)).toBe(-Infinity);
    expect(f32('rsqrt.approx.f32', Infinity)).toBe(0);
    expect(Number.isNaN(f32('rsqrt.approx.f32', -1))).toBe(true);
    expect(f32('rcp.approx.f32', -0)).toBe(-Infinity);
    expect(f32('lg2.approx.f32', 0)).toBe(-Infinity);
    expect(Number.isNaN(f32('lg2.approx.f32', -1))).toBe(true);
    expect(f32('ex2.approx.f32', -Infinity)).toBe(0);
    expect(f32('ex2.approx.ftz.f32', -0)).toBe(1);
    expect(Object.is(f32('sin.approx.f32', -0), -0)).toBe(true);
    expect(f32('cos.approx.f32', -0)).toBe(1);
    expect(Number.isNaN(f32('sin.approx.f32', Infinity))).toBe(true);
    expect(f32('tanh.approx.f32', -Infinity)).toBe(-1);
    expect(Object.is(f32('sqrt.approx.f32', -0), -0)).toBe(true);
  });

  it('approximations are the double result rounded once', () => {
    expect(f32('ex2.approx.f32', 10)).toBe(1024);
    expect(f32('ex2.approx.f32', -140)).toBe(2 ** -140);
    expect(f32('ex2.approx.ftz.f32', -140)).toBe(0);
    expect(f32('lg2.approx.f32', 0.125)).toBe(-3);
    expect(f32('sqrt.approx.f32', 2)).toBe(Math.fround(Math.SQRT2));
    expect(f32('rsqrt.approx.f32', 4)).toBe(0.5);
    expect(f32('sin.approx.f32', 1)).toBe(Math.fround(Math.sin(Math.fround(1))));
    expect(f32('rcp.rn.f32', 4)).toBe(0.25);
    expect(f32('rcp.rz.f32', 3)).toBe(f32FromBits(0x3eaaaaaa));
    expect(f32('sqrt.rn.ftz.f32', 2 ** -140)).toBe(0);
  });

  it('f64 forms', () => {
    expect(f64FromBits(BigInt(run('rcp.rn.f64', f64ToBits(4))))).toBe(0.25);
    expect(f64FromBits(BigInt(run('rsqrt.approx.f64', f64ToBits(4))))).toBe(0.5);
    expect(run('rcp.approx.ftz.f64', f64ToBits(3))).toBe(f64ToBits(1 / 3) & 0xffffffff00000000n);
    expect(run('rsqrt.approx.ftz.f64', f64ToBits(NaN))).toBe(0x7fffffff00000000n);
    expect(f64FromBits(BigInt(run('rcp.approx.ftz.f64', f64ToBits(-5e-324))))).toBe(-Infinity);
    expect(() => run('sin.approx.f64', 0n)).toThrow(/approx/);
  });

  it('requires .approx or a rounding as the ISA does', () => {
    expect(() => run('sqrt.f32', 0)).toThrow(/approx/);
    expect(() => run('ex2.rn.f32', 0)).toThrow(/rounding/);
    expect(() => run('tanh.approx.ftz.f32', 0)).toThrow(/ftz/);
  });
});
