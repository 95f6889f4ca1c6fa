// The IR's 3-operand word ops on PTX, each with immediates in several positions: the printed
// instruction, ptxas, and 4 threads on the simulator against hand-computed results.
import { describe, expect, it } from 'vitest';
import { defineKernel, ir, type Expr, type VarExpr } from '@forge/ir';
import { parsePtx, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

interface WordOpCase {
  readonly op: string;
  readonly output: 'u32' | 'i32';
  /** out[t] and out[4 + t] from thread t and its input word w. */
  readonly results: (w: VarExpr<'u32'>, t: VarExpr<'u32'>) => readonly [Expr, Expr];
  readonly printed: readonly RegExp[];
  readonly input: readonly number[];
  /** out as the output type's values. */
  readonly expected: readonly number[];
}

const CASES: readonly WordOpCase[] = [
  {
    // out[t] = dot(w, A, INT_MIN), out[4 + t] = dot(B, w, -7). Byte products: (-128, 127, -1, 1)
    // · (1, -1, -128, 127) = 0, squares 32515, all -1 gives ±1.
    op: 'dot4_i8',
    output: 'i32',
    results: (w) => [ir.dot4I8(w, 0x7f80ff01, -(2 ** 31)), ir.dot4I8(0x01ff7f80, w, -7)],
    printed: [
      /dp4a\.s32\.s32 %r\d+, %r\d+, 2139160321, -2147483648;/,
      /dp4a\.s32\.s32 %r\d+, 33521536, %r\d+, -7;/,
    ],
    input: [0x01ff7f80, 0x7f80ff01, 0xffffffff, 0],
    expected: [-(2 ** 31), -(2 ** 31) + 32515, -(2 ** 31) + 1, -(2 ** 31), 32508, -7, -6, -7],
  },
  {
    // hi:lo = 0x01234567:0x89abcdef >> w; then lo = w under the constant hi 0x80000007, >> t: hi's
    // low t bits on top of 0 >> 0, 4 >> 1, 16 >> 2, 31 >> 3.
    op: 'funnel_shift_right',
    output: 'u32',
    results: (w, t) => [
      ir.funnelShiftRight(0x89abcdef, 0x01234567, w),
      ir.funnelShiftRight(w, 0x80000007, t),
    ],
    printed: [
      /shf\.r\.clamp\.b32 %r\d+, 2309737967, 19088743, %r\d+;/,
      /shf\.r\.clamp\.b32 %r\d+, %r\d+, 2147483655, %r\d+;/,
    ],
    input: [0, 4, 16, 31],
    expected: [
      0x89abcdef, 0x789abcde, 0x456789ab, 0x2468acf, 0, 0x80000002, 0xc0000004, 0xe0000003,
    ],
  },
  {
    // (a & mask) | (b & ~mask) with mask w; then each byte's top two bits from w and its low six
    // from w >> 2, under the constant mask 0xc0c0c0c0.
    op: 'bit_select',
    output: 'u32',
    results: (w) => [
      ir.bitSelect(w, 0x12345678, 0x9abcdef0),
      ir.bitSelect(0xc0c0c0c0, w, ir.shr(w, 2)),
    ],
    printed: [
      /lop3\.b32 %r\d+, %r\d+, 305419896, 2596069104, 0xCA;/,
      /lop3\.b32 %r\d+, 3233857728, %r\d+, %r\d+, 0xCA;/,
    ],
    input: [0, 0xffffffff, 0xffff0000, 0x0f0f0f0f],
    expected: [
      0x9abcdef0, 0x12345678, 0x1234def0, 0x92b4d6f8, 0, 0xffffffff, 0xffff0000, 0x3030303,
    ],
  },
];

describe.each(CASES)('$op on PTX', ({ op, output, results, printed, input, expected }) => {
  it('prints one instruction with constants inline, assembles, and computes on the simulator', () => {
    const spec = defineKernel(
      {
        id: 'word-op-constants',
        semanticVersion: 1,
        entryPoint: 'word_op_constants',
        description: `${op} with immediate operands`,
        buffers: [
          { group: 0, binding: 0, name: 'words', element: 'u32', access: 'read' },
          { group: 0, binding: 1, name: 'out', element: output, access: 'read_write' },
        ],
        params: [],
        shared: [],
        schedule: [],
        launch: { workgroupSize: '4', grid: ['1', '1', '1'] },
      },
      (b) => {
        const t = b.let('t', b.localId());
        const w = b.let('w', b.load('words', t));
        const [first, second] = results(w, t);
        b.store('out', t, first as Expr<typeof output>);
        b.store('out', ir.add(t, 4), second as Expr<typeof output>);
      },
    );
    const shader = emitPtx(spec, {}, ptxTarget('sm_75'));
    for (const pattern of printed) expect(shader.source).toMatch(pattern);
    expect(shader.source).not.toMatch(/\b(and|or|not)\.b32/);
    expect(assemblePtx(shader.source, 'sm_75').diagnostics).toBe('');
    const words = new Uint32Array(input);
    const out = output === 'i32' ? new Int32Array(8) : new Uint32Array(8);
    const result = simulate(parsePtx(shader.source), {
      grid: [1, 1, 1],
      block: [4, 1, 1],
      args: {
        param_words: { kind: 'buffer', bytes: new Uint8Array(words.buffer) },
        param_out: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
      },
    });
    expect(result.findings).toEqual([]);
    expect([...out]).toEqual(expected);
  });
});
