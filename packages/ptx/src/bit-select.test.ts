import { describe, expect, it } from 'vitest';
import { defineKernel, ir } from '@forge/ir';
import { parsePtx, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Thread t selects 0x12345678's bits under masks[t] over 0x9abcdef0's, then the loaded mask's bits
// under the constant mask 0xc0c0c0c0 over those of the mask shifted right by 2.
const BIT_SELECT_CONSTANTS = defineKernel(
  {
    id: 'bit-select-constants',
    semanticVersion: 1,
    entryPoint: 'bit_select_constants',
    description: 'bit_select with immediate operands',
    buffers: [
      { group: 0, binding: 0, name: 'masks', element: 'u32', access: 'read' },
      { group: 0, binding: 1, name: 'out', element: 'u32', access: 'read_write' },
    ],
    params: [],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '4', grid: ['1', '1', '1'] },
  },
  (b) => {
    const t = b.let('t', b.localId());
    const mask = b.let('mask', b.load('masks', t));
    b.store('out', t, ir.bitSelect(mask, 0x12345678, 0x9abcdef0));
    b.store('out', ir.add(t, 4), ir.bitSelect(0xc0c0c0c0, mask, ir.shr(mask, 2)));
  },
);

describe('bit_select on PTX', () => {
  it('prints one lop3.b32 with immLut 0xCA, assembles, and selects on the simulator', () => {
    const shader = emitPtx(BIT_SELECT_CONSTANTS, {}, ptxTarget('sm_75'));
    expect(shader.source).toMatch(/lop3\.b32 %r\d+, %r\d+, 305419896, 2596069104, 0xCA;/);
    expect(shader.source).toMatch(/lop3\.b32 %r\d+, 3233857728, %r\d+, %r\d+, 0xCA;/);
    expect(shader.source).not.toMatch(/\b(and|or|not)\.b32/);
    expect(assemblePtx(shader.source, 'sm_75').diagnostics).toBe('');
    const masks = new Uint32Array([0, 0xffffffff, 0xffff0000, 0x0f0f0f0f]);
    const out = new Uint32Array(8);
    const result = simulate(parsePtx(shader.source), {
      grid: [1, 1, 1],
      block: [4, 1, 1],
      args: {
        param_masks: { kind: 'buffer', bytes: new Uint8Array(masks.buffer) },
        param_out: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
      },
    });
    expect(result.findings).toEqual([]);
    // (a & mask) | (b & ~mask) per thread; then each byte's top two bits from the mask word and
    // its low six from the word shifted right by 2.
    expect([...out].map((word) => word.toString(16))).toEqual([
      '9abcdef0',
      '12345678',
      '1234def0',
      '92b4d6f8',
      '0',
      'ffffffff',
      'ffff0000',
      '3030303',
    ]);
  });
});
