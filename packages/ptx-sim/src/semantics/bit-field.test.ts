import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { brev32, popc32, prmt } from './bit-field.js';
import { decodeAlu } from './index.js';
import type { Bits } from './types.js';

function run(name: string, ...sources: Bits[]): Bits {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, sources.length + 1);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op.evaluate(sources)[0] ?? 0;
}
const u32 = fc.integer({ min: 0, max: 0xffffffff });

describe('counting and reversal', () => {
  it('popc, clz, brev at 32 and 64 bits', () => {
    fc.assert(
      fc.property(u32, (a) => {
        const binary = a.toString(2).padStart(32, '0');
        return (
          popc32(a) === [...binary].filter((bit) => bit === '1').length &&
          brev32(a) === parseInt([...binary].reverse().join(''), 2)
        );
      }),
      { numRuns: 1000 },
    );
    expect(run('popc.b32', 0xffffffff)).toBe(32);
    expect(run('popc.b64', 0xffffffffffffffffn)).toBe(64);
    expect(run('clz.b32', 0)).toBe(32);
    expect(run('clz.b32', 1)).toBe(31);
    expect(run('clz.b64', 0n)).toBe(64);
    expect(run('clz.b64', 0x100000000n)).toBe(31);
    expect(run('brev.b32', 1)).toBe(0x80000000);
    expect(run('brev.b64', 1n)).toBe(0x8000000000000000n);
    expect(run('brev.b64', 0x8000000000000003n)).toBe(0xc000000000000001n);
  });

  it('bfind finds the most significant non-sign bit', () => {
    expect(run('bfind.u32', 0)).toBe(0xffffffff);
    expect(run('bfind.u32', 0x80000000)).toBe(31);
    expect(run('bfind.shiftamt.u32', 0x00010000)).toBe(15);
    expect(run('bfind.s32', 0xffffffff)).toBe(0xffffffff);
    expect(run('bfind.s32', 0xfffffff0)).toBe(3);
    expect(run('bfind.s32', 5)).toBe(2);
    expect(run('bfind.u64', 0x100000000n)).toBe(32);
    expect(run('bfind.s64', 0xffffffffffffffffn)).toBe(0xffffffff);
    expect(run('bfind.shiftamt.u64', 1n)).toBe(63);
  });
});

describe('bit fields', () => {
  it('bfe extracts and extends per the ISA', () => {
    expect(run('bfe.u32', 0x12345678, 8, 8)).toBe(0x56);
    expect(run('bfe.s32', 0x0000f000, 12, 4)).toBe(0xffffffff);
    expect(run('bfe.s32', 0x00007000, 12, 4)).toBe(7);
    expect(run('bfe.u32', 0xffffffff, 0, 0)).toBe(0);
    expect(run('bfe.s32', 0xffffffff, 0, 0)).toBe(0);
    // A field running past the msb takes the msb as its sign.
    expect(run('bfe.s32', 0x80000000, 28, 8)).toBe(0xfffffff8);
    expect(run('bfe.u32', 0x80000000, 28, 8)).toBe(0x8);
    // A start beyond the msb gives the replicated sign bit (the msb) for signed types.
    expect(run('bfe.s32', 0x80000000, 40, 4)).toBe(0xffffffff);
    expect(run('bfe.u32', 0x80000000, 40, 4)).toBe(0);
    // Position and length use only their low 8 bits.
    expect(run('bfe.u32', 0x12345678, 0x108, 0x208)).toBe(0x56);
    expect(run('bfe.s64', 0xf000000000000000n, 60, 4)).toBe(0xffffffffffffffffn);
    expect(run('bfe.u64', 0xf000000000000000n, 60, 8)).toBe(0xfn);
  });

  it('bfi inserts and drops bits past the msb', () => {
    expect(run('bfi.b32', 0xf, 0x12345678, 8, 4)).toBe(0x12345f78);
    expect(run('bfi.b32', 0xff, 0, 28, 8)).toBe(0xf0000000);
    expect(run('bfi.b32', 0xff, 7, 40, 8)).toBe(7);
    expect(run('bfi.b32', 0xff, 7, 0, 0)).toBe(7);
    expect(run('bfi.b64', 0xffn, 0n, 60, 8)).toBe(0xf000000000000000n);
  });

  it('bmsk and szext follow the ISA pseudocode', () => {
    expect(run('bmsk.wrap.b32', 1, 2)).toBe(6);
    expect(run('bmsk.clamp.b32', 32, 2)).toBe(0);
    expect(run('bmsk.clamp.b32', 4, 32)).toBe(0xfffffff0);
    expect(run('szext.wrap.u32', 0xffffffff, 0)).toBe(0);
    expect(run('szext.clamp.s32', 0x0000000f, 4)).toBe(0xffffffff);
    expect(run('szext.clamp.s32', 0x12345678, 40)).toBe(0x12345678);
    expect(run('szext.wrap.u32', 0x12345678, 8)).toBe(0x78);
  });
});

