import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { f16FromBits, f32FromBits, f32ToBits, f64FromBits, f64ToBits } from './float-bits.js';
import { decodeAlu } from './index.js';
import type { AluOp, Bits } from './types.js';

function decoded(name: string, operands = 2): AluOp {
  const [opcode = '', ...modifiers] = name.split('.');
  const op = decodeAlu(opcode, modifiers, operands);
  if (op === undefined) throw new Error(`not an ALU op: ${name}`);
  return op;
}
const run = (name: string, ...sources: Bits[]): Bits =>
  decoded(name, sources.length + 1).evaluate(sources)[0] ?? 0;
const fromF32 = (name: string, value: number): Bits => run(name, f32ToBits(Math.fround(value)));
const toF32 = (bits: Bits): number => f32FromBits(Number(bits));

describe('f16 ↔ f32', () => {
  it('round-trips all 65536 f16 patterns exactly (NaNs become the canonical NaN)', () => {
    const widen = decoded('cvt.f32.f16');
    const narrow = decoded('cvt.rn.f16.f32');
    const widen64 = decoded('cvt.f64.f16');
    const narrow64 = decoded('cvt.rz.f16.f64');
    const mismatches: number[] = [];
    for (let bits = 0; bits < 65536; bits++) {
      const wide = widen.evaluate([bits])[0] ?? 0;
      const isNaN = (bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0;
      const back = isNaN ? 0x7fff : bits;
      const exactWide = isNaN ? Number.isNaN(toF32(wide)) : toF32(wide) === f16FromBits(bits);
      if (!exactWide || narrow.evaluate([wide])[0] !== back) mismatches.push(bits);
      if (narrow64.evaluate([widen64.evaluate([bits])[0] ?? 0n])[0] !== back) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });

  it('rounds f32 → f16 to nearest even, including subnormals and overflow', () => {
    expect(fromF32('cvt.rn.f16.f32', 1 + 2 ** -11)).toBe(0x3c00);
    expect(fromF32('cvt.rn.f16.f32', 1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(fromF32('cvt.rn.f16.f32', 1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
    expect(fromF32('cvt.rn.f16.f32', 2 ** -25)).toBe(0x0000);
    expect(fromF32('cvt.rn.f16.f32', 3 * 2 ** -25)).toBe(0x0002);
    expect(fromF32('cvt.rn.f16.f32', -(2 ** -26))).toBe(0x8000);
    expect(fromF32('cvt.rn.f16.f32', 65520)).toBe(0x7c00);
    expect(fromF32('cvt.rn.f16.f32', 65519)).toBe(0x7bff);
    expect(fromF32('cvt.rz.f16.f32', 1e6)).toBe(0x7bff);
    expect(fromF32('cvt.rm.f16.f32', -1e6)).toBe(0xfc00);
    expect(fromF32('cvt.rp.f16.f32', 1 + 2 ** -20)).toBe(0x3c01);
    expect(fromF32('cvt.rn.f16.f32', Infinity)).toBe(0x7c00);
    expect(fromF32('cvt.rn.f16.f32', NaN)).toBe(0x7fff);
    expect(fromF32('cvt.rn.ftz.f16.f32', 2 ** -130)).toBe(0);
    expect(fromF32('cvt.rn.relu.f16.f32', -3)).toBe(0);
    expect(fromF32('cvt.rn.satfinite.f16.f32', 1e9)).toBe(0x7bff);
  });

  it('packs two f32 into f16x2 and bf16x2: a in the upper half, b in the lower', () => {
    const packed = run('cvt.rn.f16x2.f32', f32ToBits(1), f32ToBits(-2));
    expect(packed).toBe(0x3c00c000);
    expect(run('cvt.rz.bf16x2.f32', f32ToBits(1), f32ToBits(2))).toBe(0x3f804000);
  });
});

describe('bf16', () => {
  it('rounds f32 → bf16 and widens exactly', () => {
    expect(fromF32('cvt.rn.bf16.f32', 1 + 2 ** -8)).toBe(0x3f80);
    expect(fromF32('cvt.rn.bf16.f32', 1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(fromF32('cvt.rz.bf16.f32', 1.99)).toBe(0x3ffe);
    expect(fromF32('cvt.rn.bf16.f32', 3.4e38)).toBe(0x7f80);
    expect(toF32(run('cvt.f32.bf16', 0x3fc0))).toBe(1.5);
    expect(run('cvt.rn.bf16.f32', f32ToBits(NaN))).toBe(0x7fff);
  });
});

describe('f32 ↔ f64 and integral rounding', () => {
  it('narrows f64 in every mode', () => {
    const third = f64ToBits(1 / 3);
    expect(toF32(run('cvt.rn.f32.f64', third))).toBe(Math.fround(1 / 3));
    expect(f32ToBits(toF32(run('cvt.rz.f32.f64', third)))).toBe(0x3eaaaaaa);
    expect(f32ToBits(toF32(run('cvt.rp.f32.f64', third)))).toBe(0x3eaaaaab);
    expect(toF32(run('cvt.rn.f32.f64', f64ToBits(1e300)))).toBe(Infinity);
    expect(toF32(run('cvt.rz.f32.f64', f64ToBits(1e300)))).toBe(f32FromBits(0x7f7fffff));
    expect(toF32(run('cvt.rn.ftz.f32.f64', f64ToBits(1e-40)))).toBe(0);
    expect(toF32(run('cvt.rn.f32.f64', f64ToBits(1e-40)))).toBe(Math.fround(1e-40));
    expect(f64FromBits(BigInt(run('cvt.f64.f32', f32ToBits(Math.fround(0.1)))))).toBe(
      Math.fround(0.1),
    );
  });

  it('rounds to integral floats', () => {
    const cases: [string, number, number][] = [
      ['cvt.rni.f32.f32', 2.5, 2],
      ['cvt.rni.f32.f32', 3.5, 4],
      ['cvt.rni.f32.f32', -2.5, -2],
      ['cvt.rzi.f32.f32', -2.7, -2],
      ['cvt.rmi.f32.f32', -2.2, -3],
      ['cvt.rpi.f32.f32', 2.2, 3],
      ['cvt.rmi.f32.f32', 1e30, 1e30],
    ];
    for (const [name, input, expected] of cases)
      expect(toF32(fromF32(name, input))).toBe(Math.fround(expected));
    expect(Object.is(toF32(fromF32('cvt.rni.f32.f32', -0.25)), -0)).toBe(true);
    expect(f64FromBits(BigInt(run('cvt.rmi.f64.f64', f64ToBits(-0.5))))).toBe(-1);
    expect(toF32(fromF32('cvt.rni.ftz.f32.f32', 2 ** -130))).toBe(0);
    expect(toF32(fromF32('cvt.sat.f32.f32', 7))).toBe(1);
    expect(toF32(fromF32('cvt.ftz.f32.f32', -(2 ** -130)))).toBe(-0);
  });
});

describe('float → integer', () => {
  it('rounds, saturates and maps NaN to 0', () => {
    expect(fromF32('cvt.rni.s32.f32', 2.5)).toBe(2);
    expect(fromF32('cvt.rni.s32.f32', -3.5)).toBe(-4 >>> 0);
    expect(fromF32('cvt.rzi.s32.f32', -3.9)).toBe(-3 >>> 0);
    expect(fromF32('cvt.rmi.s32.f32', -3.1)).toBe(-4 >>> 0);
    expect(fromF32('cvt.rpi.u32.f32', 3.1)).toBe(4);
    expect(fromF32('cvt.rzi.s32.f32', 3e9)).toBe(0x7fffffff);
    expect(fromF32('cvt.rzi.s32.f32', -3e9)).toBe(0x80000000);
    expect(fromF32('cvt.rzi.u32.f32', -5)).toBe(0);
    expect(fromF32('cvt.rzi.u32.f32', 5e9)).toBe(0xffffffff);
    expect(fromF32('cvt.rzi.u8.f32', 300)).toBe(255);
    expect(fromF32('cvt.rzi.s8.f32', -300)).toBe(0x80);
    expect(fromF32('cvt.rzi.s16.f32', 40000)).toBe(0x7fff);
    expect(fromF32('cvt.rzi.s32.f32', NaN)).toBe(0);
    expect(fromF32('cvt.rzi.s32.f32', Infinity)).toBe(0x7fffffff);
    expect(fromF32('cvt.rzi.s64.f32', -Infinity)).toBe(0x8000000000000000n);
    expect(fromF32('cvt.rzi.u64.f32', 1e20)).toBe(0xffffffffffffffffn);
    expect(fromF32('cvt.rni.u64.f32', 2 ** 40 + 0.5)).toBe(1n << 40n);
    expect(run('cvt.rzi.s64.f64', f64ToBits(-(2 ** 62)))).toBe(BigInt.asUintN(64, -(1n << 62n)));
    expect(run('cvt.rni.s32.f16', 0xc100)).toBe(-2 >>> 0); // 0xc100 is -2.5
    expect(() => fromF32('cvt.s32.f32', 1)).toThrow(/rni/);
  });
});

describe('integer → float', () => {
  it('rounds 32- and 64-bit integers in every mode', () => {
    expect(toF32(run('cvt.rn.f32.u32', 0xffffffff))).toBe(2 ** 32);
    expect(toF32(run('cvt.rz.f32.u32', 0xffffffff))).toBe(2 ** 32 - 256);
    expect(toF32(run('cvt.rn.f32.s32', 0x80000000))).toBe(-(2 ** 31));
    expect(toF32(run('cvt.rn.f32.u32', 16777217))).toBe(16777216);
    expect(toF32(run('cvt.rp.f32.u32', 16777217))).toBe(16777218);
    expect(toF32(run('cvt.rn.f32.s64', 0xffffffffffffffffn))).toBe(-1);
    expect(toF32(run('cvt.rm.f32.s64', BigInt.asUintN(64, -((1n << 40n) + 1n))))).toBe(
      -(2 ** 40) - 2 ** 17,
    );
    expect(f64FromBits(BigInt(run('cvt.rn.f64.u64', 0xffffffffffffffffn)))).toBe(2 ** 64);
    expect(f64FromBits(BigInt(run('cvt.rz.f64.u64', 0xffffffffffffffffn)))).toBe(2 ** 64 - 2048);
    expect(run('cvt.rn.f16.s32', 70000)).toBe(0x7c00);
    expect(run('cvt.rn.f16.u16', 2049)).toBe(0x6800);
    expect(() => run('cvt.f32.s32', 1)).toThrow(/\.rn/);
  });

  it('matches Number(bigint) rounding for random 64-bit integers', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (value) => {
        return f64FromBits(BigInt(run('cvt.rn.f64.u64', value))) === Number(value);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('integer → integer', () => {
  it('extends by the source sign, chops, and saturates', () => {
    expect(run('cvt.s64.s32', 0xffffffff)).toBe(0xffffffffffffffffn);
    expect(run('cvt.u64.u32', 0xffffffff)).toBe(0xffffffffn);
    expect(run('cvt.u64.s32', 0xffffffff)).toBe(0xffffffffffffffffn);
    expect(run('cvt.u32.u64', 0x123456789n)).toBe(0x23456789);
    expect(run('cvt.s32.s8', 0x80)).toBe(0xffffff80);
    expect(run('cvt.u16.u32', 0x12345)).toBe(0x2345);
    expect(run('cvt.sat.u8.s32', 0xffffffff)).toBe(0);
    expect(run('cvt.sat.s8.s32', 1000)).toBe(0x7f);
    expect(run('cvt.sat.s32.u32', 0xffffffff)).toBe(0x7fffffff);
    expect(run('cvt.sat.u32.s64', 0xffffffffffffffffn)).toBe(0);
    expect(run('cvt.sat.s32.s64', 1n << 40n)).toBe(0x7fffffff);
    expect(() => run('cvt.rn.u32.u64', 1n)).toThrow(/rounding/);
  });
});
