import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAlu } from './index.js';
import { mulHighS32, mulHighU32 } from './integer.js';
import type { Bits } from './types.js';

function run(name: string, ...sources: Bits[]): Bits {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, sources.length + 1);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op.evaluate(sources)[0] ?? 0;
}

const INT_MIN = 0x80000000;
const MINUS_ONE = 0xffffffff;
const u32 = fc.integer({ min: 0, max: 0xffffffff });

describe('add / sub', () => {
  it('wraps at every width', () => {
    expect(run('add.u32', 0xffffffff, 1)).toBe(0);
    expect(run('add.s32', 0x7fffffff, 1)).toBe(INT_MIN);
    expect(run('sub.u32', 0, 1)).toBe(MINUS_ONE);
    expect(run('add.u16', 0xffff, 2)).toBe(1);
    expect(run('sub.s16', 0, 1)).toBe(0xffff);
    expect(run('add.u64', 0xffffffffffffffffn, 2n)).toBe(1n);
    expect(run('sub.s64', 0n, 1n)).toBe(0xffffffffffffffffn);
    expect(run('add.s64', 0x7fffffffffffffffn, 1n)).toBe(0x8000000000000000n);
  });

  it('saturates .s32', () => {
    expect(run('add.sat.s32', 0x7fffffff, 1)).toBe(0x7fffffff);
    expect(run('sub.sat.s32', INT_MIN, 1)).toBe(INT_MIN);
    expect(run('add.sat.s32', MINUS_ONE, 5)).toBe(4);
    expect(() => run('add.sat.u32', 1, 1)).toThrow(/sat/);
    expect(() => run('add.cc.u32', 1, 1)).toThrow(/\.cc/);
  });

  it('adds packed 16-bit lanes', () => {
    expect(run('add.u16x2', 0xffff0001, 0x00010001)).toBe(0x00000002);
  });
});

describe('mul / mad', () => {
  it('.hi of 32-bit products matches bigint', () => {
    fc.assert(
      fc.property(u32, u32, (a, b) => {
        const unsigned = Number((BigInt(a) * BigInt(b)) >> 32n);
        const signed = Number(BigInt.asUintN(32, (BigInt(a | 0) * BigInt(b | 0)) >> 32n));
        return mulHighU32(a, b) === unsigned && mulHighS32(a, b) === signed;
      }),
      { numRuns: 3000 },
    );
  });

  it('.lo .hi .wide at 16, 32 and 64 bits', () => {
    expect(run('mul.lo.u32', 0x10000, 0x10000)).toBe(0);
    expect(run('mul.hi.u32', 0x10000, 0x10000)).toBe(1);
    expect(run('mul.lo.s32', MINUS_ONE, 7)).toBe(0xfffffff9);
    expect(run('mul.hi.s32', MINUS_ONE, 7)).toBe(MINUS_ONE);
    expect(run('mul.wide.u32', MINUS_ONE, MINUS_ONE)).toBe(0xfffffffe00000001n);
    expect(run('mul.wide.s32', MINUS_ONE, 2)).toBe(0xfffffffffffffffen);
    expect(run('mul.wide.u16', 0xffff, 0xffff)).toBe(0xfffe0001);
    expect(run('mul.wide.s16', 0xffff, 0x0003)).toBe(0xfffffffd);
    expect(run('mul.hi.s16', 0x8000, 0x8000)).toBe(0x4000);
    expect(run('mul.lo.u64', 0xffffffffffffffffn, 3n)).toBe(0xfffffffffffffffdn);
    expect(run('mul.hi.u64', 0xffffffffffffffffn, 3n)).toBe(2n);
    expect(run('mul.hi.s64', 0xffffffffffffffffn, 3n)).toBe(0xffffffffffffffffn);
    expect(() => run('mul.wide.u64', 1n, 1n)).toThrow(/wide/);
    expect(() => run('mul.u32', 1, 1)).toThrow(/\.lo/);
  });

  it('mad adds the third operand in the result width', () => {
    expect(run('mad.lo.s32', 3, 4, 5)).toBe(17);
    expect(run('mad.lo.u32', MINUS_ONE, 2, 3)).toBe(1);
    expect(run('mad.wide.u32', MINUS_ONE, 2, 1n)).toBe(0x1ffffffffn);
    expect(run('mad.hi.u32', 0x80000000, 4, 1)).toBe(3);
    expect(run('mad.hi.sat.s32', 0x7fffffff, 0x7fffffff, 0x7fffffff)).toBe(0x7fffffff);
    expect(run('mad.lo.u64', 2n, 3n, 0xffffffffffffffffn)).toBe(5n);
  });

  it('mul24 and mad24 use 24-bit operands', () => {
    expect(run('mul24.lo.u32', 0x01000002, 3)).toBe(6);
    expect(run('mul24.lo.s32', 0x00ffffff, 2)).toBe(0xfffffffe);
    expect(run('mul24.hi.u32', 0x00ffffff, 0x00ffffff)).toBe(0xfffffe00);
    expect(run('mad24.lo.u32', 2, 3, 4)).toBe(10);
  });
});