describe('prmt', () => {
  const a = 0x33221100;
  const b = 0x77665544;
  it('default mode picks bytes of {b, a} and replicates signs', () => {
    expect(run('prmt.b32', a, b, 0x3210)).toBe(a);
    expect(run('prmt.b32', a, b, 0x7654)).toBe(b);
    expect(run('prmt.b32', a, b, 0x0123)).toBe(0x00112233);
    expect(run('prmt.b32', 0x80, 0, 0x8880)).toBe(0xffffff80);
    expect(run('prmt.b32', 0x7f, 0, 0x0008)).toBe(0x7f7f7f00);
  });

  it('the specialized modes use c[1:0]', () => {
    expect([0, 1, 2, 3].map((c) => prmt(a, b, c, 'f4e'))).toEqual([
      0x33221100, 0x44332211, 0x55443322, 0x66554433,
    ]);
    expect([0, 1, 2, 3].map((c) => prmt(a, b, c, 'b4e'))).toEqual([
      0x55667700, 0x66770011, 0x77001122, 0x00112233,
    ]);
    expect([0, 1, 2, 3].map((c) => prmt(a, b, c, 'rc8'))).toEqual([
      0x00000000, 0x11111111, 0x22222222, 0x33333333,
    ]);
    expect([0, 1, 2, 3].map((c) => prmt(a, b, c, 'ecl'))).toEqual([
      0x33221100, 0x33221111, 0x33222222, 0x33333333,
    ]);
    expect([0, 1, 2, 3].map((c) => prmt(a, b, c, 'ecr'))).toEqual([
      0x00000000, 0x11111100, 0x22221100, 0x33221100,
    ]);
    expect([0, 1, 2, 3].map((c) => prmt(a, b, c, 'rc16'))).toEqual([
      0x11001100, 0x33223322, 0x11001100, 0x33223322,
    ]);
    expect(run('prmt.b32.f4e', a, b, 5)).toBe(0x44332211);
  });
});

describe('dot products', () => {
  it('dp4a with unsigned and signed bytes', () => {
    expect(run('dp4a.u32.u32', 0x01020304, 0x01010101, 10)).toBe(20);
    expect(run('dp4a.s32.s32', 0xffffffff, 0x01010101, 0)).toBe(0xfffffffc);
    expect(run('dp4a.s32.u32', 0x000000ff, 0x000000ff, 0)).toBe(-255 >>> 0);
    expect(run('dp4a.u32.u32', 0xffffffff, 0xffffffff, 0xffffffff)).toBe((4 * 255 * 255 - 1) >>> 0);
  });

  it('dp2a takes the low or high bytes of b', () => {
    expect(run('dp2a.lo.u32.u32', 0x00020003, 0x04030201, 0)).toBe(3 * 1 + 2 * 2);
    expect(run('dp2a.hi.u32.u32', 0x00020003, 0x04030201, 0)).toBe(3 * 3 + 2 * 4);
    expect(run('dp2a.lo.s32.s32', 0xffff0001, 0x0000ff01, 0)).toBe(2);
    expect(() => run('dp2a.u32.u32', 0, 0, 0)).toThrow(/\.lo/);
  });
});
