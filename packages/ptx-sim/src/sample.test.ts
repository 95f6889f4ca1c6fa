import { describe, expect, it } from 'vitest';
import { parsePtx } from './parser/index.js';
import { simulate, type SimulationResult } from './executor/simulate.js';
import { sampleMismatch, scaleSample } from './sample.js';
import { GPUS, type GpuSpec } from './timing/gpu.js';

/** out[global id] = in[`index`]; `tail` runs before the store (a branch for the last block). */
function kernel(index: '%r1' | '%r3', tail: readonly string[] = []): string {
  return [
    '.version 8.0',
    '.target sm_80',
    '.address_size 64',
    '.visible .entry k(.param .u64 src, .param .u64 dst)',
    '{',
    '.reg .pred %p<2>;',
    '.reg .b32 %r<5>;',
    '.reg .f32 %f<4>;',
    '.reg .b64 %rd<8>;',
    'ld.param.u64 %rd1, [src];',
    'ld.param.u64 %rd2, [dst];',
    'mov.u32 %r4, %ctaid.x;',
    'mov.u32 %r2, %ntid.x;',
    'mov.u32 %r3, %tid.x;',
    'mad.lo.s32 %r1, %r4, %r2, %r3;',
    `mul.wide.u32 %rd3, ${index}, 4;`,
    'mul.wide.u32 %rd6, %r1, 4;',
    'add.s64 %rd4, %rd1, %rd3;',
    'add.s64 %rd5, %rd2, %rd6;',
    'ld.global.f32 %f1, [%rd4];',
    ...tail,
    'st.global.f32 [%rd5], %f1;',
    'ret;',
    '}',
  ].join('\n');
}

const GRID = 264;
const BLOCK = 256;

function run(source: string, sampleBlocks?: number, gpu?: GpuSpec): SimulationResult {
  return simulate(parsePtx(source), {
    grid: [GRID, 1, 1],
    block: [BLOCK, 1, 1],
    args: {
      src: { kind: 'buffer', bytes: new Uint8Array(GRID * BLOCK * 4) },
      dst: { kind: 'buffer', bytes: new Uint8Array(GRID * BLOCK * 4) },
    },
    ...(sampleBlocks === undefined ? {} : { sampleBlocks }),
    ...(gpu === undefined ? {} : { timing: { gpu, registers: 16 } }),
  });
}

describe('sampled estimates', () => {
  it('a copy sampled on 6 of 264 blocks scales to the whole run’s counters and estimate', () => {
    const whole = run(kernel('%r1'));
    const part = run(kernel('%r1'), 6);
    expect(part.sample?.blocks).toBe(6);
    expect(part.sample === undefined ? 'none' : sampleMismatch(part.sample)).toBeUndefined();
    const scaled = scaleSample(part);
    expect(scaled.warpInstructionsByClass).toEqual(whole.counters.warpInstructionsByClass);
    expect(scaled.buffers).toEqual(whole.counters.buffers);
    // The busiest SM replays sampled blocks in place of its own: the same work, the same time.
    for (const gpu of Object.values(GPUS)) {
      const wholeTime = run(kernel('%r1'), undefined, gpu).estimate;
      const partTime = run(kernel('%r1'), 6, gpu).estimate;
      expect(partTime?.sampled).toBe(true);
      expect(partTime?.dramBytes).toBe(wholeTime?.dramBytes);
      expect(partTime?.seconds).toBeCloseTo(wholeTime?.seconds ?? 0, 9);
      expect(partTime?.bound).toBe(wholeTime?.bound);
    }
  });

  it('data every block reads counts once in DRAM, as in the whole run', () => {
    const whole = run(kernel('%r3'));
    const scaled = scaleSample(run(kernel('%r3'), 4));
    expect(whole.counters.buffers['src']?.dramBytesRead).toBe(BLOCK * 4);
    expect(scaled.buffers['src']?.dramBytesRead).toBe(BLOCK * 4);
    expect(scaled.buffers['dst']).toEqual(whole.counters.buffers['dst']);
  });

  it('a last block that does different work is caught: the sample includes it', () => {
    // Every block but the last branches over one add: 8 warps × 15 instructions against 8 × 16.
    const branchy = [
      `setp.ne.u32 %p1, %r4, ${GRID - 1};`,
      '@%p1 bra $skip;',
      'add.f32 %f1, %f1, %f1;',
      '$skip:',
    ];
    const mismatch = run(kernel('%r1', branchy), 3).sample;
    expect(mismatch === undefined ? undefined : sampleMismatch(mismatch)).toBe(
      'the 3 sampled blocks issued 120 to 128 warp instructions each, not identical work',
    );
  });
});