describe('div / rem', () => {
  it('truncates toward zero and defines the edge cases', () => {
    expect(run('div.s32', -7 >>> 0, 2)).toBe(-3 >>> 0);
    expect(run('rem.s32', -7 >>> 0, 2)).toBe(-1 >>> 0);
    expect(run('div.u32', MINUS_ONE, 2)).toBe(0x7fffffff);
    expect(run('rem.u32', MINUS_ONE, 10)).toBe(5);
    expect(run('div.s32', INT_MIN, MINUS_ONE)).toBe(INT_MIN);
    expect(run('rem.s32', INT_MIN, MINUS_ONE)).toBe(0);
    expect(run('div.u32', 5, 0)).toBe(MINUS_ONE);
    expect(run('div.s32', 5, 0)).toBe(MINUS_ONE);
    expect(run('rem.u32', 5, 0)).toBe(5);
    expect(run('div.s64', 0x8000000000000000n, 0xffffffffffffffffn)).toBe(0x8000000000000000n);
    expect(run('rem.s64', 0xfffffffffffffff9n, 2n)).toBe(0xffffffffffffffffn);
    expect(run('div.u64', 7n, 0n)).toBe(0xffffffffffffffffn);
    expect(run('div.u16', 0xffff, 0x100)).toBe(0xff);
    expect(run('div.s16', 0x8000, 0xffff)).toBe(0x8000);
  });

  it('agrees with bigint division for random 32-bit operands', () => {
    fc.assert(
      fc.property(u32, u32, (a, b) => {
        fc.pre(b !== 0);
        const signedQuotient = BigInt.asUintN(32, BigInt(a | 0) / BigInt(b | 0));
        return (
          run('div.u32', a, b) === Math.floor(a / b) &&
          BigInt(run('div.s32', a, b)) === signedQuotient
        );
      }),
      { numRuns: 2000 },
    );
  });
});

describe('abs / neg / min / max / sad', () => {
  it('handles INT_MIN and signedness', () => {
    expect(run('abs.s32', INT_MIN)).toBe(INT_MIN);
    expect(run('abs.s32', MINUS_ONE)).toBe(1);
    expect(run('neg.s32', 1)).toBe(MINUS_ONE);
    expect(run('neg.s16', 1)).toBe(0xffff);
    expect(run('neg.s64', 1n)).toBe(0xffffffffffffffffn);
    expect(run('abs.s64', 0x8000000000000000n)).toBe(0x8000000000000000n);
    expect(run('min.s32', MINUS_ONE, 1)).toBe(MINUS_ONE);
    expect(run('min.u32', MINUS_ONE, 1)).toBe(1);
    expect(run('max.s64', 0xffffffffffffffffn, 1n)).toBe(1n);
    expect(run('max.u64', 0xffffffffffffffffn, 1n)).toBe(0xffffffffffffffffn);
    expect(run('max.u16', 0x8000, 1)).toBe(0x8000);
    expect(run('min.relu.s32', MINUS_ONE, 5)).toBe(0);
    expect(run('max.s16x2', 0xffff0001, 0x00010000)).toBe(0x00010001);
    expect(run('sad.u32', 3, 10, 100)).toBe(107);
    expect(run('sad.s32', MINUS_ONE, 1, 0)).toBe(2);
    expect(() => run('neg.u32', 1)).toThrow(/\.u32/);
    expect(() => run('addc.u32', 1, 1)).toThrow(/carry/);
  });
});
