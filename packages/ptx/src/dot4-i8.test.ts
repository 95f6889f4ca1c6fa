import { describe, expect, it } from 'vitest';
import { defineKernel, ir } from '@forge/ir';
import { parsePtx, simulate } from '@forge/ptx-sim';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// Constant operands in each dp4a position: out[t] = dot(w, A, INT_MIN), out[4 + t] = dot(B, w, -7).
const DOT4_CONSTANTS = defineKernel(
  {
    id: 'dot4-constants',
    semanticVersion: 1,
    entryPoint: 'dot4_constants',
    description: 'dot4_i8 with immediate operands',
    buffers: [
      { group: 0, binding: 0, name: 'words', element: 'u32', access: 'read' },
      { group: 0, binding: 1, name: 'out', element: 'i32', access: 'read_write' },
    ],
    params: [],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '4', grid: ['1', '1', '1'] },
  },
  (b) => {
    const t = b.let('t', b.localId());
    const w = b.let('w', b.load('words', t));
    b.store('out', t, ir.dot4I8(w, 0x7f80ff01, -(2 ** 31)));
    b.store('out', ir.add(t, 4), ir.dot4I8(0x01ff7f80, w, -7));
  },
);

describe('dot4_i8 on PTX', () => {
  it('prints dp4a.s32.s32 with constants inline, assembles, and wraps on the simulator', () => {
    const shader = emitPtx(DOT4_CONSTANTS, {}, ptxTarget('sm_75'));
    expect(shader.source).toMatch(/dp4a\.s32\.s32 %r\d+, %r\d+, 2139160321, -2147483648;/);
    expect(shader.source).toMatch(/dp4a\.s32\.s32 %r\d+, 33521536, %r\d+, -7;/);
    expect(assemblePtx(shader.source, 'sm_75').diagnostics).toBe('');
    const words = new Uint32Array([0x01ff7f80, 0x7f80ff01, 0xffffffff, 0]);
    const out = new Int32Array(8);
    const result = simulate(parsePtx(shader.source), {
      grid: [1, 1, 1],
      block: [4, 1, 1],
      args: {
        param_words: { kind: 'buffer', bytes: new Uint8Array(words.buffer) },
        param_out: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
      },
    });
    expect(result.findings).toEqual([]);
    // Byte products: (-128, 127, -1, 1)·(1, -1, -128, 127) = 0, squares 32515, all -1 gives ±1.
    const min = -(2 ** 31);
    expect([...out]).toEqual([min, min + 32515, min + 1, min, 32508, -7, -6, -7]);
  });
});
