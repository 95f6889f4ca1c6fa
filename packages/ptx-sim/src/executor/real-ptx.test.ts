import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PtxSyntaxError } from '../errors.js';
import { parsePtx } from '../parser/index.js';
import { MAX_DYNAMIC_SHARED_BYTES, simulate } from './simulate.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

/** An sm_80 module whose entry `k()` declares %r, %f and shared `f32 s[8]`, then runs `lines`. */
const withSharedArray = (...lines: string[]): string =>
  [
    '.version 8.0',
    '.target sm_80',
    '.address_size 64',
    '.visible .entry k()',
    '{',
    '.reg .b32 %r<2>;',
    '.reg .f32 %f<2>;',
    '.shared .align 4 .f32 s[8];',
    ...lines,
    '}',
  ].join('\n');

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

  it('mov of var[index] moves the element’s address, as ptxas does (ISA: arrays as operands)', () => {
    const source = [
      '.version 8.0',
      '.target sm_80',
      '.address_size 64',
      '.visible .entry k(.param .u64 out)',
      '{',
      '.reg .b32 %r<6>;',
      '.reg .b64 %rd<3>;',
      '.shared .align 8 .f64 pad[3];',
      '.shared .align 4 .f32 s[8];',
      'mov.u32 %r1, 5;',
      'mov.u32 %r2, s[3];',
      'mov.u32 %r3, s[%r1+1];',
      'mov.u32 %r4, s;',
      'sub.u32 %r2, %r2, %r4;',
      'sub.u32 %r3, %r3, %r4;',
      'ld.param.u64 %rd1, [out];',
      'cvta.to.global.u64 %rd2, %rd1;',
      'st.global.v2.u32 [%rd2], {%r2, %r3};',
      '}',
    ].join('\n');
    const out = new Uint8Array(8);
    const result = simulate(parsePtx(source), {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { out: { kind: 'buffer', bytes: out } },
    });
    expect(result.findings).toEqual([]);
    expect(Array.from(new Uint32Array(out.buffer))).toEqual([12, 24]);
  });

  it('parses var[reg], var[reg+imm] and var[imm] as array elements', () => {
    const module = parsePtx(
      withSharedArray(
        'st.shared.f32 s[%r1], %f1;',
        'st.shared.f32 s[%r1+4], %f1;',
        'ld.shared.f32 %f1, s[7];',
      ),
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
    const source = withSharedArray(line);
    expect(() => parsePtx(source)).toThrow(PtxSyntaxError);
    expect(() => parsePtx(source)).toThrow(message);
  });
});

// Two `.extern .shared` arrays after a static one: both start at one 16-byte aligned offset.
const DYNAMIC = [
  '.version 8.0',
  '.target sm_80',
  '.address_size 64',
  '.extern .shared .align 16 .b8 dyn_a[];',
  '.extern .shared .align 4 .b8 dyn_b[];',
  '.visible .entry k(.param .u64 out)',
  '{',
  '  .reg .b32 %r<6>;',
  '  .reg .b64 %rd<3>;',
  '  .shared .align 4 .b8 fixed[20];',
  '  mov.u32 %r1, %tid.x;',
  '  shl.b32 %r2, %r1, 2;',
  '  st.shared.u32 dyn_a[%r2], %r1;',
  '  bar.sync 0;',
  '  ld.shared.u32 %r3, dyn_b[%r2];',
  '  mov.u32 %r4, dyn_b;',
  '  mov.u32 %r5, fixed;',
  '  sub.u32 %r4, %r4, %r5;',
  '  ld.param.u64 %rd1, [out];',
  '  cvta.to.global.u64 %rd2, %rd1;',
  '  st.global.v2.u32 [%rd2], {%r3, %r4};',
  '  ret;',
  '}',
].join('\n');

describe('dynamic shared memory', () => {
  const run = (dynamicSharedBytes?: number) => {
    const out = new Uint8Array(8);
    const result = simulate(parsePtx(DYNAMIC), {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { out: { kind: 'buffer', bytes: out } },
      ...(dynamicSharedBytes === undefined ? {} : { dynamicSharedBytes }),
    });
    return { result, words: new Uint32Array(out.buffer) };
  };

  it('is sized by dynamicSharedBytes; every extern array starts after the static ones', () => {
    const { result, words } = run(4);
    expect(result.findings).toEqual([]);
    expect(words[0]).toBe(0);
    expect(words[1]).toBe(32); // 20 static bytes, rounded up to 16
  });

  it('is 0 bytes by default, so using it is an out-of-bounds finding', () => {
    const { result } = run();
    expect(result.findings.map((finding) => finding.category)).toEqual([
      'out-of-bounds',
      'out-of-bounds',
    ]);
    expect(result.findings[0]?.message).toMatch(/4-byte shared write at offset 32 of 32 bytes/);
  });

  it.each([-1, 1.5, MAX_DYNAMIC_SHARED_BYTES + 1])('rejects dynamicSharedBytes %s', (bytes) => {
    expect(() => run(bytes)).toThrow(/dynamicSharedBytes must be an integer in \[0, 232448\]/);
  });
});
