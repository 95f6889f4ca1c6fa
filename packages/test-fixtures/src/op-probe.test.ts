import { describe, expect, it } from 'vitest';
import {
  EXPR_OPS,
  ForgeError,
  SCALAR_TYPES,
  defineKernel,
  ir,
  type Expr,
  type ScalarType,
} from '@forge/ir';
import { OP_PROBES, OP_PROBE_VALUES } from './op-probe.js';
import { compareOpProbe, interpretOpProbe } from './op-probe-compare.js';
import { COMPUTE_OPS, type ComputeOp } from './op-types.js';

const one = (type: ScalarType): Expr => ir.constant(type, type === 'bool' ? true : 1);

/** Whether the validator accepts `op` on `from` operands declared as yielding `to`. */
function validates(op: ComputeOp, from: ScalarType, to: ScalarType): boolean {
  const args =
    op === 'shl' || op === 'shr' ? [one(from), one('u32')]
    : op === 'select' ? [one('bool'), one(from), one(from)]
    : op === 'fma' ? [one(from), one(from), one(from)]
    : op === 'dot4_i8' ? [one(from), one(from), one('i32')]
    : op === 'funnel_shift_right' ? [one(from), one(from), one('u32')]
    : op === 'bit_select' ? [one(from), one(from), one('u32')]
    : EXPR_OPS[op].arity === 1 ? [one(from)]
    : [one(from), one(from)]; // prettier-ignore
  const expression = { op, type: to, args, ...(op === 'unpack_half' ? { half: 0 } : {}) };
  try {
    defineKernel(
      {
        id: 'candidate',
        semanticVersion: 1,
        entryPoint: 'candidate',
        description: 'one op',
        buffers: [],
        params: [],
        shared: [],
        schedule: [],
        launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
      },
      (body) => void body.let('x', expression as unknown as Expr),
    );
    return true;
  } catch (error) {
    if (error instanceof ForgeError) return false;
    throw error;
  }
}

