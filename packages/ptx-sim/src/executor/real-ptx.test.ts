import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PtxSyntaxError } from '../errors.js';
import { parsePtx } from '../parser/index.js';
import { simulate } from './simulate.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

describe('constructs of real compiler output', () => {
  it('array-indexed addresses scale by the element size, {0, %rs1} packs, griddepcontrol is a no-op', () => {
    const out = new Uint8Array(32 * 16);
    const result = simulate(parsePtx(fixture('array-index.sm_90.ptx')), {
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: { out: { kind: 'buffer', bytes: out } },
    });
    expect(result.findings).toEqual([]);
    const view = new DataView(out.buffer);
    for (let tid = 0; tid < 32; tid++) {
      expect(view.getFloat32(tid * 16, true)).toBe((tid + 1) & 31);
      expect(view.getFloat32(tid * 16 + 4, true)).toBe((tid & 7) + 2);
      expect(view.getFloat32(tid * 16 + 8, true)).toBe(3);
      expect(view.getUint32(tid * 16 + 12, true)).toBe((tid << 16) >>> 0);
    }
    expect(result.counters.warpInstructions['griddepcontrol']).toBe(2);
  });

  it('parses var[reg], var[reg+imm] and var[imm] as array elements', () => {
    const module = parsePtx(
      [
        '.version 8.0',
        '.target sm_80',
        '.address_size 64',
        '.visible .entry k()',
        '{',
        '.reg .b32 %r<2>;',
        '.reg .f32 %f<2>;',
        '.shared .align 4 .f32 s[8];',
        'st.shared.f32 s[%r1], %f1;',
        'st.shared.f32 s[%r1+4], %f1;',
        'ld.shared.f32 %f1, s[7];',
        '}',
      ].join('\n'),
    );
    const operands = module.entries[0]?.body.map((statement) =>
      statement.kind === 'instruction' ? statement.operands : [],
    );
    const base = { kind: 'symbol', name: 's' };
    expect(operands?.[0]?.[0]).toEqual({
      kind: 'address',
      base,
      offset: 0n,
      element: { register: '%r1', index: 0n },
    });
    expect(operands?.[1]?.[0]).toEqual({
      kind: 'address',
      base,
      offset: 0n,
      element: { register: '%r1', index: 4n },
    });
    expect(operands?.[2]?.[1]).toEqual({
      kind: 'address',
      base,
      offset: 0n,
      element: { index: 7n },
    });
  });

  it.each([
    ['st.shared.f32 s[%r1-4], %f1;', /expected '\]'/],
    ['st.shared.f32 s[x], %f1;', /array index 'x' is not a declared register/],
    ['mov.b32 %r1, {0, y};', /vector element 'y' is not a register/],
  ])('rejects %s', (line, message) => {
    const source = [
      '.version 8.0',
      '.target sm_80',
      '.address_size 64',
      '.visible .entry k()',
      '{',
      '.reg .b32 %r<2>;',
      '.reg .f32 %f<2>;',
      '.shared .align 4 .f32 s[8];',
      line,
      '}',
    ].join('\n');
    expect(() => parsePtx(source)).toThrow(PtxSyntaxError);
    expect(() => parsePtx(source)).toThrow(message);
  });
});
