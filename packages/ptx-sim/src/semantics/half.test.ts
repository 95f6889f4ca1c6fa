import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bf16FromBits, f16FromBits, f16ToBits } from './float-bits.js';
import { decodeAlu } from './index.js';
import { F16, roundToFormat } from './rounding.js';
import type { Bits } from './types.js';

function run(name: string, ...sources: Bits[]): Bits {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, sources.length + 1);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op.evaluate(sources)[0] ?? 0;
}
const h = (x: number): number => f16ToBits(roundToFormat(x, F16, 'rn'));
const value = (bits: Bits): number => f16FromBits(Number(bits));
const finiteF16 = fc.integer({ min: 0, max: 0xffff }).filter((bits) => (bits & 0x7c00) !== 0x7c00);

describe('f16 arithmetic', () => {
  it('add/mul are the exact result rounded once (double holds f16 sums and products exactly)', () => {
    fc.assert(
      fc.property(finiteF16, finiteF16, (a, b) => {
        const x = f16FromBits(a);
        const y = f16FromBits(b);
        return (
          run('add.f16', a, b) === h(x + y) &&
          run('mul.rn.f16', a, b) === h(x * y) &&
          run('sub.f16', a, b) === h(x - y)
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('fma rounds the exact a·b + c once', () => {
    fc.assert(
      fc.property(finiteF16, finiteF16, finiteF16, (a, b, c) => {
        // f16 products and sums span far fewer than 53 bits, so the double result is exact.
        return run('fma.rn.f16', a, b, c) === h(f16FromBits(a) * f16FromBits(b) + f16FromBits(c));
      }),
      { numRuns: 2000 },
    );
    // 1 + 2^-11 is the midpoint after 1: an unfused multiply would round 2^-11 · 1 first.
    expect(run('fma.rn.f16', h(1 + 2 ** -10), h(2 ** -11), h(1))).toBe(h(1 + 2 ** -10));
    expect(run('fma.rn.relu.f16', h(-2), h(3), h(1))).toBe(0);
    expect(run('fma.rn.sat.f16', h(2), h(3), h(1))).toBe(h(1));
  });

  it('works per half of f16x2 and bf16x2', () => {
    const packed = (low: number, high: number): number => ((h(high) << 16) | h(low)) >>> 0;
    expect(run('add.f16x2', packed(1, 2), packed(3, 4))).toBe(packed(4, 6));
    expect(run('mul.f16x2', packed(1.5, -2), packed(2, 2))).toBe(packed(3, -4));
    expect(run('fma.rn.f16x2', packed(1, 2), packed(3, 4), packed(1, 1))).toBe(packed(4, 9));
    expect(run('add.bf16x2', 0x40003f80, 0x3f803f80)).toBe(0x40404000);
    expect(bf16FromBits(Number(run('mul.rn.bf16', 0x3fc0, 0x4000)))).toBe(3);
  });

  it('overflow, NaN, .ftz and .sat', () => {
    expect(run('add.f16', h(65504), h(65504))).toBe(0x7c00);
    expect(run('add.f16', 0x7c00, 0xfc00)).toBe(0x7fff);
    expect(run('add.f16', 0x0001, 0x0001)).toBe(0x0002);
    expect(run('add.ftz.f16', 0x0001, 0x0001)).toBe(0);
    expect(run('mul.sat.f16', h(3), h(0.5))).toBe(h(1));
    expect(run('add.sat.f16', 0x7c00, 0xfc00)).toBe(0);
    expect(() => run('add.rz.f16', 0, 0)).toThrow(/rz/);
    expect(() => run('add.ftz.bf16', 0, 0)).toThrow(/bf16/);
  });
});

describe('f16 neg abs min max ex2 tanh', () => {
  it('neg/abs flip or clear sign bits', () => {
    expect(run('neg.f16', 0x3c00)).toBe(0xbc00);
    expect(run('abs.f16x2', 0xbc00bc00)).toBe(0x3c003c00);
    expect(run('neg.ftz.f16', 0x0001)).toBe(0x8000);
    expect(run('abs.bf16', 0xbf80)).toBe(0x3f80);
  });

  it('min/max follow the f32 NaN rules', () => {
    expect(run('min.f16', 0x7e00, h(2))).toBe(h(2));
    expect(run('max.NaN.f16', 0x7e00, h(2))).toBe(0x7fff);
    expect(run('min.f16', 0x0000, 0x8000)).toBe(0x8000);
    expect(run('max.f16x2', (h(1) << 16) | h(5), (h(3) << 16) | h(2))).toBe(
      ((h(3) << 16) | h(5)) >>> 0,
    );
    expect(run('max.xorsign.abs.f16', h(-3), h(2))).toBe(h(-3));
  });

  it('ex2 and tanh are rounded from double', () => {
    expect(value(run('ex2.approx.f16', h(3)))).toBe(8);
    expect(value(run('tanh.approx.f16', h(0.5)))).toBe(
      f16FromBits(h(Math.tanh(f16FromBits(h(0.5))))),
    );
    expect(() => run('ex2.approx.bf16', 0)).toThrow(/ftz/);
  });
});