describe('OP_PROBES', () => {
  it('cover every op/type pair the validator accepts, and nothing else', () => {
    const accepted = COMPUTE_OPS.flatMap((op) =>
      SCALAR_TYPES.flatMap((from) =>
        SCALAR_TYPES.filter((to) => validates(op, from, to)).map((to) => `${op} ${from}->${to}`),
      ),
    );
    const covered = OP_PROBES.flatMap((probe) =>
      probe.cases.map((c) => `${c.op} ${c.from}->${c.to}`),
    );
    expect(covered.sort()).toEqual(accepted.sort());
    expect(new Set(covered.map((key) => key.split(' ')[0]))).toEqual(new Set(COMPUTE_OPS));
  });

  it('run every case on every pair of each type’s edge values', () => {
    for (const probe of OP_PROBES) {
      const values = OP_PROBE_VALUES[probe.type];
      expect(probe.pairs).toHaveLength(values.length ** 2);
    }
  });

  it('give the interpreter’s documented results on hand-checked inputs', () => {
    const i32 = OP_PROBES.find((probe) => probe.type === 'i32');
    if (i32 === undefined) throw new Error('no i32 probe');
    const out = interpretOpProbe(i32);
    const at = (op: string, a: number, b: number): number => {
      const slot = i32.cases.findIndex((c) => c.op === op);
      const pair = i32.pairs.findIndex(([x, y]) => x === a && y === b);
      return out[slot * i32.pairs.length + pair] ?? NaN;
    };
    expect(at('div', -(2 ** 31), -1)).toBe(0x80000000);
    expect(at('rem', -7, 2)).toBe(0xffffffff);
    expect(at('div', 7, 0)).toBe(7); // the probe divides by 1 where the divisor is 0
    expect(at('max', -1, 2)).toBe(2);
  });

  it('give dot4_i8 its hand-computed results, the accumulator a’s bits, wrapping', () => {
    const u32 = OP_PROBES.find((probe) => probe.type === 'u32');
    if (u32 === undefined) throw new Error('no u32 probe');
    const out = interpretOpProbe(u32);
    const slot = u32.cases.findIndex((c) => c.op === 'dot4_i8');
    const at = (a: number, b: number): number | undefined =>
      out[slot * u32.pairs.length + u32.pairs.findIndex(([x, y]) => x === a && y === b)];
    // Bytes (-1, -1, -1, 127) · (0, 0, 0, -128) = -16256, onto INT_MAX.
    expect(at(0x7fffffff, 0x80000000)).toBe(0x7fffc07f);
    // -16256 onto INT_MIN wraps to INT_MAX - 16255.
    expect(at(0x80000000, 0x7fffffff)).toBe(0x7fffc080);
    // 3 + 127 * 127 onto INT_MAX wraps to INT_MIN + 16131.
    expect(at(0x7fffffff, 0x7fffffff)).toBe(0x80003f03);
    // Four (-1) · (-1) onto -1.
    expect(at(0xffffffff, 0xffffffff)).toBe(3);
  });

  it('give funnel_shift_right its hand-computed results at the pair index & 31 shifts', () => {
    const u32 = OP_PROBES.find((probe) => probe.type === 'u32');
    if (u32 === undefined) throw new Error('no u32 probe');
    const out = interpretOpProbe(u32);
    const slot = u32.cases.findIndex((c) => c.op === 'funnel_shift_right');
    const at = (pair: number): number | undefined => out[slot * u32.pairs.length + pair];
    // Pairs 32 and 96 shift by 0: lo itself (2 under 0x7fffffff, 0x7fffffff under 0).
    expect([u32.pairs[32], at(32), u32.pairs[96], at(96)]).toEqual([[2, 0x7fffffff], 2, [0x7fffffff, 0], 0x7fffffff]); // prettier-ignore
    // Pair 105 shifts 0x80000000:0x7fffffff by 9; pair 118 0xfffffffe:0x80000000 by 22.
    expect([u32.pairs[105], at(105)]).toEqual([[0x7fffffff, 0x80000000], 0x003fffff]);
    expect([u32.pairs[118], at(118)]).toEqual([[0x80000000, 0xfffffffe], 0xfffffa00]);
    // Pair 127 shifts 1000:0xfffffffe by 31: hi << 1 plus lo's top bit.
    expect([u32.pairs[127], at(127)]).toEqual([[0xfffffffe, 1000], 2001]);
  });

  it('give bit_select its hand-computed results: b under mask a, ~(index & 31) elsewhere', () => {
    const u32 = OP_PROBES.find((probe) => probe.type === 'u32');
    if (u32 === undefined) throw new Error('no u32 probe');
    const out = interpretOpProbe(u32);
    const slot = u32.cases.findIndex((c) => c.op === 'bit_select');
    const at = (pair: number): number | undefined => out[slot * u32.pairs.length + pair];
    // Pairs 0 and 11 have mask 0: ~0 and ~11, whatever b is.
    expect([u32.pairs[0], at(0), u32.pairs[11], at(11)]).toEqual([[0, 0], 0xffffffff, [0, 0xffffffff], 0xfffffff4]); // prettier-ignore
    // Pair 139: mask 0xffffffff, all of b (1000); pair 103: bit 31 from ~7, the rest from b.
    expect([u32.pairs[139], at(139)]).toEqual([[0xffffffff, 1000], 1000]);
    expect([u32.pairs[103], at(103)]).toEqual([[0x7fffffff, 1000], 0x800003e8]);
    // Pair 69: b's low five bits (0) under mask 31, then ~5's bits from bit 5 up.
    expect([u32.pairs[69], at(69)]).toEqual([[31, 0x80000000], 0xffffffe0]);
  });

  it('report a flipped bit as a mismatch naming the op, the inputs and both results', () => {
    const probe = OP_PROBES[0];
    if (probe === undefined) throw new Error('no probe');
    const expected = interpretOpProbe(probe);
    const actual = expected.slice();
    actual[0] = (actual[0] ?? 0) ^ 1;
    const { mismatches } = compareOpProbe(probe, expected, actual);
    expect(mismatches).toHaveLength(1);
    expect(mismatches[0]?.case).toEqual(probe.cases[0]);
    const covered = compareOpProbe(probe, expected, actual, [{ reason: 'r', covers: () => true }]);
    expect(covered).toEqual({ mismatches: [], explained: { r: 1 }, approximate: 0 });
  });
});
