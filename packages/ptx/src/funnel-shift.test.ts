import { describe, expect, it } from 'vitest';
import { defineKernel, ir } from '@forge/ir';
import { parsePtx, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Thread t shifts hi:lo = 0x01234567:0x89abcdef by shifts[t], then lo = shifts[t] by t under the
// constant hi 0x80000007.
const FUNNEL_CONSTANTS = defineKernel(
  {
    id: 'funnel-constants',
    semanticVersion: 1,
    entryPoint: 'funnel_constants',
    description: 'funnel_shift_right with immediate operands',
    buffers: [
      { group: 0, binding: 0, name: 'shifts', element: 'u32', access: 'read' },
      { group: 0, binding: 1, name: 'out', element: 'u32', access: 'read_write' },
    ],
    params: [],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '4', grid: ['1', '1', '1'] },
  },
  (b) => {
    const t = b.let('t', b.localId());
    const shift = b.let('shift', b.load('shifts', t));
    b.store('out', t, ir.funnelShiftRight(0x89abcdef, 0x01234567, shift));
    b.store('out', ir.add(t, 4), ir.funnelShiftRight(shift, 0x80000007, t));
  },
);

describe('funnel_shift_right on PTX', () => {
  it('prints shf.r.clamp.b32 with constants inline, assembles, and shifts on the simulator', () => {
    const shader = emitPtx(FUNNEL_CONSTANTS, {}, ptxTarget('sm_75'));
    expect(shader.source).toMatch(/shf\.r\.clamp\.b32 %r\d+, 2309737967, 19088743, %r\d+;/);
    expect(shader.source).toMatch(/shf\.r\.clamp\.b32 %r\d+, %r\d+, 2147483655, %r\d+;/);
    expect(assemblePtx(shader.source, 'sm_75').diagnostics).toBe('');
    const shifts = new Uint32Array([0, 4, 16, 31]);
    const out = new Uint32Array(8);
    const result = simulate(parsePtx(shader.source), {
      grid: [1, 1, 1],
      block: [4, 1, 1],
      args: {
        param_shifts: { kind: 'buffer', bytes: new Uint8Array(shifts.buffer) },
        param_out: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
      },
    });
    expect(result.findings).toEqual([]);
    // 0x01234567_89abcdef >> 0, 4, 16, 31; then 0x80000007:shift >> t: hi's low t bits on top of
    // 0 >> 0, 4 >> 1, 16 >> 2, 31 >> 3.
    expect([...out].map((word) => word.toString(16))).toEqual([
      '89abcdef',
      '789abcde',
      '456789ab',
      '2468acf',
      '0',
      '80000002',
      'c0000004',
      'e0000003',
    ]);
  });
});
