import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAlu } from './index.js';
import { funnelShift, lop3 } from './logic.js';
import type { Bits } from './types.js';

function run(name: string, ...sources: Bits[]): readonly Bits[] {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, sources.length + 1);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op.evaluate(sources);
}
const one = (name: string, ...sources: Bits[]): Bits => run(name, ...sources)[0] ?? 0;
const u32 = fc.integer({ min: 0, max: 0xffffffff });

describe('bitwise', () => {
  it('and or xor not at every width and on predicates', () => {
    expect(one('and.b32', 0xf0f0f0f0, 0xff00ff00)).toBe(0xf000f000);
    expect(one('or.b16', 0x00f0, 0x0f00)).toBe(0x0ff0);
    expect(one('xor.b64', 0xffffffffffffffffn, 1n)).toBe(0xfffffffffffffffen);
    expect(one('not.b32', 0)).toBe(0xffffffff);
    expect(one('not.b16', 0x00ff)).toBe(0xff00);
    expect(one('not.b64', 0n)).toBe(0xffffffffffffffffn);
    expect(one('not.pred', 1)).toBe(0);
    expect(one('and.pred', 1, 0)).toBe(0);
    expect(one('xor.pred', 1, 1)).toBe(0);
    expect(one('cnot.b32', 0)).toBe(1);
    expect(one('cnot.b32', 7)).toBe(0);
    expect(one('cnot.b64', 0n)).toBe(1n);
  });
});

describe('shifts', () => {
  it('clamp amounts at the width', () => {
    expect(one('shl.b32', 1, 31)).toBe(0x80000000);
    expect(one('shl.b32', 1, 32)).toBe(0);
    expect(one('shl.b32', 1, 0xffffffff)).toBe(0);
    expect(one('shr.u32', 0x80000000, 31)).toBe(1);
    expect(one('shr.u32', 0x80000000, 32)).toBe(0);
    expect(one('shr.b32', 0x80000000, 40)).toBe(0);
    expect(one('shr.s32', 0x80000000, 31)).toBe(0xffffffff);
    expect(one('shr.s32', 0x80000000, 100)).toBe(0xffffffff);
    expect(one('shr.s32', 0x40000000, 100)).toBe(0);
    expect(one('shl.b16', 0x8001, 1)).toBe(0x0002);
    expect(one('shr.s16', 0x8000, 20)).toBe(0xffff);
    expect(one('shr.u16', 0x8000, 15)).toBe(1);
    expect(one('shl.b64', 1n, 63)).toBe(0x8000000000000000n);
    expect(one('shl.b64', 1n, 64)).toBe(0n);
    expect(one('shr.s64', 0x8000000000000000n, 64)).toBe(0xffffffffffffffffn);
    expect(one('shr.u64', 0x8000000000000000n, 63)).toBe(1n);
    expect(() => one('shl.u32', 1, 1)).toThrow(/\.u32/);
  });

  it('shl/shr agree with bigint for any amount', () => {
    fc.assert(
      fc.property(u32, fc.integer({ min: 0, max: 40 }), (a, n) => {
        const left = n >= 32 ? 0n : BigInt.asUintN(32, BigInt(a) << BigInt(n));
        const right = BigInt.asUintN(32, BigInt(a | 0) >> BigInt(Math.min(n, 32)));
        return BigInt(one('shl.b32', a, n)) === left && BigInt(one('shr.s32', a, n)) === right;
      }),
      { numRuns: 2000 },
    );
  });
});

describe('lop3', () => {
  it('computes the function the immLut was built from', () => {
    const [ta, tb, tc] = [0xf0, 0xcc, 0xaa];
    fc.assert(
      fc.property(u32, u32, u32, (a, b, c) => {
        return (
          lop3(a, b, c, ta & tb & tc) === (a & b & c) >>> 0 &&
          lop3(a, b, c, ta | tb | tc) === (a | b | c) >>> 0 &&
          lop3(a, b, c, ta & tb & ~tc & 0xff) === (a & b & ~c) >>> 0 &&
          lop3(a, b, c, ((ta & tb) | tc) ^ ta) === (((a & b) | c) ^ a) >>> 0 &&
          lop3(a, b, c, ta ^ tb ^ tc) === (a ^ b ^ c) >>> 0
        );
      }),
      { numRuns: 1000 },
    );
    expect(one('lop3.b32', 0xffffffff, 0, 0, 0xff)).toBe(0xffffffff);
    expect(one('lop3.b32', 0x12345678, 0, 0, 0x00)).toBe(0);
  });

  it('.or/.and with a d|p pair also write a predicate', () => {
    const op = decodeAlu('lop3', ['or', 'b32'], 6, [2, 1, 1, 1, 1, 1]);
    expect(op?.destinationTypes).toEqual(['b32', 'pred']);
    expect(op?.evaluate([1, 1, 0, 0x80, 0])).toEqual([0, 0]);
    expect(op?.evaluate([1, 1, 1, 0x80, 0])).toEqual([1, 1]);
    expect(op?.evaluate([1, 1, 0, 0x80, 1])).toEqual([0, 1]);
  });
});

describe('shf', () => {
  it('funnel shifts with .clamp and .wrap', () => {
    expect(one('shf.l.clamp.b32', 0x80000000, 0x00000001, 1)).toBe(0x00000003);
    expect(one('shf.r.clamp.b32', 0x00000002, 0x00000001, 1)).toBe(0x80000001);
    expect(one('shf.l.clamp.b32', 0xaaaaaaaa, 0x12345678, 40)).toBe(0xaaaaaaaa);
    expect(one('shf.r.clamp.b32', 0xaaaaaaaa, 0x12345678, 40)).toBe(0x12345678);
    expect(one('shf.l.wrap.b32', 0xaaaaaaaa, 0x12345678, 32)).toBe(0x12345678);
    expect(one('shf.r.wrap.b32', 0x12345678, 0x12345678, 8)).toBe(0x78123456);
    fc.assert(
      fc.property(u32, u32, fc.integer({ min: 0, max: 31 }), (a, b, n) => {
        const joined = (BigInt(b) << 32n) | BigInt(a);
        const left = Number(BigInt.asUintN(32, (joined << BigInt(n)) >> 32n));
        const right = Number(BigInt.asUintN(32, joined >> BigInt(n)));
        return (
          funnelShift(a, b, n, true, false) === left && funnelShift(a, b, n, false, true) === right
        );
      }),
      { numRuns: 1000 },
    );
  });
});
