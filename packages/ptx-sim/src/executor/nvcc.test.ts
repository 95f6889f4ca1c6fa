import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { sectorEfficiency } from './counters.js';
import { formatFinding, type Finding } from './findings.js';
import { simulate } from './simulate.js';

// block-sum.sm_80.ptx is `nvcc -ptx -arch=sm_80 -O3 block-sum.cu` (CUDA 13.0), checked in so the
// test needs no nvcc: warp shuffles with __shfl_xor_sync, then __syncthreads and shared memory.
const source = readFileSync(new URL('../fixtures/block-sum.sm_80.ptx', import.meta.url), 'utf8');

const lineinfo = readFileSync(
  new URL('../fixtures/block-sum.lineinfo.sm_80.ptx', import.meta.url),
  'utf8',
);

describe('a kernel compiled by nvcc', () => {
  it.each([
    ['', source],
    [' (-lineinfo: .loc, .file and a .debug_str section)', lineinfo],
  ])('sums each block of x exactly as the CUDA code says, with no findings%s', (_name, source) => {
    const n = 1000;
    const block = 256;
    const blocks = Math.ceil(n / block);
    const x = new Float32Array(n).map((_, index) => Math.sin(index) * 10);
    const out = new Float32Array(blocks);
    const result = simulate(parsePtx(source), {
      grid: [blocks, 1, 1],
      block: [block, 1, 1],
      args: {
        block_sum_param_0: { kind: 'buffer', bytes: new Uint8Array(x.buffer) },
        block_sum_param_1: { kind: 'buffer', bytes: new Uint8Array(out.buffer) },
        block_sum_param_2: { kind: 'scalar', value: n },
      },
    });
    expect(result.findings).toEqual([]);
    for (let b = 0; b < blocks; b++) {
      let expected = 0;
      for (let i = b * block; i < Math.min(n, (b + 1) * block); i++) expected += x[i] as number;
      expect(out[b]).toBeCloseTo(expected, 3);
    }
    // Each x element is read once, in fully coalesced 4-byte loads.
    expect(result.counters.buffers['block_sum_param_0']?.bytesRead).toBe(n * 4);
    expect(sectorEfficiency(result.counters, ['block_sum_param_0'])).toBe(1);
    expect(result.counters.warpInstructions['shfl']).toBe(blocks * (8 * 5 + 5));
    expect(result.counters.warpInstructions['bar']).toBe(blocks * 8);
  });
});

describe('a planted bug compiled by nvcc -lineinfo', () => {
  // oob-lineinfo.cu: thread i reads x[i + 1], one float past x for the last thread.
  const planted = readFileSync(
    new URL('../fixtures/oob-lineinfo.sm_80.ptx', import.meta.url),
    'utf8',
  );

  it('is reported at its CUDA source line as well as its PTX line', () => {
    const x = new Float32Array(64);
    const result = simulate(parsePtx(planted), {
      grid: [2, 1, 1],
      block: [32, 1, 1],
      args: {
        shifted_copy_param_0: { kind: 'buffer', bytes: new Uint8Array(x.buffer) },
        shifted_copy_param_1: { kind: 'buffer', bytes: new Uint8Array(256) },
      },
    });
    expect(result.findings).toHaveLength(1);
    const [finding] = result.findings;
    expect(finding?.category).toBe('out-of-bounds');
    expect(finding?.instruction).toMatch(/^ld\.global\.f32/);
    expect(finding?.source).toBe('oob-lineinfo.cu:4:3');
    expect(formatFinding(finding as Finding)).toMatch(
      /^out-of-bounds at line \d+ \(oob-lineinfo\.cu:4:3\): 4-byte global read at byte 256 of/,
    );
  });

  it('names the call site of an inlined function', () => {
    const inlined = [
      '.version 7.0',
      '.target sm_80',
      '.address_size 64',
      '.visible .entry k(.param .u64 p)',
      '{',
      '.reg .b64 %rd<3>;',
      '.reg .f32 %f<2>;',
      '.loc 1 3 1',
      'ld.param.u64 %rd1, [p];',
      '.loc 2 10 3, function_name $L__info_string0, inlined_at 1 5 7',
      'ld.global.f32 %f1, [%rd1+4];',
      'ret;',
      '}',
      '.file 1 "/src/a.cu", 1700000000, 120',
      '.file 2 "/include/b.hpp"',
      '.section .debug_str',
      '{',
      '$L__info_string0:',
      '.b8 107,0',
      '}',
    ].join('\n');
    const result = simulate(parsePtx(inlined), {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { p: { kind: 'buffer', bytes: new Uint8Array(4) } },
    });
    expect(result.findings.map((finding) => finding.source)).toEqual([
      'b.hpp:10:3 inlined at a.cu:5:7',
    ]);
  });
});
